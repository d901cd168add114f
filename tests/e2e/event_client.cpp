// A PMIx client (or tool) for the event tests, driven by its command line.
// Each argument is one step; each step prints "<step> <STATUS> [...]".
//
//   init | finalize | tool_init | tool_finalize   (tool_init: PMIX_SERVER_URI
//                                 from $TEST_SERVER_URI)
//   on:<name>:<codes>[:<option>...]   registers a handler called <name> for the
//                                 comma-separated codes, or "all" (a default
//                                 handler). Options: first, last, prepend,
//                                 first_cat, last_cat, before=<name>,
//                                 after=<name>, complete (answers
//                                 PMIX_EVENT_ACTION_COMPLETE), read_after (reads
//                                 its info and source again after calling back;
//                                 prints "after <name> <source> text=<t>"), nb (registers
//                                 through a callback). Prints the reference.
//   off:<name>                    deregisters that handler (blocking)
//   notify:<code>:<range>[:custom=<ns>.<rank>,...][:text=<t>][:nondefault][:nb][:source=<ns>.<rank>]
//                                 ranges: rm local namespace session global custom
//                                 proc_local undef, or a number; the source is
//                                 this process unless given
//   wait_events:<n>               waits until handlers ran n times in all
//   probe_in_handler              inside a handler, calls every blocking API form;
//                                 prints "probe <call> <STATUS>"
//   touch:<path> | wait_file:<path> | sleep:<ms>
//   fence                         PMIx_Fence over the whole namespace
//   board_mappings                how many mappings of its namespace's fence
//                                 board this process has ("mapped N")
//
// Each handler run prints
//   event <name> <code> <source nspace>.<rank> prior=<results before it> [text=<t>]
// and hands on one result, "handled" = <name>.
#include <pmix.h>
#include <pmix_tool.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/probe.hpp"
#include "tests/e2e/steps.hpp"

