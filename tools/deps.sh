#!/usr/bin/env bash
# Installs the Debian packages the build, the main job and the tests need,
# when they are missing. Debian packages only: nothing else is downloaded.
# Usage: tools/deps.sh [build|fuzz|test]
#   build: what the build and the main job need
#   fuzz:  the build's, and clang 14 with libFuzzer (tools/fuzz.sh)
#   test:  all of these, and what the tests and hosts need (tools/run-tests.sh)
set -euo pipefail

build_packages=(
  g++ pkg-config python3
  bazel-bootstrap bazel-platforms
  libcaf-dev libprotobuf-dev protobuf-compiler libhwloc-dev
  libssl-dev    # the server's own credentials (HMAC-SHA256, actors/credential.cpp), pmixd's TLS session key
                # (libcaf-dev brings CAF's OpenSSL module, libcaf-openssl0.17)
  zlib1g-dev    # PMIx_Data_compress (zlib.h; libz.so.1 is loaded on first use)
  python3-dev pybind11-dev   # the Python module (python/, docs/python.md)
  go-md2man chrpath   # tools/install.sh: the man pages, the installed programs' run path (docs/install.md)
)
test_packages=(
  doctest-dev
  iproute2      # network namespaces (ip netns) and ss for the remote-connection and multinode tests
  libpmix-dev   # OpenPMIx 4.2.2 headers: the ABI test compares against them
  python3-pmix  # OpenPMIx's Python binding on its own library, under our server (issue 35)
  libpmix-bin   # OpenPMIx 4.2.2's tools (pps, pevent, ...) against our server (issue 35)
  python3-pytest  # the Python module's tests (tests/python)
  # Real hosts and MPI programs on our library (tests/hosts, docs/hosts.md)
  openmpi-bin libopenmpi-dev slurm-wlm munge
  dpkg-dev lintian   # tools/deb.sh's packages and their check (tests/install:deb_test)
)
# The fuzz targets (tools/fuzz.sh, docs/security.md "Fuzzing"): the compiler,
# the sanitizer and libFuzzer runtimes it links (only recommended by
# clang-14, so named here), and libFuzzer. The asan and tsan configs use
# gcc's own runtimes, which g++ brings.
fuzz_packages=(clang-14 libclang-rt-14-dev libfuzzer-14-dev)

wanted=("${build_packages[@]}")
case "${1:-build}" in
  build) ;;
  fuzz) wanted+=("${fuzz_packages[@]}") ;;
  test) wanted+=("${fuzz_packages[@]}" "${test_packages[@]}") ;;
  *) echo "usage: tools/deps.sh [build|fuzz|test]" >&2; exit 2 ;;
esac

missing=()
for p in "${wanted[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# doctest is needed by every test binary, so the build of //... wants it too.
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#wanted[@]} Debian packages present"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "deps: missing Debian packages: ${missing[*]}" >&2
  echo "deps: run as root (or install them) and try again" >&2
  exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${missing[@]}"
