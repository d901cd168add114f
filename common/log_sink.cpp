#include "common/log_sink.hpp"

#include <syslog.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>

#include "common/directives.hpp"
#include "common/log.hpp"
#include "common/supported.hpp"

namespace pmix::logging {
namespace {

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const auto n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

pmix_status_t log_locally(const proc_id& source, const info_list& data, const info_list& directives,
                          std::string& error, bool for_peer) {
  const auto rc = directives::check("PMIx_Log", directives, supported::log_directives);
  if (rc != PMIX_SUCCESS) {
    error = "a required directive is not supported";
    return rc;
  }
  proc_id from = source;
  int priority = LOG_ERR;
  std::string stamp;
  for (const auto& d : directives) {
    if (d.key == PMIX_LOG_SOURCE) {
      const auto* p = d.val.as_proc();
      if (p != nullptr && !for_peer) from = *p;
    } else if (d.key == PMIX_LOG_SYSLOG_PRI) {
      if (auto v = d.val.as_int()) priority = static_cast<int>(*v);
      if (for_peer) priority = LOG_PRI(priority);
    } else if (d.key == PMIX_LOG_TIMESTAMP || (d.key == PMIX_LOG_GENERATE_TIMESTAMP && d.val.truthy())) {
      std::time_t t = std::time(nullptr);
      if (d.key == PMIX_LOG_TIMESTAMP)
        if (auto v = d.val.as_int()) t = static_cast<std::time_t>(*v);
      char buf[64];
      std::tm tm{};
      ::localtime_r(&t, &tm);
      std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S ", &tm);
      stamp = buf;
    }
  }
  int logged = 0;
  for (const auto& d : data) {
    const bool to_stderr = d.key == PMIX_LOG_STDERR, to_stdout = d.key == PMIX_LOG_STDOUT;
    const bool to_syslog = d.key == PMIX_LOG_SYSLOG || d.key == PMIX_LOG_LOCAL_SYSLOG;
    if (!to_stderr && !to_stdout && !to_syslog) {
      if (directives::unsupported("PMIx_Log", d.key, d.flags, "no such channel on this server") != PMIX_SUCCESS) {
        error = "required log channel " + d.key + " is not available here";
        return PMIX_ERR_NOT_SUPPORTED;
      }
      continue;
    }
    const auto* text = d.val.as_string();
    if (text == nullptr) {
      error = d.key + " must be a string";
      return PMIX_ERR_BAD_PARAM;
    }
    std::string body = *text;
    std::string who = to_string(from);
    if (for_peer) {
      if (!body.empty() && body.back() == '\n') body.pop_back();  // the line's own end
      body = log::escaped(body);
      who = log::escaped(who);
    }
    if (to_syslog) {
      ::syslog(priority, "%s[%s] %s", stamp.c_str(), who.c_str(), body.c_str());
    } else {
      std::string line = stamp + "[" + who + "] " + body;
      if (line.empty() || line.back() != '\n') line += '\n';
      write_all(to_stderr ? STDERR_FILENO : STDOUT_FILENO, line);
    }
    ++logged;
  }
  if (logged == 0 && !data.empty()) {
    error = "no entry had a channel on this server";
    return PMIX_ERR_NOT_SUPPORTED;
  }
  return PMIX_SUCCESS;
}

}  // namespace pmix::logging