namespace {

pmix_proc_t me;
std::mutex out_mutex;
std::mutex m;
std::condition_variable cv;
int events_seen = 0;
std::map<std::string, size_t> refs;  // handler name -> reference

void say(const std::string& step, pmix_status_t rc, const std::string& extra = "") {
  std::lock_guard<std::mutex> guard{out_mutex};
  std::printf("%s %s%s%s\n", step.c_str(), PMIx_Error_string(rc), extra.empty() ? "" : " ", extra.c_str());
  std::fflush(stdout);
}

using pmix::test::split;

// What a handler knows about itself (given back as PMIX_EVENT_RETURN_OBJECT).
struct handler_info {
  std::string name;
  bool complete = false;
  bool read_after = false;  // reads its info and source again after calling back
};

// Every handler_info made, for as long as the process lives (a handler may
// run until exit): held here, so none is lost once the library forgets a
// handler at finalize (LeakSanitizer reported them). Never destroyed.
std::vector<handler_info*>& handler_infos() {
  static auto* all = new std::vector<handler_info*>;
  return *all;
}

void count_event() {
  std::lock_guard<std::mutex> guard{m};
  ++events_seen;
  cv.notify_all();
}

struct result_holder {
  pmix_info_t info;
};

void free_result(pmix_status_t, void* cbdata) {
  auto* r = static_cast<result_holder*>(cbdata);
  PMIX_INFO_DESTRUCT(&r->info);
  delete r;
}

void handler(size_t, pmix_status_t status, const pmix_proc_t* source, pmix_info_t info[],
             size_t ninfo, pmix_info_t*, size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
             void* cbdata) {
  const handler_info* self = nullptr;
  std::string text;
  for (size_t k = 0; k < ninfo; ++k) {
    if (std::strcmp(info[k].key, PMIX_EVENT_RETURN_OBJECT) == 0)
      self = static_cast<const handler_info*>(info[k].value.data.ptr);
    if (std::strcmp(info[k].key, PMIX_EVENT_TEXT_MESSAGE) == 0 && info[k].value.type == PMIX_STRING)
      text = info[k].value.data.string;
  }
  const std::string name = self == nullptr ? "?" : self->name;
  {
    std::lock_guard<std::mutex> guard{out_mutex};
    std::printf("event %s %d %s.%u prior=%zu%s\n", name.c_str(), status,
                source == nullptr ? "(null)" : source->nspace, source == nullptr ? 0u : source->rank,
                nresults, text.empty() ? "" : (" text=" + text).c_str());
    std::fflush(stdout);
  }
  count_event();
  auto* r = new result_holder;
  PMIX_INFO_LOAD(&r->info, "handled", name.c_str(), PMIX_STRING);
  cbfunc(self != nullptr && self->complete ? PMIX_EVENT_ACTION_COMPLETE : PMIX_SUCCESS, &r->info, 1,
         free_result, r, cbdata);
  if (self == nullptr || !self->read_after) return;
  // What it was handed stays valid until it returns (OpenPMIx programs
  // read PMIX_EVENT_AFFECTED_PROC after calling back).
  std::string again;
  for (size_t k = 0; k < ninfo; ++k)
    if (std::strcmp(info[k].key, PMIX_EVENT_TEXT_MESSAGE) == 0 && info[k].value.type == PMIX_STRING)
      again = info[k].value.data.string;
  std::lock_guard<std::mutex> guard{out_mutex};
  std::printf("after %s %s.%u text=%s\n", name.c_str(), source->nspace, source->rank, again.c_str());
  std::fflush(stdout);
}

struct reg_wait {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  pmix_status_t status = PMIX_ERROR;
  size_t ref = 0;
};

void registered(pmix_status_t status, size_t ref, void* cbdata) {
  auto* w = static_cast<reg_wait*>(cbdata);
  std::lock_guard<std::mutex> guard{w->m};
  w->status = status;
  w->ref = ref;
  w->done = true;
  w->cv.notify_all();
}

void op_done(pmix_status_t status, void* cbdata) { registered(status, 0, cbdata); }

pmix_data_range_t range_of(const std::string& r) {
  if (r == "rm") return PMIX_RANGE_RM;
  if (r == "local") return PMIX_RANGE_LOCAL;
  if (r == "namespace") return PMIX_RANGE_NAMESPACE;
  if (r == "session") return PMIX_RANGE_SESSION;
  if (r == "global") return PMIX_RANGE_GLOBAL;
  if (r == "custom") return PMIX_RANGE_CUSTOM;
  if (r == "proc_local") return PMIX_RANGE_PROC_LOCAL;
  if (r == "undef") return PMIX_RANGE_UNDEF;
  return static_cast<pmix_data_range_t>(std::atoi(r.c_str()));
}

struct probe_state {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::vector<std::pair<std::string, pmix_status_t>> results;
};
probe_state* probing = nullptr;

void probe_handler(size_t, pmix_status_t, const pmix_proc_t*, pmix_info_t[], size_t, pmix_info_t*,
                   size_t, pmix_event_notification_cbfunc_fn_t cbfunc, void* cbdata) {
  auto results = pmix::test::call_every_blocking_form(me.nspace);
  cbfunc(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
  std::lock_guard<std::mutex> guard{probing->m};
  probing->results = std::move(results);
  probing->done = true;
  probing->cv.notify_all();
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string step = argv[i];
    const auto parts = split(step, ':');
    const auto& cmd = parts[0];
    if (cmd == "init") {
      const auto rc = PMIx_Init(&me, nullptr, 0);
      say(step, rc, rc == PMIX_SUCCESS ? std::string{me.nspace} + " " + std::to_string(me.rank) : "");
    } else if (cmd == "finalize") {
      say(step, PMIx_Finalize(nullptr, 0));
    } else if (cmd == "fence") {
      say(step, PMIx_Fence(nullptr, 0, nullptr, 0));  // the whole namespace
    } else if (cmd == "board_mappings") {
      std::ifstream maps("/proc/self/maps");
      std::string line;
      int n = 0;
      while (std::getline(maps, line))
        if (line.find("memfd:pmix-cxx-fence-board") != std::string::npos) ++n;
      say(step, PMIX_SUCCESS, "mapped " + std::to_string(n));
    } else if (cmd == "tool_init") {
      pmix_info_t info;
      const char* uri = std::getenv("TEST_SERVER_URI");
      PMIX_INFO_LOAD(&info, PMIX_SERVER_URI, uri == nullptr ? "" : uri, PMIX_STRING);
      const auto rc = PMIx_tool_init(&me, &info, 1);
      say(step, rc, rc == PMIX_SUCCESS ? std::string{me.nspace} + " " + std::to_string(me.rank) : "");
      PMIX_INFO_DESTRUCT(&info);
    } else if (cmd == "tool_finalize") {
      say(step, PMIx_tool_finalize());
    } else if (cmd == "on") {
      auto* self = new handler_info;  // lives as long as the process
      handler_infos().push_back(self);
      self->name = parts.at(1);
      std::vector<pmix_status_t> codes;
      if (parts.at(2) != "all")
        for (const auto& c : split(parts[2], ',')) codes.push_back(std::atoi(c.c_str()));
      std::vector<pmix_info_t> dirs(2);
      PMIX_INFO_LOAD(&dirs[0], PMIX_EVENT_RETURN_OBJECT, self, PMIX_POINTER);
      PMIX_INFO_LOAD(&dirs[1], PMIX_EVENT_HDLR_NAME, self->name.c_str(), PMIX_STRING);
      bool nb = false;
      dirs.reserve(parts.size() + 2);
      for (std::size_t k = 3; k < parts.size(); ++k) {
        const auto& o = parts[k];
        bool yes = true;
        const char* key = o == "first" ? PMIX_EVENT_HDLR_FIRST
                          : o == "last" ? PMIX_EVENT_HDLR_LAST
                          : o == "prepend" ? PMIX_EVENT_HDLR_PREPEND
                          : o == "first_cat" ? PMIX_EVENT_HDLR_FIRST_IN_CATEGORY
                          : o == "last_cat" ? PMIX_EVENT_HDLR_LAST_IN_CATEGORY
                                            : nullptr;
        if (key != nullptr) {
          dirs.emplace_back();
          PMIX_INFO_LOAD(&dirs.back(), key, &yes, PMIX_BOOL);
        } else if (o.rfind("before=", 0) == 0 || o.rfind("after=", 0) == 0) {
          const bool before = o[0] == 'b';
          dirs.emplace_back();
          PMIX_INFO_LOAD(&dirs.back(), before ? PMIX_EVENT_HDLR_BEFORE : PMIX_EVENT_HDLR_AFTER,
                         o.substr(before ? 7 : 6).c_str(), PMIX_STRING);
        } else if (o == "complete") {
          self->complete = true;
        } else if (o == "read_after") {
          self->read_after = true;
        } else if (o == "nb") {
          nb = true;
        }
      }
      pmix_status_t rc;
      size_t ref = 0;
      if (nb) {
        reg_wait w;
        rc = PMIx_Register_event_handler(codes.empty() ? nullptr : codes.data(), codes.size(),
                                         dirs.data(), dirs.size(), handler, registered, &w);
        if (rc == PMIX_SUCCESS) {
          std::unique_lock<std::mutex> guard{w.m};
          w.cv.wait(guard, [&] { return w.done; });
          rc = w.status;
          ref = w.ref;
        }
      } else {
        rc = PMIx_Register_event_handler(codes.empty() ? nullptr : codes.data(), codes.size(),
                                         dirs.data(), dirs.size(), handler, nullptr, nullptr);
        if (rc >= 0) {
          ref = static_cast<size_t>(rc);
          rc = PMIX_SUCCESS;
        }
      }
      if (rc == PMIX_SUCCESS) refs[self->name] = ref;
      say(step, rc, rc == PMIX_SUCCESS ? "ref=" + std::to_string(ref) : "");
      for (auto& d : dirs) PMIX_INFO_DESTRUCT(&d);
    } else if (cmd == "off") {
      const auto it = refs.find(parts.at(1));
      say(step, PMIx_Deregister_event_handler(it == refs.end() ? 999999 : it->second, nullptr, nullptr));
    } else if (cmd == "notify") {
      const pmix_status_t code = std::atoi(parts.at(1).c_str());
      const auto range = range_of(parts.at(2));
      std::vector<pmix_info_t> info;
      info.reserve(4);
      std::vector<pmix_proc_t> custom;
      bool nb = false;
      pmix_proc_t source = me;
      for (std::size_t k = 3; k < parts.size(); ++k) {
        const auto& o = parts[k];
        if (o.rfind("custom=", 0) == 0) {
          for (const auto& p : split(o.substr(7), ',')) {
            const auto dot = p.rfind('.');
            custom.emplace_back();
            const std::string r = p.substr(dot + 1);
            PMIX_LOAD_PROCID(&custom.back(), p.substr(0, dot).c_str(),
                             r == "*" ? PMIX_RANK_WILDCARD : static_cast<pmix_rank_t>(std::atoi(r.c_str())));
          }
          pmix_data_array_t array{PMIX_PROC, custom.size(), custom.data()};
          info.emplace_back();
          PMIX_INFO_LOAD(&info.back(), PMIX_EVENT_CUSTOM_RANGE, &array, PMIX_DATA_ARRAY);
        } else if (o.rfind("text=", 0) == 0) {
          info.emplace_back();
          PMIX_INFO_LOAD(&info.back(), PMIX_EVENT_TEXT_MESSAGE, o.substr(5).c_str(), PMIX_STRING);
        } else if (o == "nondefault") {
          bool yes = true;
          info.emplace_back();
          PMIX_INFO_LOAD(&info.back(), PMIX_EVENT_NON_DEFAULT, &yes, PMIX_BOOL);
        } else if (o == "nb") {
          nb = true;
        } else if (o.rfind("source=", 0) == 0) {
          const auto dot = o.rfind('.');
          PMIX_LOAD_PROCID(&source, o.substr(7, dot - 7).c_str(), static_cast<pmix_rank_t>(std::atoi(o.c_str() + dot + 1)));
        }
      }
      pmix_status_t rc;
      if (nb) {
        reg_wait w;
        rc = PMIx_Notify_event(code, &source, range, info.empty() ? nullptr : info.data(), info.size(),
                               op_done, &w);
        if (rc == PMIX_SUCCESS) {
          std::unique_lock<std::mutex> guard{w.m};
          w.cv.wait(guard, [&] { return w.done; });
          rc = w.status;
        }
      } else {
        rc = PMIx_Notify_event(code, &source, range, info.empty() ? nullptr : info.data(), info.size(),
                               nullptr, nullptr);
      }
      say(step, rc);
      for (auto& x : info) PMIX_INFO_DESTRUCT(&x);
    } else if (cmd == "wait_events") {
      const int n = std::atoi(parts.at(1).c_str());
      std::unique_lock<std::mutex> guard{m};
      const bool ok = cv.wait_for(guard, std::chrono::seconds(120), [&] { return events_seen >= n; });
      guard.unlock();
      say(step, ok ? PMIX_SUCCESS : PMIX_ERR_TIMEOUT);
    } else if (cmd == "probe_in_handler") {
      probe_state state;
      probing = &state;
      pmix_status_t code = 7777;
      auto rc = PMIx_Register_event_handler(&code, 1, nullptr, 0, probe_handler, nullptr, nullptr);
      if (rc >= 0) rc = PMIx_Notify_event(code, &me, PMIX_RANGE_PROC_LOCAL, nullptr, 0, nullptr, nullptr);
      if (rc == PMIX_SUCCESS) {
        std::unique_lock<std::mutex> guard{state.m};
        state.cv.wait(guard, [&] { return state.done; });
      }
      for (const auto& [name, status] : state.results) say("probe " + name, status);
      say(step, rc);
    } else if (cmd == "touch") {
      std::FILE* f = std::fopen(step.substr(6).c_str(), "w");
      if (f != nullptr) std::fclose(f);
    } else if (cmd == "wait_file") {
      const auto path = step.substr(10);
      int waited = 0;
      while (::access(path.c_str(), F_OK) != 0 && waited++ < 120000)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      say(step, ::access(path.c_str(), F_OK) == 0 ? PMIX_SUCCESS : PMIX_ERR_TIMEOUT);
    } else if (cmd == "sleep") {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(parts.at(1).c_str())));
    } else {
      std::fprintf(stderr, "event_client: unknown step '%s'\n", step.c_str());
      return 2;
    }
  }
  return 0;
}
