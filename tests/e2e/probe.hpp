// Every blocking call of the client, server and tool APIs, made once each
// with arguments that would otherwise do real work (spec 002: from a thread
// that runs library code each must return PMIX_ERR_WOULD_BLOCK at once).
#pragma once

#include <pmix_common.h>

#include <string>
#include <utility>
#include <vector>

namespace pmix::test {

// Their statuses, by name. `nspace` names a registered namespace (for
// collect_job_info and the deregistrations, which return no status and must
// then have done nothing: the caller checks the namespace is still there).
std::vector<std::pair<std::string, pmix_status_t>> call_every_blocking_form(const std::string& nspace);

// The refused PMIx_Register_event_handler asks for this code, the refused
// PMIx_Notify_event raises the other (PMIX_RANGE_PROC_LOCAL): a caller shows
// neither did anything by notifying kRefusedHandlerCode afterwards (the
// handler must not run: refused_handler_runs() stays 0, and no line
// "refused-handler ran" appears on stdout) and by watching for
// kRefusedNotifyCode (it must never come).
constexpr pmix_status_t kRefusedHandlerCode = 4242;
constexpr pmix_status_t kRefusedNotifyCode = 4243;
int refused_handler_runs();

}  // namespace pmix::test
