// pmixrun --faults: the fault plane of our PMIx server (docs/fault-injection.md)
// seen from the launcher. The plan goes to PMIx_server_init as our attribute
// "pmix.cxx.faults" (seed: "pmix.cxx.faults.seed"); the invariant checker
// and the disarm switch are reached through our server runtime's table, so
// pmixrun built against OpenPMIx still builds (then --faults is refused).
#pragma once

#include <string>
#include <vector>

namespace pmixrun {

// Whether the loaded PMIx server library has our fault plane.
bool faults_available();
// The checker (see api/server_runtime_abi.h, faults_check): with an
// nspace, after its processes ended; with an empty one, after every
// namespace was deregistered. True when every invariant held; `report`
// gets the plane's plan, hashes, decisions and violations.
bool faults_check(const std::string& nspace, int wait_ms, std::string& report);
// Stops injecting (before the probe client).
void faults_disarm();

// pmixrun --probe-client: a minimal PMIx client (init, put, commit, fence
// collecting data, get, finalize) that pmixrun runs after a faulted job to
// show the server still serves a new client. Exit status 0 when every call
// succeeded.
int probe_client();

// --shrink: reduces the failing plan `trace` (the decisions of a failing
// run, as explicit rules) by running `command` (argv of a pmixrun without
// --faults/--seed/--shrink) with subsets, keeping each removal after which
// the run still fails (exit status 3). Returns the minimal plan.
std::string shrink(const std::vector<std::string>& trace, const std::string& seed,
                   const std::vector<std::string>& command);

}  // namespace pmixrun
