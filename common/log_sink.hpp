// PMIx_Log served by this process itself: by a server whose host has no log
// up-call, and by a client without a server (a singleton). The channels a
// process reaches on its own node: its stderr, stdout and the local syslog.
// Plain code, testable on its own.
#pragma once

#include <pmix_common.h>

#include <string>

#include "common/value.hpp"

namespace pmix::logging {

// Logs each data entry on its channel: PMIX_LOG_STDERR / PMIX_LOG_STDOUT to
// this process's stderr / stdout as "[nspace:rank] text" (the source is
// PMIX_LOG_SOURCE if given, else `source`), PMIX_LOG_SYSLOG and
// PMIX_LOG_LOCAL_SYSLOG to syslog (priority PMIX_LOG_SYSLOG_PRI, default
// LOG_ERR). Directives: PMIX_LOG_SOURCE, PMIX_LOG_SYSLOG_PRI, PMIX_LOG_ONCE,
// PMIX_LOG_TIMESTAMP / PMIX_LOG_GENERATE_TIMESTAMP (a time prefix); others
// are ignored unless required.
// Returns PMIX_SUCCESS when every entry was logged or ignored,
// PMIX_ERR_NOT_SUPPORTED when a required entry or directive has no channel
// here (or nothing at all could be logged), PMIX_ERR_BAD_PARAM for an entry
// whose value is not a string.
//
// `for_peer`: the entries come from another process (a server logging for
// a client or tool whose host has no log up-call; docs/security.md, "Log
// integrity"). The source is then always `source`, the sender's
// authenticated identity (a PMIX_LOG_SOURCE it gives is ignored), the text
// is escaped as the library's own log lines are (control characters and
// backslashes as \xNN / \\: it can neither break a line nor reach a
// terminal as an escape sequence), and syslog gets only the severity of
// PMIX_LOG_SYSLOG_PRI: the facility is this process's (LOG_USER unless it
// called openlog).
pmix_status_t log_locally(const proc_id& source, const info_list& data, const info_list& directives,
                          std::string& error, bool for_peer = false);

}  // namespace pmix::logging
