#!/usr/bin/env bash
# Installs the library into a temporary prefix with tools/install.sh, then
# builds a program the way a host outside Bazel would (pkg-config pmix) and
# runs it: the installed headers compile, the library links by soname, and
# libpmix.so.2 finds libpmix-server.so.2 next to itself.
set -euo pipefail
root=$(pwd)
prefix=$(mktemp -d /tmp/pmixinst.XXXXXX)
trap 'rm -rf "$prefix"' EXIT
BAZEL_BIN="$root" "$root/tools/install.sh" --no-build --library-only "$prefix"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
[ "$(pkg-config --modversion pmix)" = "4.2.2" ]
cat > "$prefix/probe.c" <<'C'
#include <pmix.h>
#include <pmix_server.h>
#include <stdio.h>
#include <string.h>
int main(void) {
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_SERVER_TMPDIR, "/tmp", PMIX_STRING);
    pmix_status_t rc = PMIx_server_init(NULL, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (PMIX_SUCCESS != rc) { printf("init: %s\n", PMIx_Error_string(rc)); return 1; }
    rc = PMIx_server_finalize();
    printf("%s | %s\n", PMIx_Get_version(), PMIx_Error_string(rc));
    return rc == PMIX_SUCCESS ? 0 : 1;
}
C
# A library built with a sanitizer (the asan and tsan configs,
# docs/security.md) needs its runtime first in the program: a host of it is
# built with the same option, as a user of such a build would.
sanitize=()
needed=$(readelf -d "$prefix/lib/libpmix.so.2" | grep NEEDED || true)
case "$needed" in
  *libasan*) sanitize=(-fsanitize=address,undefined) ;;
  *libtsan*) sanitize=(-fsanitize=thread) ;;
esac
gcc "${sanitize[@]}" -o "$prefix/probe" "$prefix/probe.c" $(pkg-config --cflags --libs pmix)
readelf -d "$prefix/probe" | grep -q 'NEEDED.*libpmix.so.2'
out=$(env -u PMIX_CXX_SERVER_LIBRARY "$prefix/probe")
echo "$out"
echo "$out" | grep -q 'PMIx-CXX.*| PMIX_SUCCESS'
echo "pkgconfig_test: ok"
