#!/usr/bin/env bash
# Issue 39: tools/install.sh puts everything under a prefix, and everything
# is used from there the way a user outside Bazel would: a host and a client
# built with pkg-config, each program's --help, a real pmixrun job from
# PREFIX/bin, `import pmix` without PYTHONPATH, the man pages; then
# --uninstall leaves nothing behind, in the prefix or outside it.
set -euo pipefail
root=$(pwd)
# One at a time on this machine: each run puts its .pth into python3's one
# site directory, where another run's (bazel test --runs_per_test) would
# make `import pmix` find that run's module, and change the listing checked
# at the end.
exec 9> /tmp/pmix-cxx-install_test.lock
flock 9
scratch=$(mktemp -d /tmp/pmixinstall.XXXXXX)
prefix=$scratch/opt/pmix   # two levels that do not exist yet
site=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
before_site=$(ls -A "$site" 2> /dev/null || true)
cleanup() {
  [ -f "$prefix/share/pmix-cxx/installed" ] && "$root/tools/install.sh" --uninstall "$prefix" > /dev/null 2>&1
  rm -rf "$scratch"
}
trap cleanup EXIT
fail() { echo "install_test: FAILED: $*" >&2; exit 1; }

BAZEL_BIN="$root" "$root/tools/install.sh" --no-build "$prefix"
manifest=$prefix/share/pmix-cxx/installed
[ -f "$manifest" ] || fail "no manifest"

# Nothing outside the prefix but the one .pth file naming its module directory.
outside=$(grep '^file ' "$manifest" | cut -d' ' -f2- | grep -v "^$prefix/" || true)
[ "$(echo "$outside" | wc -l)" -eq 1 ] && [[ "$outside" == "$site"/pmix-cxx-*.pth ]] ||
  fail "files outside the prefix: $outside"
[ "$(cat "$outside")" = "$prefix/lib/python3/dist-packages" ] || fail "the .pth names $(cat "$outside")"

# A host and a client built the way a project outside Bazel builds them.
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
[ "$(pkg-config --modversion pmix)" = 4.2.2 ] || fail "pkg-config --modversion pmix"
cat > "$scratch/host.c" <<'C'
#include <pmix.h>
#include <pmix_server.h>
#include <stdio.h>
int main(void) {
    pmix_status_t rc = PMIx_server_init(NULL, NULL, 0);
    if (rc != PMIX_SUCCESS) { printf("init: %s\n", PMIx_Error_string(rc)); return 1; }
    rc = PMIx_server_finalize();
    printf("host: %s %s\n", PMIx_Get_version(), PMIx_Error_string(rc));
    return rc == PMIX_SUCCESS ? 0 : 1;
}
C
cat > "$scratch/client.c" <<'C'
#include <pmix.h>
#include <stdio.h>
#include <string.h>
int main(void) {
    pmix_proc_t me, peer;
    pmix_value_t v, *got = NULL;
    pmix_info_t collect;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 1;
    PMIX_VALUE_LOAD(&v, &me.rank, PMIX_UINT32);
    if (PMIx_Put(PMIX_GLOBAL, "install.rank", &v) != PMIX_SUCCESS || PMIx_Commit() != PMIX_SUCCESS) return 2;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, NULL, PMIX_BOOL);
    if (PMIx_Fence(NULL, 0, &collect, 1) != PMIX_SUCCESS) return 3;
    PMIX_PROC_LOAD(&peer, me.nspace, 0);
    if (PMIx_Get(&me, PMIX_JOB_SIZE, NULL, 0, &got) != PMIX_SUCCESS) return 4;
    uint32_t size = got->data.uint32;
    PMIX_VALUE_RELEASE(got);
    peer.rank = (me.rank + 1) % size;
    if (PMIx_Get(&peer, "install.rank", NULL, 0, &got) != PMIX_SUCCESS || got->data.uint32 != peer.rank) return 5;
    PMIX_VALUE_RELEASE(got);
    printf("client %u of %u: ok\n", me.rank, size);
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 6;
}
C
gcc -o "$scratch/host" "$scratch/host.c" $(pkg-config --cflags --libs pmix)
gcc -o "$scratch/client" "$scratch/client.c" $(pkg-config --cflags --libs pmix)
env -u PMIX_CXX_SERVER_LIBRARY -u LD_LIBRARY_PATH "$scratch/host" | grep -q '^host: PMIx-CXX.* PMIX_SUCCESS$' ||
  fail "the pkg-config host"

# Every program from PREFIX/bin, on the library in PREFIX/lib.
for p in pmixrun pmixd pmixsim pmix_info pps pquery pevent; do
  [ -x "$prefix/bin/$p" ] || fail "$p is not installed"
  loaded=$(ldd "$prefix/bin/$p" | sed -n 's/^[[:space:]]*libpmix.so.2 => \([^ ]*\) .*/\1/p')
  [ -n "$loaded" ] && [ "$(readlink -f "$loaded")" = "$prefix/lib/libpmix.so.2" ] ||
    fail "$p does not load $prefix/lib/libpmix.so.2: $(ldd "$prefix/bin/$p" | grep pmix)"
  out=$(env -u LD_LIBRARY_PATH "$prefix/bin/$p" --help) || fail "$p --help exits $?"
  echo "$out" | grep -qi "usage" || fail "$p --help prints no usage: $out"
done
out=$(env -u LD_LIBRARY_PATH -u PMIX_CXX_SERVER_LIBRARY "$prefix/bin/pmixrun" -n 4 "$scratch/client")
echo "$out"
[ "$(echo "$out" | grep -c ': ok$')" -eq 4 ] || fail "the pmixrun job"

# The Python module, found without PYTHONPATH, is the installed one.
mod=$(cd / && env -u PYTHONPATH /usr/bin/python3 -c 'import pmix; print(pmix.__file__)')
[[ "$mod" == "$prefix/lib/python3/dist-packages/pmix."* ]] || fail "python3 imported $mod"
(cd / && env -u PYTHONPATH /usr/bin/python3 -c 'import pmix; c = pmix.PMIxClient(); print(pmix.PMIX_SUCCESS, c.error_string(-25), c.get_version())') ||
  fail "the module does not run"

# Man pages: a function, a program, the settings.
export MANPAGER=cat MANWIDTH=80
man -M "$prefix/share/man" PMIx_server_init | grep -q 'PMIx_server_init' || fail "man PMIx_server_init"
man -M "$prefix/share/man" 1 pmixrun | grep -q 'pmixrun' || fail "man 1 pmixrun"
man -M "$prefix/share/man" 7 pmix-cxx-settings | grep -q 'PMIX_CXX_VERBOSE' || fail "man 7 pmix-cxx-settings"
for f in "$prefix"/share/man/man*/*; do
  grep -q '^\.so ' "$f" && continue
  warn=$(groff -ww -man -z "$f" 2>&1) || true
  [ -z "$warn" ] || fail "groff warns on $f: $warn"
done

# A second install over the first is refused (it would lose the first's list).
if BAZEL_BIN="$root" "$root/tools/install.sh" --no-build "$prefix" 2> /dev/null; then fail "installed twice"; fi

# Uninstall: nothing of ours is left, in the prefix or in python3's site directory.
"$root/tools/install.sh" --uninstall "$prefix"
[ ! -e "$scratch/opt" ] || fail "left in the prefix: $(find "$scratch/opt")"
[ "$(ls -A "$site" 2> /dev/null || true)" = "$before_site" ] || fail "python3's site directory changed"
echo "install_test: ok"
