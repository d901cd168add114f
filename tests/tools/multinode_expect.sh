# Checks shared by the multinode tests (sourced): they count failures in
# `failures` and show "$tmp/out", the last job's output, when a check fails.

# multinode_setup TEST TMP_PREFIX: the set-up every multinode test starts
# with: root and iproute2 (network namespaces) or exit 1; demo, PMIXRUN and
# PMIXD; a temporary directory `tmp` (also TMPDIR: short socket paths),
# removed at exit; failures=0.
multinode_setup() {
  if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null; then
    echo "$1 needs root and iproute2 (network namespaces)" >&2
    exit 1
  fi
  demo=tools/multinode/demo.sh
  export PMIXRUN=$PWD/tools/pmixrun/pmixrun
  export PMIXD=$PWD/tools/pmixd/pmixd
  tmp=$(mktemp -d "/tmp/$2.XXXXXX")
  export TMPDIR=$tmp
  trap 'rm -rf "$tmp"' EXIT
  failures=0
}

# fail WHAT [FILE]
fail() {
  echo "FAIL: $1"
  [ -n "${2:-}" ] && sed 's/^/    /' "$2"
  failures=$((failures + 1))
}

# expect NAME STATUS WANT_STATUS FILE REGEX COUNT [FILE REGEX COUNT]...
expect() {
  local name=$1 got=$2 want=$3
  shift 3
  if [ "$got" -ne "$want" ]; then
    fail "$name: exit status $got, want $want" "$tmp/out"
    return
  fi
  while [ $# -ge 3 ]; do
    local n
    n=$(grep -cE "$2" "$1")
    if [ "$n" -ne "$3" ]; then
      fail "$name: $n lines match '$2', want $3" "$tmp/out"
      return
    fi
    shift 3
  done
  echo "ok: $name"
}
