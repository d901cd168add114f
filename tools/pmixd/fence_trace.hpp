// Where a fence across nodes spends its time (issue 40; docs/multinode.md,
// "Where a fence's time goes"). With PMIXD_FENCE_TRACE=DIR in its
// environment, a daemon keeps one line per stage of each fence across nodes
// it takes part in, and writes them to DIR/pmixd.NODE.PID when it ends:
//
//   NS STAGE KEY [NODE ROUND]
//
// NS is CLOCK_MONOTONIC in nanoseconds (one clock for every network
// namespace of a machine, so the nodes of tools/multinode/demo.sh can be
// compared), STAGE one of
//   upcall    the server called fence_nb (its thread; KEY "-": not named yet)
//   actor     the daemon's actor took the up-call
//   send      it sent its part to node NODE (round ROUND)
//   recv      a part from another node came to the actor (round ROUND)
//   done      the fence completed here: the server is answered now
//   answered  the server's callback returned
// tools/multinode/fence_trace.py pairs them with the ranks' own times
// (bench_client's BENCH_FENCE_TRACE) and prints the median of each step.
// Without the variable, mark() is one test of a flag.
#pragma once

#include <cstdint>
#include <string>

namespace pmixd::fence_trace {

// Reads PMIXD_FENCE_TRACE; `node` names the file.
void open(const std::string& node);
bool enabled();
void mark(const char* stage, const std::string& key, std::int64_t node = -1, std::int64_t round = -1);
// Writes what was kept (also at exit).
void flush();

}  // namespace pmixd::fence_trace
