#!/usr/bin/env bash
# Installs the library for hosts and clients built outside Bazel:
#   PREFIX/include/{pmix.h,pmix_common.h,pmix_server.h,pmix_tool.h,pmix_version.h}
#   PREFIX/lib/libpmix.so.2, libpmix.so -> libpmix.so.2, libpmix-server.so.2
#   PREFIX/lib/pkgconfig/pmix.pc   (pkg-config --cflags --libs pmix)
# Usage: tools/install.sh PREFIX   (builds first unless --no-build is given)
set -euo pipefail
cd "$(dirname "$0")/.."
build=1
if [ "${1:-}" = --no-build ]; then build=0; shift; fi
prefix=${1:?usage: tools/install.sh [--no-build] PREFIX}
if [ $build -eq 1 ]; then
  bazel build //api:libpmix.so.2 //api:libpmix-server.so.2
fi
bin=${BAZEL_BIN:-bazel-bin}
mkdir -p "$prefix/include" "$prefix/lib/pkgconfig"
install -m 0644 api/include/*.h "$prefix/include/"
install -m 0755 "$bin/api/libpmix.so.2" "$bin/api/libpmix-server.so.2" "$prefix/lib/"
ln -sf libpmix.so.2 "$prefix/lib/libpmix.so"
install -m 0644 api/pmix.pc.in "$prefix/lib/pkgconfig/pmix.pc"
echo "installed into $prefix (pkg-config: PKG_CONFIG_PATH=$prefix/lib/pkgconfig)"
