#!/usr/bin/env bash
# Builds PMIx-CXX's Debian packages from the tree with Debian's own tools
# (dpkg-shlibdeps, dpkg-gencontrol, dpkg-deb) and the files in debian/:
#   libpmix-cxx2      libpmix.so.2 in place of libpmix2's (a diversion of
#                     OpenPMIx's file), libpmix-server.so.2, man 7
#   libpmix-cxx-dev   headers, pmix.pc in place of libpmix-dev's, libpmix.so, man 3
#   pmix-cxx-bin      pmixrun, pmixd, pmixsim, and pmix_info, pps, pquery,
#                     pevent in place of libpmix-bin's, man 1
#   python3-pmix-cxx  the module pmix in place of python3-pmix's
# Each package diverts the files of OpenPMIx's packages it replaces (the list
# in debian/PACKAGE.divert) on install and gives them back on removal:
# docs/install.md says why diversions.
# Usage: tools/deb.sh [--no-build] OUTDIR   (builds first unless --no-build;
#        BAZEL_BIN names the tree of built files, default bazel-bin)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
# shellcheck source=packaged.sh
source tools/packaged.sh
build=1
if [ "${1:-}" = --no-build ]; then build=0; shift; fi
out=${1:?usage: tools/deb.sh [--no-build] OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ $build -eq 1 ]; then
  bazel build "${packaged_targets[@]}"
fi
bin=${BAZEL_BIN:-bazel-bin}
case "$bin" in /*) ;; *) bin=$repo/$bin ;; esac
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
[ "$arch" = x86_64-linux-gnu ] || { echo "deb: the packages are for amd64 (this is $arch)" >&2; exit 1; }
python=/usr/bin/python3
pyver=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
suffix=$("$python" -c 'import importlib.machinery as m; print(m.EXTENSION_SUFFIXES[0])')

work=$(mktemp -d "${TMPDIR:-/tmp}/pmix-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp -rL debian "$work/debian"
cd "$work"
umask 022
lib=usr/lib/$arch
packages=(libpmix-cxx2 libpmix-cxx-dev pmix-cxx-bin python3-pmix-cxx)

put() {  # put PACKAGE MODE SOURCE DEST
  install -D -m "$2" "$3" "debian/$1/$4"
}
elf() {  # put an ELF object: no Bazel run path, no debugging sections
  put "$@"
  chrpath -d "debian/$1/$4" > /dev/null 2>&1 || true
  strip --strip-unneeded --remove-section=.comment --remove-section=.note "debian/$1/$4"
}
manpages() {  # manpages PACKAGE SECTION: that section's pages, compressed as policy says
  local f
  for f in "$work/man/man$2"/*; do
    install -D -m 0644 "$f" "debian/$1/usr/share/man/man$2/$(basename "$f")"
    gzip -9n "debian/$1/usr/share/man/man$2/$(basename "$f")"
  done
}
"$repo/tools/man.sh" "$work/man"
# A redirect page (.so) names its target compressed or not: man finds both.

# --- libpmix-cxx2: our library at the path of OpenPMIx's file, diverted
elf libpmix-cxx2 0644 "$bin/api/libpmix.so.2" "$lib/pmix2/lib/libpmix.so.2.6.2"
ln -s libpmix.so.2.6.2 "debian/libpmix-cxx2/$lib/pmix2/lib/libpmix.so"
elf libpmix-cxx2 0644 "$bin/api/libpmix-server.so.2" "$lib/libpmix-server.so.2"
manpages libpmix-cxx2 7
# --- libpmix-cxx-dev
for h in "$repo"/api/include/*.h; do put libpmix-cxx-dev 0644 "$h" "usr/include/$(basename "$h")"; done
put libpmix-cxx-dev 0644 debian/pmix.pc "$lib/pkgconfig/pmix.pc"
ln -s libpmix.so.2 "debian/libpmix-cxx-dev/$lib/libpmix.so"
manpages libpmix-cxx-dev 3
# --- pmix-cxx-bin
for p in "${packaged_programs[@]}"; do
  elf pmix-cxx-bin 0755 "$bin/tools/$p" "usr/bin/$(basename "$p")"
done
manpages pmix-cxx-bin 1
# --- python3-pmix-cxx
elf python3-pmix-cxx 0644 "$bin/python/pmix.so" "usr/lib/python3/dist-packages/pmix$suffix"

for p in "${packages[@]}"; do
  root=debian/$p
  install -D -m 0644 debian/copyright "$root/usr/share/doc/$p/copyright"
  gzip -9nc debian/changelog > "$root/usr/share/doc/$p/changelog.gz"
  if [ -f "debian/$p.lintian-overrides" ]; then
    install -D -m 0644 "debian/$p.lintian-overrides" "$root/usr/share/lintian/overrides/$p"
  fi
  mkdir -p "$root/DEBIAN"
  # The maintainer scripts that divert OpenPMIx's files, from the package's list.
  files=$(grep -v '^#' "debian/$p.divert" | grep . | tr '\n' ' ')
  for script in preinst postrm; do
    sed -e "s|@PACKAGE@|$p|g" -e "s|@FILES@|$files|g" "debian/divert.$script.in" > "$root/DEBIAN/$script"
    chmod 0755 "$root/DEBIAN/$script"
  done
  : > "debian/$p.substvars"
  elves=$(find "$root" -type f \( -name '*.so*' -o -path '*/usr/bin/*' \) -print)
  if [ -n "$elves" ]; then
    # shellcheck disable=SC2086
    dpkg-shlibdeps -T"debian/$p.substvars" -l"$root/$lib" $elves 2> "$work/shlibdeps.err" ||
      { cat "$work/shlibdeps.err" >&2; exit 1; }
  fi
  echo "python3:Depends=python3 (>= $pyver~), python3 (<< ${pyver%.*}.$((${pyver#*.} + 1)))" >> "debian/$p.substvars"
  if [ "$p" = libpmix-cxx2 ]; then
    # ldconfig after a library in its path changes; the runtime's shlibs
    # entry (libpmix.so.2's stays libpmix2's: ours sits in its place).
    echo "activate-noawait ldconfig" > "$root/DEBIAN/triggers"
    echo "libpmix-server 2 libpmix-cxx2 (>= $(dpkg-parsechangelog -S Version))" > "$root/DEBIAN/shlibs"
  fi
  (cd "$root" && find usr -type f | LC_ALL=C sort | xargs md5sum) > "$root/DEBIAN/md5sums"
  dpkg-gencontrol -p"$p" -P"$root" -T"debian/$p.substvars" 2> "$work/gencontrol.err" ||
    { cat "$work/gencontrol.err" >&2; exit 1; }
  dpkg-deb --root-owner-group -Zxz --build "$root" "$out" > /dev/null
done
ls "$out"/*.deb
