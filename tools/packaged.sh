# What tools/install.sh and tools/deb.sh install: sourced by both.
# shellcheck shell=bash
# The Bazel targets they build (unless --no-build).
packaged_targets=(//api:libpmix.so.2 //api:libpmix-server.so.2 //python:pmix.so
  //tools/pmixrun //tools/pmixd //tools/pmixsim
  //tools/cli:pmix_info //tools/cli:pps //tools/cli:pquery //tools/cli:pevent)
# The programs, under bazel-bin/tools.
packaged_programs=(pmixrun/pmixrun pmixd/pmixd pmixsim/pmixsim
  cli/pmix_info cli/pps cli/pquery cli/pevent)
