#!/usr/bin/env bash
# Issue 39: tools/deb.sh's packages, lintian-clean, installed with dpkg in a
# private mount namespace whose /usr, /etc and /var are overlays of the
# machine's (so the machine's own OpenPMIx stays as it is): Debian's mpirun
# and srun --mpi=pmix then run on our library with no LD_LIBRARY_PATH and no
# bind mount, a client builds with pkg-config against the -dev package, the
# tools, module and man pages are ours; removing the packages gives every
# file of OpenPMIx's packages back, byte for byte.
#   deb_test.sh           (from the test's runfiles: builds, checks, namespaces)
#   deb_test.sh --inside SCRATCH   (the part in the namespace)
set -euo pipefail
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
root=$(pwd)
fail() { echo "deb_test: FAILED: $*" >&2; exit 1; }
# Every file the packages divert, and what it is: a link's target or a hash.
diverted() { grep -hv '^#' "$root"/debian/*.divert | grep .; }
snapshot() {
  local f
  for f in $(diverted); do
    if [ -L "$f" ]; then echo "$f -> $(readlink "$f")"
    elif [ -e "$f" ]; then echo "$f $(sha256sum < "$f" | cut -c1-64)"
    else echo "$f absent"; fi
    [ ! -e "$f.openpmix" ] && [ ! -L "$f.openpmix" ] || echo "$f.openpmix present"
  done
}

if [ "${1:-}" = --inside ]; then
  scratch=$2
  for d in usr etc var; do
    mkdir -p "$scratch/upper/$d" "$scratch/work/$d"
    mount -t overlay overlay -o "lowerdir=/$d,upperdir=$scratch/upper/$d,workdir=$scratch/work/$d" "/$d"
  done
  # Changes to the machine's /usr still show through the overlay: a .pth
  # file that install_test, running beside this test, puts in python3's
  # local site directory made `import pmix` find its scratch install. That
  # directory is empty here (the packages install nothing under /usr/local).
  local_site=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
  case $local_site in
    /usr/local/*) mkdir -p "$local_site" && mount -t tmpfs -o mode=0755 tmpfs "$local_site" ;;
  esac
  export DEBIAN_FRONTEND=noninteractive
  dpkg -i "$scratch"/debs/*.deb > "$scratch/dpkg-install.log" 2>&1 || { cat "$scratch/dpkg-install.log"; fail "dpkg -i"; }
  echo "ok   installed: $(cd "$scratch/debs" && echo *.deb)"

  # Each diverted path now holds the packages' file, OpenPMIx's beside it.
  mkdir "$scratch/x"
  for d in "$scratch"/debs/*.deb; do dpkg-deb -x "$d" "$scratch/x"; done
  for f in $(diverted); do
    if [ -L "$scratch/x$f" ]; then [ "$(readlink "$f")" = "$(readlink "$scratch/x$f")" ] || fail "$f is not our link"
    else cmp -s "$f" "$scratch/x$f" || fail "$f is not our file"; fi
  done
  [ "$(dpkg-divert --list | grep -c 'by .*pmix-cxx')" = "$(diverted | wc -l)" ] || fail "the diversions: $(dpkg-divert --list)"
  real=$(readlink -f /usr/lib/x86_64-linux-gnu/libpmix.so.2)
  cmp -s "$real" "$scratch/x/usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix.so.2.6.2" || fail "libpmix.so.2 is $real"
  echo "ok   libpmix.so.2, Slurm's pmix2/lib/libpmix.so, pmix.pc, libpmix.so and the tools are ours"

  # A client built against the -dev package the way a user builds one.
  gcc -O1 -o "$scratch/client" "$root/tests/hosts/slurm/pmix_job_client.c" $(pkg-config --cflags --libs pmix)
  if readelf -d "$scratch/client" | grep -q 'R.*PATH'; then fail "the client has a run path"; fi

  # Debian's mpirun: allreduce on 4 ranks; our server in mpirun (its log at
  # PMIX_CXX_VERBOSE=2), our library in the ranks.
  unset LD_LIBRARY_PATH PMIX_CXX_SERVER_LIBRARY
  cd "$scratch"
  PMIX_CXX_VERBOSE=2 timeout 300 mpirun --allow-run-as-root --oversubscribe -np 4 \
    "$root/tests/hosts/mpi/allreduce" 4 > mpi.out 2> mpi.err || { cat mpi.out mpi.err; fail "mpirun allreduce"; }
  [ "$(grep -c '^OK allreduce rank=[0-3] size=4$' mpi.out)" = 4 ] && grep -q '^OK allreduce all ranks=4$' mpi.out ||
    { cat mpi.out mpi.err; fail "allreduce's results"; }
  grep -q 'info server: listening at ' mpi.err || { cat mpi.err; fail "mpirun's server is not ours"; }
  timeout 300 mpirun --allow-run-as-root --oversubscribe -np 4 "$scratch/client" 4 > client.out 2> client.err ||
    { cat client.out client.err; fail "mpirun of the client"; }
  [ "$(grep -c '^pmix_job_client: rank [0-3] library PMIx-CXX' client.err)" = 4 ] ||
    { cat client.out client.err; fail "the ranks are not on our library"; }
  echo "ok   Debian's mpirun -np 4: allreduce checked, our server in mpirun, our library in the ranks"

  # Slurm's one-node test with the stock plugin (no bind mount): its server's
  # log lines go to a file (slurmstepd's stderr goes nowhere).
  export PMIX_CXX_LOG_FILE=$scratch/slurm-pmix.log PMIX_CXX_VERBOSE=2
  "$root/tests/hosts/slurm/slurm_smoke.sh" --client "$scratch/client" --mpi-program "$root/tests/hosts/mpi/allreduce" \
    --ranks-library PMIx-CXX || fail "the one-node Slurm test"
  grep -q 'info server: listening at ' "$scratch/slurm-pmix.log" || fail "slurmstepd's server is not ours"
  unset PMIX_CXX_LOG_FILE PMIX_CXX_VERBOSE
  echo "ok   srun --mpi=pmix: our server in slurmstepd"

  # The tools, the module, the man pages.
  pmix_info --help | grep -q '^usage: pmix_info' || fail "pmix_info is not ours"
  pmixrun -n 2 "$scratch/client" 2 > pmixrun.out 2>&1 || { cat pmixrun.out; fail "pmixrun from /usr/bin"; }
  mod=$(cd / && env -u PYTHONPATH python3 -c 'import pmix; print(pmix.__file__, pmix.PMIxClient().get_version())')
  [[ "$mod" == /usr/lib/python3/dist-packages/pmix.cpython-*PMIx-CXX* ]] || fail "python3 imports $mod"
  # (man -w names the family page the function's page redirects to)
  [ "$(man -w PMIx_server_init)" = /usr/share/man/man3/pmix_server.3.gz ] || fail "man -w PMIx_server_init"
  MANPAGER=cat man PMIx_server_init 2> /dev/null | grep -q PMIx_server_init || fail "man PMIx_server_init"
  echo "ok   pmix_info, pmixrun, import pmix, man PMIx_server_init: ours"

  # Removal gives OpenPMIx's files back.
  dpkg -r python3-pmix-cxx pmix-cxx-bin libpmix-cxx-dev libpmix-cxx2 > "$scratch/dpkg-remove.log" 2>&1 ||
    { cat "$scratch/dpkg-remove.log"; fail "dpkg -r"; }
  if dpkg-divert --list | grep -q pmix-cxx; then fail "diversions left: $(dpkg-divert --list | grep pmix-cxx)"; fi
  snapshot > "$scratch/after-removal"
  cmp "$scratch/before" "$scratch/after-removal" || { diff "$scratch/before" "$scratch/after-removal"; fail "not restored"; }
  present=()
  for p in libpmix2 libpmix-dev libpmix-bin python3-pmix; do
    dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q 'install ok installed' && present+=("$p")
  done
  bad=$(dpkg --verify "${present[@]}" 2>&1 || true)
  [ -z "$bad" ] || fail "dpkg --verify ${present[*]}: $bad"
  grep -q 'PMIx-CXX' "$(readlink -f /usr/lib/x86_64-linux-gnu/libpmix.so.2)" && fail "libpmix.so.2 is still ours"
  echo "ok   removed: OpenPMIx's files are back (dpkg --verify ${present[*]}: clean)"
  exit 0
fi

scratch=$(mktemp -d /tmp/pmixdeb.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
BAZEL_BIN="$root" "$root/tools/deb.sh" --no-build "$scratch/debs" > /dev/null
# Lintian: no error or warning; what it reports and the packages accept is
# in their overrides, each with its reason (docs/build.md).
lintian --fail-on error,warning "$scratch"/debs/*.deb > "$scratch/lintian.out" 2>&1 ||
  { cat "$scratch/lintian.out"; fail "lintian"; }
echo "ok   lintian: no error or warning"
snapshot > "$scratch/before"
unshare -m --propagation private "$root/tests/install/deb_test.sh" --inside "$scratch"
snapshot > "$scratch/after"
cmp -s "$scratch/before" "$scratch/after" || fail "the machine's files changed"
echo "deb_test: ok"
