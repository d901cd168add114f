#!/usr/bin/env bash
# tools/man.sh OUTDIR: builds the man pages of docs/man into OUTDIR/man1,
# OUTDIR/man3 and OUTDIR/man7 with go-md2man, and writes one redirect page
# OUTDIR/man3/<function>.3 (".so man3/<family>.3") for every PMIx_* function
# api/include/*.h declares, as docs/man/functions.txt maps it.
#
# Before it writes anything it checks that the table and the headers agree:
# every declared function has a family, every function of the table is
# declared, every family has its page (docs/man/<family>.3.md) and names the
# function in its NAME section, and every page's title line matches its file
# name. Any mismatch is an error naming what is wrong, so a function added to
# a header cannot go undocumented.
#
# Needs bash, coreutils, grep, sed, awk and go-md2man (Debian: go-md2man);
# no Bazel, no network. Prints nothing but errors and one summary line. The
# pages are not compressed; existing files of the same names in OUTDIR are
# replaced.
set -euo pipefail

me=man.sh
die() {
  echo "$me: $*" >&2
  exit 1
}

if [ $# -ne 1 ] || [ -z "$1" ]; then die "usage: tools/man.sh OUTDIR"; fi
out=$1
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
src=$repo/docs/man
table=$src/functions.txt
command -v go-md2man > /dev/null || die "go-md2man not found (Debian package go-md2man)"
[ -f "$table" ] || die "$table not found"

errors=0
error() {
  echo "$me: $*" >&2
  errors=$((errors + 1))
}

# The declared functions: every PMIx_* name followed by '(' in the headers.
declared=$(grep -ho 'PMIx_[A-Za-z0-9_]*[[:space:]]*(' "$repo"/api/include/*.h | sed 's/[[:space:]]*($//' | sort -u)
[ -n "$declared" ] || die "no PMIx_* function found in $repo/api/include/*.h"

# The table: "<function> <family>" lines; '#' comments and blank lines skipped.
mapping=$(awk -v file="docs/man/functions.txt" '
  { sub(/#.*/, "") }
  NF == 0 { next }
  NF != 2 || $1 !~ /^PMIx_[A-Za-z0-9_]+$/ || $2 !~ /^[a-z0-9_]+$/ {
    printf "%s:%d: not \"<PMIx_function> <family>\": %s\n", file, NR, $0 > "/dev/stderr"; bad = 1; next
  }
  seen[$1]++ { printf "%s:%d: %s is listed twice\n", file, NR, $1 > "/dev/stderr"; bad = 1; next }
  { print $1, $2 }
  END { exit bad }
' "$table") || die "fix docs/man/functions.txt"

while read -r fn; do
  grep -q "^$fn " <<< "$mapping" ||
    error "$fn is declared in api/include/*.h but has no family in docs/man/functions.txt"
done <<< "$declared"

while read -r fn family; do
  grep -qx "$fn" <<< "$declared" ||
    error "docs/man/functions.txt: $fn is not declared in api/include/*.h"
done <<< "$mapping"

# The NAME section of a page: the lines after "# NAME" up to the next section.
name_section() {
  awk '/^# / { on = ($0 == "# NAME"); next } on' "$1"
}

for family in $(awk '{ print $2 }' <<< "$mapping" | sort -u); do
  page=$src/$family.3.md
  if [ ! -f "$page" ]; then
    error "docs/man/functions.txt names family $family, but docs/man/$family.3.md does not exist"
    continue
  fi
  names=$(name_section "$page" | tr -cs 'A-Za-z0-9_' '\n')
  for fn in $(awk -v f="$family" '$2 == f { print $1 }' <<< "$mapping"); do
    grep -qx "$fn" <<< "$names" || error "docs/man/$family.3.md does not name $fn in its NAME section"
  done
done

# Every page: "<name>.<section>.md", a title line "% NAME SECTION ..." that
# matches it, and a NAME section of the form "name[, name...] - description"
# that names the page (a family page names its functions instead).
shopt -s nullglob
pages=("$src"/*.[1-9].md)
[ ${#pages[@]} -gt 0 ] || die "no page sources (docs/man/*.[1-9].md)"
for page in "${pages[@]}"; do
  base=$(basename "$page" .md)
  name=${base%.*}
  section=${base##*.}
  upper=$(tr '[:lower:]' '[:upper:]' <<< "$name")
  read -r percent title sec _ < "$page" || true
  [ "$percent" = % ] && [ "$title" = "$upper" ] && [ "$sec" = "$section" ] ||
    error "docs/man/$base.md: its first line must be '% $upper $section \"date\" \"PMIx-CXX\" \"manual\"'"
  if bad=$(grep -n "^[[:space:]]*[.']" "$page"); then
    error "docs/man/$base.md: a line starting with '.' or a quote would be read as a roff request: ${bad%%$'\n'*}"
  fi
  whatis=$(name_section "$page" | grep -m1 .) || whatis=
  if [ "$section" = 3 ] && grep -q " $name\$" <<< "$mapping"; then
    named=yes  # checked above: it names each of its functions
  elif [[ " ${whatis%% - *}," =~ [\ ,]$name, ]]; then
    named=yes
  else
    named=no
  fi
  [[ $whatis =~ ^[A-Za-z0-9_.,\ -]+\ -\ .+ ]] && [ "$named" = yes ] ||
    error "docs/man/$base.md: its NAME section must read '${name}[, ...] - description'"
done

[ "$errors" -eq 0 ] || die "$errors error(s): no pages written"

# Build. go-md2man sets no hyphenation before .TH, which .TH undoes: set it
# (and left-justified text, kinder to long identifiers) after it. In bold and
# constant-width text (options, names, identifiers) a '-' becomes '\-', where
# a line may not break: "--tag-output" and "pmix-cxx(7)" stay whole.
unbreak='
  /^[.\047]/ { print; next }
  {
    out = ""; keep = 0; n = length($0)
    for (i = 1; i <= n; i++) {
      c = substr($0, i, 1)
      if (c == "\\") {
        e = substr($0, i + 1, 1)
        if (e == "f") { f = substr($0, i + 2, 1); keep = (f == "B" || f == "C"); out = out substr($0, i, 3); i += 2 }
        else if (e == "(") { out = out substr($0, i, 4); i += 3 }
        else { out = out substr($0, i, 2); i += 1 }
      } else if (c == "-" && keep) { out = out "\\-" }
      else { out = out c }
    }
    print out
  }'

mkdir -p "$out/man1" "$out/man3" "$out/man7"
built=0
for page in "${pages[@]}"; do
  base=$(basename "$page" .md)
  section=${base##*.}
  mkdir -p "$out/man$section"
  go-md2man -in "$page" -out "$out/man$section/$base.tmp" || die "go-md2man failed on docs/man/$base.md"
  sed '/^\.TH /a\
.nh\
.ad l' "$out/man$section/$base.tmp" | awk "$unbreak" > "$out/man$section/$base"
  rm -f "$out/man$section/$base.tmp"
  built=$((built + 1))
done

links=0
while read -r fn family; do
  printf '.so man3/%s.3\n' "$family" > "$out/man3/$fn.3"
  links=$((links + 1))
done <<< "$mapping"

echo "$me: $built pages and $links function links in $out"
