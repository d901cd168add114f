#!/usr/bin/env bash
# Installs PMIx-CXX under a prefix, for hosts, clients, users and
# administrators outside Bazel (docs/install.md):
#   PREFIX/include/{pmix.h,pmix_common.h,pmix_server.h,pmix_tool.h,pmix_version.h}
#   PREFIX/lib/libpmix.so.2, libpmix.so -> libpmix.so.2, libpmix-server.so.2
#   PREFIX/lib/pkgconfig/pmix.pc   (pkg-config --cflags --libs pmix)
#   PREFIX/bin/{pmixrun,pmixd,pmixsim,pmix_info,pps,pquery,pevent}
#   PREFIX/lib/python3/dist-packages/pmix<suffix>   (import pmix), and where
#     that directory is not on Debian's python3's path, a .pth file naming it
#     in python3's site directory (for a prefix like /opt/pmix)
#   PREFIX/share/man/man{1,3,7}/   (man -M PREFIX/share/man PMIx_server_init)
#   PREFIX/share/pmix-cxx/installed   (what was installed: the list --uninstall reads)
# Usage: tools/install.sh [--no-build] [--library-only] PREFIX   (builds first unless --no-build;
#          --library-only: the headers, the two libraries and pmix.pc only)
#        tools/install.sh --uninstall PREFIX    (removes exactly what was installed)
# BAZEL_BIN names the tree of built files (default bazel-bin); PYTHON the
# interpreter the module is for (default /usr/bin/python3, the one it is built against).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
# shellcheck source=packaged.sh
source tools/packaged.sh
build=1
mode=install
library_only=0
while [ $# -gt 1 ]; do
  case "$1" in
    --no-build) build=0; shift ;;
    --library-only) library_only=1; shift ;;
    --uninstall) mode=uninstall; shift ;;
    *) break ;;
  esac
done
prefix=${1:?usage: tools/install.sh [--no-build] [--library-only] PREFIX | --uninstall PREFIX}
case "$prefix" in /*) ;; *) prefix=$(pwd)/$prefix ;; esac
prefix=${prefix%/}
manifest=$prefix/share/pmix-cxx/installed

if [ "$mode" = uninstall ]; then
  if [ ! -f "$manifest" ]; then
    echo "install: $manifest not found: nothing of ours is installed in $prefix" >&2
    exit 1
  fi
  # Files and links first, then the directories this install created,
  # deepest first, each only if it is empty (something else may live there).
  list=$(cat "$manifest")
  n=0
  while IFS=' ' read -r kind path; do
    [ "$kind" = file ] || continue
    rm -f -- "$path"; n=$((n + 1))
  done <<< "$list"
  dirs=$(echo "$list" | sed -n 's/^dir //p' | sort -r)
  while IFS= read -r d; do
    [ -n "$d" ] && rmdir -- "$d" 2>/dev/null || true
  done <<< "$dirs"
  echo "uninstalled $n files from $prefix"
  exit 0
fi

python=${PYTHON:-/usr/bin/python3}
if [ $build -eq 1 ] && [ $library_only -eq 1 ]; then
  bazel build //api:libpmix.so.2 //api:libpmix-server.so.2
elif [ $build -eq 1 ]; then
  bazel build "${packaged_targets[@]}"
fi
bin=${BAZEL_BIN:-bazel-bin}
case "$bin" in /*) ;; *) bin=$repo/$bin ;; esac
if [ -f "$manifest" ]; then
  echo "install: $prefix already holds an install ($manifest); run --uninstall first" >&2
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/pmix-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
: > "$work/list"
mkd() {  # mkdir -p, remembering each directory it creates
  local d=$1 missing=()
  while [ ! -d "$d" ]; do missing+=("$d"); d=$(dirname "$d"); done
  local i
  for ((i = ${#missing[@]} - 1; i >= 0; i--)); do
    mkdir -- "${missing[i]}"
    echo "dir ${missing[i]}" >> "$work/list"
  done
}
put() {  # put MODE SOURCE DEST: one file
  mkd "$(dirname "$3")"
  install -m "$1" "$2" "$3"
  echo "file $3" >> "$work/list"
}
link() {  # link TARGET DEST
  mkd "$(dirname "$2")"
  ln -sfn "$1" "$2"
  echo "file $2" >> "$work/list"
}

finish() {  # the list of what was installed, for --uninstall
  mkd "$(dirname "$manifest")"
  echo "file $manifest" >> "$work/list"
  cp "$work/list" "$manifest"
  echo "installed into $prefix: $(grep -c '^file ' "$manifest") files (pkg-config:" \
    "PKG_CONFIG_PATH=$prefix/lib/pkgconfig${pth:+; python3 finds pmix through $pth})"
}
pth=

for h in api/include/*.h; do put 0644 "$h" "$prefix/include/$(basename "$h")"; done
put 0755 "$bin/api/libpmix.so.2" "$prefix/lib/libpmix.so.2"
put 0755 "$bin/api/libpmix-server.so.2" "$prefix/lib/libpmix-server.so.2"
link libpmix.so.2 "$prefix/lib/libpmix.so"
put 0644 api/pmix.pc.in "$prefix/lib/pkgconfig/pmix.pc"
if [ $library_only -eq 1 ]; then
  finish
  exit 0
fi

# Bazel links each program with a run path into its own output tree; from
# PREFIX/bin the library is in PREFIX/lib.
for p in "${packaged_programs[@]}"; do
  dest=$prefix/bin/$(basename "$p")
  put 0755 "$bin/tools/$p" "$dest"
  chrpath -r '$ORIGIN/../lib' "$dest" > /dev/null
done

# The Python module under the name its interpreter looks for first.
suffix=$("$python" -c 'import importlib.machinery as m; print(m.EXTENSION_SUFFIXES[0])')
pydir=$prefix/lib/python3/dist-packages
put 0755 "$bin/python/pmix.so" "$pydir/pmix$suffix"
chrpath -r '$ORIGIN/../..' "$pydir/pmix$suffix" > /dev/null
if ! "$python" -c 'import sys; sys.exit(0 if sys.argv[1] in sys.path else 1)' "$pydir"; then
  site=$("$python" -c 'import site; print(site.getsitepackages()[0])')
  name=pmix-cxx-$(printf '%s' "$prefix" | sha256sum | cut -c1-12).pth
  if mkd "$site" 2> /dev/null && [ -w "$site" ]; then
    printf '%s\n' "$pydir" > "$work/pth"
    put 0644 "$work/pth" "$site/$name"
    pth=$site/$name
  else
    echo "install: cannot write to $site: set PYTHONPATH=$pydir to import pmix" >&2
  fi
fi

# Man pages, written from our docs (docs/man, tools/man.sh).
tools/man.sh "$work/man"
for f in "$work"/man/man*/*; do
  put 0644 "$f" "$prefix/share/man/$(basename "$(dirname "$f")")/$(basename "$f")"
done

finish
