#include "tests/e2e/tool_steps.hpp"

#include "tests/support/memory.hpp"

#include <dirent.h>
#include <pmix_tool.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

namespace pmix::test {
namespace {

std::string name_of(const pmix_proc_t& p) { return std::string{p.nspace} + "." + std::to_string(p.rank); }

// The directives <how> names (see tool_steps.hpp), each to destruct.
struct attach_info {
  std::vector<pmix_info_t> v;
  attach_info() = default;
  attach_info(const attach_info&) = delete;
  ~attach_info() {
    for (auto& i : v) PMIX_INFO_DESTRUCT(&i);
  }
  pmix_info_t* data() { return v.empty() ? nullptr : v.data(); }
};

void fill(const std::string& how, const std::string& option, attach_info& out) {
  out.v.reserve(2);
  const auto eq = how.find('=');
  const auto kind = how.substr(0, eq);
  const auto arg = eq == std::string::npos ? std::string{} : how.substr(eq + 1);
  if (kind == "uri_env") {
    const char* uri = std::getenv(arg.c_str());
    out.v.emplace_back();
    PMIX_INFO_LOAD(&out.v.back(), PMIX_SERVER_URI, uri == nullptr ? "" : uri, PMIX_STRING);
  } else if (kind == "nspace") {
    out.v.emplace_back();
    PMIX_INFO_LOAD(&out.v.back(), PMIX_SERVER_NSPACE, arg.c_str(), PMIX_STRING);
  } else if (kind == "pid") {
    pid_t pid = static_cast<pid_t>(std::atoi(arg.c_str()));
    out.v.emplace_back();
    PMIX_INFO_LOAD(&out.v.back(), PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
  } else if (kind == "system") {
    bool yes = true;
    out.v.emplace_back();
    PMIX_INFO_LOAD(&out.v.back(), PMIX_CONNECT_TO_SYSTEM, &yes, PMIX_BOOL);
  } else if (kind == "search") {
    std::uint32_t none = 0;
    out.v.emplace_back();
    PMIX_INFO_LOAD(&out.v.back(), PMIX_CONNECT_MAX_RETRIES, &none, PMIX_UINT32);
  }
  if (option == "primary" || option == "secondary") {
    bool primary = option == "primary";
    out.v.emplace_back();
    PMIX_INFO_LOAD(&out.v.back(), PMIX_PRIMARY_SERVER, &primary, PMIX_BOOL);
  }
}

pmix_status_t attach(const std::string& how, const std::string& option, pmix_proc_t& me,
                     pmix_proc_t& server) {
  attach_info info;
  fill(how, option, info);
  return PMIx_tool_attach_to_server(&me, &server, info.data(), info.v.size());
}

pmix_proc_t server_named(const std::vector<std::string>& parts) {
  pmix_proc_t p;
  PMIX_LOAD_PROCID(&p, parts.at(1).c_str(),
                   static_cast<pmix_rank_t>(std::strtoul(parts.at(2).c_str(), nullptr, 10)));
  return p;
}



// tool_attach_later's thread and its attach's status.
struct later {
  std::thread thread;
  pmix_status_t status = PMIX_ERROR;
};
std::unique_ptr<later> pending_attach;

// The events on_event's handler saw: the source of the first of each code.
struct seen_events {
  std::mutex m;
  std::condition_variable cv;
  std::map<pmix_status_t, std::string> source;
};
seen_events& seen() {
  static seen_events* s = new seen_events;  // outlives the library's threads
  return *s;
}

void record_event(size_t, pmix_status_t status, const pmix_proc_t* source, pmix_info_t[], size_t,
                  pmix_info_t[], size_t, pmix_event_notification_cbfunc_fn_t cbfunc, void* cbdata) {
  {
    auto& s = seen();
    std::lock_guard<std::mutex> guard{s.m};
    s.source.emplace(status, source == nullptr ? std::string{"(none)"} : name_of(*source));
  }
  seen().cv.notify_all();
  if (cbfunc != nullptr) cbfunc(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
}

}  // namespace

bool run_tool_step(const std::string& step, const std::vector<std::string>& parts, const say_fn& say) {
  const auto& cmd = parts.at(0);
  const auto option = [&](std::size_t k) { return parts.size() > k ? parts[k] : std::string{}; };
  if (cmd == "tool_attach") {
    pmix_proc_t me, server;
    const auto rc = attach(parts.at(1), option(2), me, server);
    say(step, rc, rc == PMIX_SUCCESS ? name_of(me) + " " + name_of(server) : "");
  } else if (cmd == "tool_connect") {
    attach_info info;
    fill(parts.at(1), option(2), info);
    pmix_proc_t me;
    const auto rc = PMIx_tool_connect_to_server(&me, info.data(), info.v.size());
    say(step, rc, rc == PMIX_SUCCESS ? name_of(me) : "");
  } else if (cmd == "tool_servers") {
    pmix_proc_t* servers = nullptr;
    size_t n = 0;
    const auto rc = PMIx_tool_get_servers(&servers, &n);
    std::string list;
    for (size_t k = 0; k < n; ++k) list += (k == 0 ? "" : ",") + name_of(servers[k]);
    say(step, rc, rc == PMIX_SUCCESS ? list : (servers == nullptr && n == 0 ? "(none)" : "(left behind)"));
    PMIX_PROC_FREE(servers, n);
  } else if (cmd == "tool_set_server") {
    const auto server = server_named(parts);
    std::vector<pmix_info_t> info;
    const auto wait = option(3);
    if (wait.rfind("wait=", 0) == 0) {
      bool yes = true;
      int seconds = std::atoi(wait.substr(5).c_str());
      info.resize(2);
      PMIX_INFO_LOAD(&info[0], PMIX_WAIT_FOR_CONNECTION, &yes, PMIX_BOOL);
      PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &seconds, PMIX_INT);
    }
    const auto start = std::chrono::steady_clock::now();
    const auto rc = PMIx_tool_set_server(&server, info.empty() ? nullptr : info.data(), info.size());
    const auto waited =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    say(step, rc, info.empty() ? "" : "waited_ms=" + std::to_string(waited.count()));
    for (auto& i : info) PMIX_INFO_DESTRUCT(&i);
  } else if (cmd == "tool_disconnect") {
    if (option(1) == "null") return say(step, PMIx_tool_disconnect(nullptr), ""), true;
    const auto server = server_named(parts);
    say(step, PMIx_tool_disconnect(&server), "");
  } else if (cmd == "tool_attach_later") {
    const int ms = std::atoi(parts.at(1).c_str());
    const auto how = parts.at(2);
    pending_attach = std::make_unique<later>();
    auto* p = pending_attach.get();
    p->thread = std::thread([p, ms, how] {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      pmix_proc_t me, server;
      p->status = attach(how, "secondary", me, server);
    });
    say(step, PMIX_SUCCESS, "");
  } else if (cmd == "tool_join") {
    if (!pending_attach) return say(step, PMIX_ERR_NOT_FOUND, ""), true;
    pending_attach->thread.join();
    say(step, pending_attach->status, "");
    pending_attach.reset();
  } else if (cmd == "tool_attach_cycles") {
    const auto how = parts.at(1);
    const int n = std::atoi(parts.at(2).c_str());
    const int fds_before = pmix::test::open_fds();
    int ok = 0, failed = 0, fds_start = 0;
    long rss_start = 0;
    std::string first_error;
    for (int k = 0; k < n; ++k) {
      if (k == n / 10) {
        rss_start = pmix::test::held_kb();
        fds_start = pmix::test::open_fds();
      }
      pmix_proc_t me, server;
      auto rc = attach(how, "secondary", me, server);
      if (rc == PMIX_SUCCESS) rc = PMIx_tool_disconnect(&server);
      if (rc != PMIX_SUCCESS && failed == 0) first_error = PMIx_Error_string(rc);
      (rc == PMIX_SUCCESS ? ok : failed)++;
    }
    say(step, failed == 0 ? PMIX_SUCCESS : PMIX_ERROR,
        "ok=" + std::to_string(ok) + " failed=" + std::to_string(failed) +
            " first_error=" + (first_error.empty() ? "-" : first_error) + " rss_growth_kb=" +
            std::to_string(pmix::test::held_kb() - rss_start) + " fds_before=" + std::to_string(fds_before) +
            " fds_start=" + std::to_string(fds_start) + " fds_end=" + std::to_string(pmix::test::open_fds()));
  } else if (cmd == "on_event") {
    pmix_status_t code = static_cast<pmix_status_t>(std::atoi(parts.at(1).c_str()));
    const auto rc = PMIx_Register_event_handler(&code, 1, nullptr, 0, record_event, nullptr, nullptr);
    say(step, rc >= 0 ? PMIX_SUCCESS : rc, "");
  } else if (cmd == "wait_event") {
    const auto code = static_cast<pmix_status_t>(std::atoi(parts.at(1).c_str()));
    auto& s = seen();
    std::unique_lock<std::mutex> guard{s.m};
    const bool arrived =
        s.cv.wait_for(guard, std::chrono::seconds(120), [&] { return s.source.count(code) > 0; });
    say(step, arrived ? PMIX_SUCCESS : PMIX_ERR_TIMEOUT, arrived ? s.source[code] : "");
  } else {
    return false;
  }
  return true;
}

}  // namespace pmix::test
