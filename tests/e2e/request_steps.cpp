#include "tests/e2e/request_steps.hpp"

#include "tests/e2e/steps.hpp"

#include <pmix.h>
#include <pmix_tool.h>

#include <climits>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <cstdio>
#include <thread>
#include <vector>

namespace pmix::test {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string first_string(const pmix_info_t* info, size_t n) {
  for (size_t k = 0; k < n; ++k)
    if (info[k].value.type == PMIX_STRING && info[k].value.data.string != nullptr)
      return std::string{info[k].key} + "=" + info[k].value.data.string;
  return "";
}

std::string identity(const pmix_info_t* info, size_t n) {
  std::string out;
  for (size_t k = 0; k < n; ++k) {
    if (PMIX_CHECK_KEY(&info[k], PMIX_USERID)) out += " uid=" + std::to_string(info[k].value.data.uint32);
    if (PMIX_CHECK_KEY(&info[k], PMIX_GRPID)) out += " gid=" + std::to_string(info[k].value.data.uint32);
    if (PMIX_CHECK_KEY(&info[k], PMIX_CRED_TYPE) && info[k].value.type == PMIX_STRING)
      out += std::string{" type="} + info[k].value.data.string;
  }
  return out.empty() ? out : out.substr(1);
}

// Events seen by on_event handlers: code -> sources.
std::mutex events_mutex;
std::condition_variable events_cv;
std::map<pmix_status_t, std::vector<std::string>> events_seen;

void count_event(size_t, pmix_status_t status, const pmix_proc_t* source, pmix_info_t[], size_t, pmix_info_t*,
                 size_t, pmix_event_notification_cbfunc_fn_t cbfunc, void* cbdata) {
  {
    std::lock_guard<std::mutex> g{events_mutex};
    events_seen[status].push_back(source == nullptr ? "?" : std::string{source->nspace} + "." +
                                                                std::to_string(source->rank));
  }
  events_cv.notify_all();
  if (cbfunc != nullptr) cbfunc(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
}

// Output pulled with iof_pull: "<channel>/<source>/<text>" in arrival order.
std::mutex iof_mutex;
std::condition_variable iof_cv;
std::vector<std::string> iof_seen;
std::string iof_bytes;               // every payload's bytes, in arrival order
std::set<std::string> iof_sources;   // "<channel>/<source>" of each payload
std::size_t last_iof_ref = 0;

// The PMIX_ALLOC_ID of the last allocation answer that had one.
std::string last_allocation_id;

// Every result as key=value (strings and unsigned integers), space-joined.
std::string all_results(const pmix_info_t* info, size_t n) {
  std::string out;
  for (size_t k = 0; k < n; ++k) {
    const pmix_value_t& v = info[k].value;
    std::string text;
    switch (v.type) {
      case PMIX_STRING: text = v.data.string == nullptr ? "(null)" : v.data.string; break;
      case PMIX_UINT64: text = std::to_string(v.data.uint64); break;
      case PMIX_UINT32: text = std::to_string(v.data.uint32); break;
      case PMIX_SIZE: text = std::to_string(v.data.size); break;
      default: text = "<type " + std::to_string(v.type) + ">";
    }
    if (PMIX_CHECK_KEY(&info[k], PMIX_ALLOC_ID) && v.type == PMIX_STRING && v.data.string != nullptr)
      last_allocation_id = v.data.string;
    out += (out.empty() ? "" : " ") + std::string{info[k].key} + "=" + text;
  }
  return out;
}

void on_output(size_t, pmix_iof_channel_t channel, pmix_proc_t* source, pmix_byte_object_t* payload, pmix_info_t[],
               size_t) {
  {
    std::lock_guard<std::mutex> g{iof_mutex};
    const std::string from = std::to_string(channel) + "/" + source->nspace + "." + std::to_string(source->rank);
    const std::string bytes(payload->bytes == nullptr ? "" : payload->bytes, payload->size);
    iof_seen.push_back(from + "/" + bytes);
    iof_bytes += bytes;
    iof_sources.insert(from);
  }
  iof_cv.notify_all();
}

}  // namespace

bool run_request_step(const std::string& step, const std::vector<std::string>& parts, const pmix_proc_t& me,
                      const say_fn& say) {
  const auto& cmd = parts.at(0);
  if (cmd == "credential") {
    pmix_byte_object_t cred{nullptr, 0};
    pmix_info_t lifetime;
    const bool timed = parts.size() > 2;
    if (timed) {
      // An int, as the Standard types PMIX_TIMEOUT; a larger number as an
      // int64 (programs pass what they have).
      const long long seconds = std::strtoll(parts.at(2).c_str(), nullptr, 10);
      if (seconds >= INT_MIN && seconds <= INT_MAX) {
        const int value = static_cast<int>(seconds);
        PMIX_INFO_LOAD(&lifetime, PMIX_TIMEOUT, &value, PMIX_INT);
      } else {
        const int64_t value = seconds;
        PMIX_INFO_LOAD(&lifetime, PMIX_TIMEOUT, &value, PMIX_INT64);
      }
    }
    const auto rc = PMIx_Get_credential(timed ? &lifetime : nullptr, timed ? 1 : 0, &cred);
    if (timed) PMIX_INFO_DESTRUCT(&lifetime);
    std::ofstream(parts.at(1), std::ios::binary).write(cred.bytes, static_cast<std::streamsize>(cred.size));
    say(step, rc, std::to_string(cred.size));
    std::free(cred.bytes);
  } else if (cmd == "credential_nb") {
    answer a;
    static answer* current;
    static std::string path;
    current = &a;
    path = parts.at(1);
    const auto started = PMIx_Get_credential_nb(
        nullptr, 0,
        [](pmix_status_t st, pmix_byte_object_t* cred, pmix_info_t info[], size_t ninfo, void*) {
          std::ofstream(path, std::ios::binary).write(cred == nullptr ? "" : cred->bytes,
                                                      cred == nullptr ? 0 : static_cast<std::streamsize>(cred->size));
          current->finish(st, std::to_string(cred == nullptr ? 0 : cred->size) + " " + identity(info, ninfo));
        },
        nullptr);
    const auto rc = a.wait(started);
    say(step, rc, a.text);
  } else if (cmd == "validate") {
    const auto bytes = read_file(parts.at(1));
    pmix_byte_object_t cred{const_cast<char*>(bytes.data()), bytes.size()};
    pmix_info_t* results = nullptr;
    size_t nresults = 0;
    const auto rc = PMIx_Validate_credential(&cred, nullptr, 0, &results, &nresults);
    say(step, rc, identity(results, nresults));
    PMIX_INFO_FREE(results, nresults);
  } else if (cmd == "validate_nb") {
    const auto bytes = read_file(parts.at(1));
    pmix_byte_object_t cred{const_cast<char*>(bytes.data()), bytes.size()};
    answer a;
    static answer* current;
    current = &a;
    const auto started = PMIx_Validate_credential_nb(
        &cred, nullptr, 0,
        [](pmix_status_t st, pmix_info_t info[], size_t ninfo, void*) { current->finish(st, identity(info, ninfo)); },
        nullptr);
    const auto rc = a.wait(started);
    say(step, rc, a.text);
  } else if (cmd == "corrupt") {
    auto bytes = read_file(parts.at(1));
    if (!bytes.empty()) bytes[bytes.size() / 2] ^= 0x01;
    std::ofstream(parts.at(1), std::ios::binary | std::ios::trunc).write(bytes.data(),
                                                                          static_cast<std::streamsize>(bytes.size()));
    say(step, PMIX_SUCCESS, "");
  } else if (cmd == "allocate" && parts.size() > 2) {
    const auto directive = static_cast<pmix_alloc_directive_t>(std::atoi(parts.at(1).c_str()));
    std::vector<pmix_info_t> asked(parts.size() - 2);
    for (std::size_t k = 2; k < parts.size(); ++k) {
      const auto eq = parts[k].find('=');
      const std::string field = parts[k].substr(0, eq);
      const std::string value = eq == std::string::npos ? "" : parts[k].substr(eq + 1);
      pmix_info_t& i = asked[k - 2];
      if (field == "nodes" || field == "cpus") {
        const uint64_t n = std::strtoull(value.c_str(), nullptr, 10);
        PMIX_INFO_LOAD(&i, field == "nodes" ? PMIX_ALLOC_NUM_NODES : PMIX_ALLOC_NUM_CPUS, &n, PMIX_UINT64);
      } else if (field == "time") {
        const uint32_t t = static_cast<uint32_t>(std::strtoul(value.c_str(), nullptr, 10));
        PMIX_INFO_LOAD(&i, PMIX_ALLOC_TIME, &t, PMIX_UINT32);
      } else if (field == "mem") {
        const float mb = std::strtof(value.c_str(), nullptr);
        PMIX_INFO_LOAD(&i, PMIX_ALLOC_MEM_SIZE, &mb, PMIX_FLOAT);
        PMIX_INFO_REQUIRED(&i);
      } else {
        const char* key = field == "nodelist" ? PMIX_ALLOC_NODE_LIST : field == "reqid" ? PMIX_ALLOC_REQ_ID : PMIX_ALLOC_ID;
        const std::string text = field == "id" && value == "last" ? last_allocation_id : value;
        PMIX_INFO_LOAD(&i, key, text.c_str(), PMIX_STRING);
      }
    }
    pmix_info_t* results = nullptr;
    size_t nresults = 0;
    const auto rc = PMIx_Allocation_request(directive, asked.data(), asked.size(), &results, &nresults);
    say(step, rc, all_results(results, nresults));
    PMIX_INFO_FREE(results, nresults);
    for (auto& i : asked) PMIX_INFO_DESTRUCT(&i);
  } else if (cmd == "allocate" || cmd == "allocate_nb") {
    const auto directive = static_cast<pmix_alloc_directive_t>(std::atoi(parts.at(1).c_str()));
    pmix_info_t want;
    PMIX_INFO_LOAD(&want, "want.nodes", "2", PMIX_STRING);
    if (cmd == "allocate") {
      pmix_info_t* results = nullptr;
      size_t nresults = 0;
      const auto rc = PMIx_Allocation_request(directive, &want, 1, &results, &nresults);
      say(step, rc, first_string(results, nresults));
      PMIX_INFO_FREE(results, nresults);
    } else {
      answer a;
      static answer* current;
      current = &a;
      const auto started = PMIx_Allocation_request_nb(
          directive, &want, 1,
          [](pmix_status_t st, pmix_info_t* info, size_t n, void*, pmix_release_cbfunc_t release, void* rd) {
            current->finish(st, first_string(info, n));
            if (release != nullptr) release(rd);
          },
          nullptr);
      const auto rc = a.wait(started);
      say(step, rc, a.text);
    }
    PMIX_INFO_DESTRUCT(&want);
  } else if (cmd == "progress_stop") {
    // progress_stop[:noflush]: OpenPMIx 6.0's PMIx_Progress_thread_stop.
    pmix_info_t flush;
    bool yes = parts.size() < 2 || parts[1] != "noflush";
    PMIX_INFO_LOAD(&flush, PMIX_PROGRESS_THREAD_FLUSH, &yes, PMIX_BOOL);
    PMIx_Progress_thread_stop(&flush, 1);
    PMIX_INFO_DESTRUCT(&flush);
    say(step, PMIX_SUCCESS, "");
  } else if (cmd == "session_control" || cmd == "session_control_nb") {
    // session_control:<id>: pause that session (OpenPMIx 6.0).
    const auto id = static_cast<uint32_t>(std::strtoul(parts.at(1).c_str(), nullptr, 10));
    pmix_info_t pause;
    bool yes = true;
    PMIX_INFO_LOAD(&pause, "pmix.ssn.pause", &yes, PMIX_BOOL);
    if (cmd == "session_control") {
      say(step, PMIx_Session_control(id, &pause, 1, nullptr, nullptr), "");
    } else {
      answer a;
      static answer* current;
      current = &a;
      const auto started = PMIx_Session_control(
          id, &pause, 1,
          [](pmix_status_t st, pmix_info_t* info, size_t n, void*, pmix_release_cbfunc_t release, void* rd) {
            current->finish(st, first_string(info, n));
            if (release != nullptr) release(rd);
          },
          nullptr);
      say(step, a.wait(started), a.text);
    }
    PMIX_INFO_DESTRUCT(&pause);
  } else if (cmd == "resource_block" || cmd == "resource_block_nb") {
    // resource_block:<directive>:<name>: 4 GPUs and 16 cores (OpenPMIx 6.0).
    const auto directive = static_cast<pmix_resource_block_directive_t>(std::atoi(parts.at(1).c_str()));
    std::string name = parts.at(2);
    pmix_resource_unit_t units[2] = {{PMIX_DEVTYPE_GPU, 4}, {PMIX_DEVTYPE_CORE, 16}};
    pmix_info_t why;
    PMIX_INFO_LOAD(&why, "want.reason", "test", PMIX_STRING);
    if (cmd == "resource_block") {
      say(step, PMIx_Resource_block(directive, name.data(), units, 2, &why, 1), "");
    } else {
      answer a;
      static answer* current;
      current = &a;
      const auto started = PMIx_Resource_block_nb(directive, name.data(), units, 2, &why, 1,
                                                  [](pmix_status_t st, void*) { current->finish(st, ""); }, nullptr);
      say(step, a.wait(started), "");
    }
    PMIX_INFO_DESTRUCT(&why);
  } else if (cmd == "heartbeat" || cmd == "heartbeat_ptr") {
    pmix_info_t monitor, dirs[3];
    bool yes = true;
    uint32_t seconds = static_cast<uint32_t>(std::atoi(parts.at(1).c_str()));
    uint32_t drops = static_cast<uint32_t>(std::atoi(parts.at(2).c_str()));
    if (cmd == "heartbeat")
      PMIX_INFO_LOAD(&monitor, PMIX_MONITOR_HEARTBEAT, &yes, PMIX_BOOL);
    else  // as programs written for OpenPMIx ask: a NULL pointer
      PMIX_INFO_LOAD(&monitor, PMIX_MONITOR_HEARTBEAT, nullptr, PMIX_POINTER);
    PMIX_INFO_LOAD(&dirs[0], PMIX_MONITOR_HEARTBEAT_TIME, &seconds, PMIX_UINT32);
    PMIX_INFO_LOAD(&dirs[1], PMIX_MONITOR_HEARTBEAT_DROPS, &drops, PMIX_UINT32);
    PMIX_INFO_LOAD(&dirs[2], PMIX_MONITOR_ID, "hb", PMIX_STRING);
    pmix_info_t* results = nullptr;
    size_t nresults = 0;
    say(step, PMIx_Process_monitor(&monitor, PMIX_MONITOR_HEARTBEAT_ALERT, dirs, 3, &results, &nresults), "");
    PMIX_INFO_FREE(results, nresults);
    PMIX_INFO_DESTRUCT(&monitor);
    for (auto& d : dirs) PMIX_INFO_DESTRUCT(&d);
  } else if (cmd == "beats") {
    const int n = std::atoi(parts.at(1).c_str());
    const int ms = std::atoi(parts.at(2).c_str());
    for (int k = 0; k < n; ++k) {
      PMIx_Heartbeat();
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    }
    say(step, PMIX_SUCCESS, "");
  } else if (cmd == "monitor_cancel" || cmd == "monitor_file") {
    pmix_info_t monitor;
    if (cmd == "monitor_cancel")
      PMIX_INFO_LOAD(&monitor, PMIX_MONITOR_CANCEL, "hb", PMIX_STRING);
    else
      PMIX_INFO_LOAD(&monitor, PMIX_MONITOR_FILE, parts.at(1).c_str(), PMIX_STRING);
    pmix_info_t* results = nullptr;
    size_t nresults = 0;
    const auto rc = PMIx_Process_monitor(&monitor, PMIX_MONITOR_FILE_ALERT, nullptr, 0, &results, &nresults);
    say(step, rc, first_string(results, nresults));
    PMIX_INFO_FREE(results, nresults);
    PMIX_INFO_DESTRUCT(&monitor);
  } else if (cmd == "on_event") {
    pmix_status_t code = std::atoi(parts.at(1).c_str());
    const auto rc = PMIx_Register_event_handler(&code, 1, nullptr, 0, count_event, nullptr, nullptr);
    say(step, rc >= 0 ? PMIX_SUCCESS : rc, "");
  } else if (cmd == "wait_event") {
    const pmix_status_t code = std::atoi(parts.at(1).c_str());
    std::unique_lock<std::mutex> g{events_mutex};
    const bool got = events_cv.wait_for(g, std::chrono::seconds(120), [&] { return !events_seen[code].empty(); });
    say(step, got ? PMIX_SUCCESS : PMIX_ERR_TIMEOUT, got ? events_seen[code].front() : "");
  } else if (cmd == "fabric" || cmd == "fabric_nb") {
    pmix_fabric_t fabric;
    std::memset(&fabric, 0, sizeof fabric);
    fabric.name = const_cast<char*>("fab");
    pmix_status_t rc;
    if (cmd == "fabric") {
      rc = PMIx_Fabric_register(&fabric, nullptr, 0);
      say(step + ":register", rc, std::to_string(fabric.ninfo) + " " + first_string(fabric.info, fabric.ninfo));
      rc = PMIx_Fabric_update(&fabric);
      say(step + ":update", rc, std::to_string(fabric.ninfo));
      rc = PMIx_Fabric_deregister(&fabric);
    } else {
      answer a;
      static answer* current;
      current = &a;
      rc = a.wait(PMIx_Fabric_register_nb(&fabric, nullptr, 0,
                                          [](pmix_status_t st, void*) { current->finish(st, ""); }, nullptr));
      say(step + ":register", rc, std::to_string(fabric.ninfo) + " " + first_string(fabric.info, fabric.ninfo));
      answer b;
      current = &b;
      rc = b.wait(PMIx_Fabric_deregister_nb(&fabric, [](pmix_status_t st, void*) { current->finish(st, ""); },
                                            nullptr));
    }
    say(step + ":deregister", rc, std::to_string(fabric.ninfo));
  } else if (cmd == "iof_push" || cmd == "iof_push_end") {
    pmix_proc_t target;
    PMIX_LOAD_PROCID(&target, me.nspace,
                     parts.at(1) == "*" ? PMIX_RANK_WILDCARD : static_cast<pmix_rank_t>(std::atoi(parts.at(1).c_str())));
    pmix_status_t rc;
    if (cmd == "iof_push") {
      // The rest of the step, with "\n" standing for a newline.
      std::string text = step.substr(step.find(':', std::strlen("iof_push:")) + 1);
      for (std::size_t at; (at = text.find("\\n")) != std::string::npos;) text.replace(at, 2, "\n");
      pmix_byte_object_t bo{text.data(), text.size()};
      rc = PMIx_IOF_push(&target, 1, &bo, nullptr, 0, nullptr, nullptr);
    } else {
      rc = PMIx_IOF_push(&target, 1, nullptr, nullptr, 0, nullptr, nullptr);
    }
    say(step, rc, "");
  } else if (cmd == "iof_push_nb") {
    // iof_push_nb:<rank>:<n>[:<mark>]: n pushes ("0", "1", ...) at once
    // (callback form), then each one's status in order; with <mark>, the
    // file is made as soon as one of them is answered (pushes held for a
    // stopped stdin are not: the first answer is the one refused).
    pmix_proc_t target;
    PMIX_LOAD_PROCID(&target, me.nspace, static_cast<pmix_rank_t>(std::atoi(parts.at(1).c_str())));
    const int n = std::atoi(parts.at(2).c_str());
    std::vector<std::unique_ptr<answer>> answers;
    std::vector<std::string> texts;
    for (int k = 0; k < n; ++k) texts.push_back(std::to_string(k));
    std::string statuses;
    for (int k = 0; k < n; ++k) answers.push_back(std::make_unique<answer>());
    std::vector<pmix_status_t> started;
    for (int k = 0; k < n; ++k) {
      pmix_byte_object_t bo{texts[k].data(), texts[k].size()};
      started.push_back(PMIx_IOF_push(&target, 1, &bo, nullptr, 0,
                                      [](pmix_status_t st, void* cbdata) { static_cast<answer*>(cbdata)->finish(st, ""); },
                                      answers[k].get()));
    }
    if (parts.size() > 3) {
      auto answered = [&] {
        for (int k = 0; k < n; ++k) {
          if (started[k] != PMIX_SUCCESS) return true;
          std::lock_guard<std::mutex> g{answers[k]->m};
          if (answers[k]->done) return true;
        }
        return false;
      };
      for (int waited = 0; !answered() && waited < 60000; ++waited)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      std::fclose(std::fopen(parts[3].c_str(), "w"));
    }
    for (int k = 0; k < n; ++k) statuses += std::string{" "} + PMIx_Error_string(answers[k]->wait(started[k]));
    say(step, PMIX_SUCCESS, statuses.substr(1));
  } else if (cmd == "iof_pull" || cmd == "iof_pull_nb") {
    pmix_proc_t source;
    const std::string ns = parts.at(1) == "self" ? std::string{me.nspace} : parts.at(1);
    PMIX_LOAD_PROCID(&source, ns.c_str(),
                     parts.at(2) == "*" ? PMIX_RANK_WILDCARD : static_cast<pmix_rank_t>(std::atoi(parts.at(2).c_str())));
    const auto& which = parts.at(3);
    const pmix_iof_channel_t channels = which == "out"   ? PMIX_FWD_STDOUT_CHANNEL
                                        : which == "err" ? PMIX_FWD_STDERR_CHANNEL
                                                         : PMIX_FWD_ALL_CHANNELS;
    pmix_status_t rc;
    if (cmd == "iof_pull") {
      rc = PMIx_IOF_pull(&source, 1, nullptr, 0, channels, on_output, nullptr, nullptr);
      if (rc >= 0) {
        last_iof_ref = static_cast<std::size_t>(rc);
        rc = PMIX_SUCCESS;
      }
    } else {
      answer a;
      static answer* current;
      current = &a;
      rc = a.wait(PMIx_IOF_pull(&source, 1, nullptr, 0, channels, on_output,
                                [](pmix_status_t st, size_t ref, void*) {
                                  last_iof_ref = ref;
                                  current->finish(st, "");
                                },
                                nullptr));
    }
    say(step, rc, rc == PMIX_SUCCESS ? "ref=" + std::to_string(last_iof_ref) : "");
  } else if (cmd == "wait_iof") {
    const std::size_t n = static_cast<std::size_t>(std::atoi(parts.at(1).c_str()));
    std::unique_lock<std::mutex> g{iof_mutex};
    const bool got = iof_cv.wait_for(g, std::chrono::seconds(120), [&] { return iof_seen.size() >= n; });
    std::string all;
    for (const auto& s : iof_seen) all += (all.empty() ? "" : "|") + s;
    say(step, got ? PMIX_SUCCESS : PMIX_ERR_TIMEOUT, all);
  } else if (cmd == "wait_iof_text") {
    const std::string text = step.substr(step.find(':') + 1);
    std::unique_lock<std::mutex> g{iof_mutex};
    const bool got = iof_cv.wait_for(g, std::chrono::seconds(120),
                                     [&] { return iof_bytes.find(text) != std::string::npos; });
    say(step, got ? PMIX_SUCCESS : PMIX_ERR_TIMEOUT, std::to_string(iof_seen.size()));
  } else if (cmd == "iof_save") {
    std::lock_guard<std::mutex> g{iof_mutex};
    std::ofstream(parts.at(1), std::ios::binary).write(iof_bytes.data(), static_cast<std::streamsize>(iof_bytes.size()));
    std::string sources;
    for (const auto& s : iof_sources) sources += " " + s;
    say(step, PMIX_SUCCESS, std::to_string(iof_seen.size()) + sources);
  } else if (cmd == "iof_deregister") {
    say(step, PMIx_IOF_deregister(last_iof_ref, nullptr, 0, nullptr, nullptr), "");
  } else {
    return false;
  }
  return true;
}

}  // namespace pmix::test
