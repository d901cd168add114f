// A PMIx client driven by its command line, for end-to-end tests. Each
// argument is one step; each step prints one line "<step> <STATUS> [...]".
//
//   init | finalize | commit | crash | exit:<code> | sleep:<ms>
//   shared_mappings               prints how many mappings of the server's
//                                 shared data this process has ("mapped N")
//   board_mappings                the same for its namespace's fence board
//   sleeps                        how many times this thread slept (voluntary
//                                 context switches) since the last `sleeps`
//                                 ("slept N"; the first counts from the start)
//   put:<key>=<text>[:local|remote|global]
//   fence[:collect][:ranks=<r,r,...>][:timeout=<s>]   (timeout: PMIX_TIMEOUT, as in
//                                 get_ns, connect, lookup, query_ns and group_construct)
//   get:<rank|*>:<key>            prints the value (text or number; a NULL
//                                 string prints "(null)"); key "-": a NULL key
//                                 (all of the rank's data: "[key=value,...]")
//   put_pattern:<key>=<bytes>     puts a string of <bytes> characters that
//                                 depend on this rank and their position
//   get_pattern:<rank>:<key>=<bytes>  gets <rank>'s pattern string; prints
//                                 "intact" or where it differs
//   abort:<status>
//   fence_nb[:collect]            PMIx_Fence_nb; waits for its callback
//   get_nb:<rank|*>:<key>         PMIx_Get_nb; waits for its callback
//   initialized                   prints PMIx_Initialized()
//   wait_file:<path>              waits (up to 120 s) until the file exists
//   echo:<out|err>:<text>         writes the text and a newline to stdout or
//                                 stderr (nothing else)
//   read_stdin:<n>                reads n lines from stdin; prints them
//                                 '|'-joined, "<eof>" last if stdin ended first
//   @<rank>:<step>                runs the step only in the process of that rank
//                                 (PMIX_RANK before init), e.g. under a launcher
//   tool_init[:ns=<nspace>][:rank=<r>][:standalone]   PMIx_tool_init with PMIX_SERVER_URI
//                                 from $TEST_SERVER_URI (if set), or with
//                                 PMIX_TOOL_DO_NOT_CONNECT; prints the identity
//   tool_init_ns:<nspace> | tool_init_pid:<pid> | tool_init_system | tool_init_file:<path>
//                                 PMIx_tool_init finding the server's rendezvous
//                                 file by PMIX_SERVER_NSPACE / PMIX_SERVER_PIDINFO /
//                                 PMIX_CONNECT_TO_SYSTEM / PMIX_TOOL_ATTACHMENT_FILE
//   xml_size                      the length of the job's PMIX_HWLOC_XML_V2
//   tool_finalize
//   repeat:<n>                    runs the remaining steps n times
//   touch:<path> | mkdir:<path>   creates a file / directory (owned by this process)
//   files:<dir>:<n>               creates <dir> holding n empty files
//   cleanup:<path> | cleanup_dir:<path> | cleanup_job:<path> | cleanup_job_dir:<path>
//                                 PMIx_Job_control registering a file, a directory
//                                 (recursive) for this process, or a file or a
//                                 directory (not recursive) for the job
//   cycles:<client|tool>:<n>      n init/finalize cycles; prints ok/failed counts,
//                                 RSS growth (kB) from cycle n/10 to n (heap growth
//                                 under a sanitizer: tests/support/memory.hpp), and the
//                                 open descriptors then and at the end
//   race:pair:<peer>:<n>          n rounds with <peer>: put, commit, collecting fence
//                                 over both, get the peer's value; put, commit,
//                                 plain fence, get through direct modex
//   race:cycle:<n>                n rounds of init, put, commit, finalize
//   race:crash:<n>                n forked children that init and die
//   setenv:<name>=<value> | unsetenv:<name>
//   probe_in_callback             calls every blocking API form inside a
//                                 Fence_nb callback; prints "probe <call> <STATUS>"
//   probe_in_query_callback       the same inside PMIx_Query_info_nb's callback
//                                 (PMIX_QUERY_NAMESPACES: a tool can call it)
//   query:<key>,... | query_nb:<key>,...  PMIx_Query_info(_nb) of one query with
//                                 those keys; prints the count and key=value
//                                 for each string result
//   (the requests a client hands its host: tests/e2e/request_steps.hpp;
//   groups: tests/e2e/group_steps.hpp)
//   (a tool's several servers: tests/e2e/tool_steps.hpp)
//   job_control:<key>=<text>      PMIx_Job_control with one string directive;
//                                 prints the number of results
//   publish:<key>=<text>[:ns][:timeout=<s>]  PMIx_Publish (with PMIX_RANGE_NAMESPACE, PMIX_TIMEOUT)
//   lookup:<key>[:wait][:uid=<n>][:timeout=<s>][:garbage]  PMIx_Lookup (with
//                                 PMIX_WAIT, with PMIX_USERID <n> among its directives;
//                                 garbage: the pdata not constructed); prints
//                                 "<value> from <nspace>.<rank>"
//   lookup_nb:<key>               PMIx_Lookup_nb; waits for its callback
//   unpublish:<key|*>[:timeout=<s>]  PMIx_Unpublish (*: all of this process's; PMIX_TIMEOUT)
//   spawn:<n>:<prog>|<arg>|...    PMIx_Spawn of n processes; prints the namespace
//   connect:<ns>,...[:timeout=<s>] | disconnect:<ns>,...
//                                 PMIx_Connect / _Disconnect over every rank of
//                                 the namespaces: "self", "spawned" (the last
//                                 spawn's), "parent" (ours without ".spawnN")
//   get_ns:<ns>:<rank|*>:<key>[:timeout=<s>]  PMIx_Get from another namespace (as above)
//   log:<stderr|stdout|syslog>:<text>  PMIx_Log; log_nb:... PMIx_Log_nb
//   log_as:<nspace>.<rank>:<priority>:<stderr|syslog>:<text>  PMIx_Log with
//                                 PMIX_LOG_SOURCE and PMIX_LOG_SYSLOG_PRI as given
//   collect_job_info:<ns>         PMIx_server_collect_job_info of that namespace
//                                 (named as for connect), from this client
//   fence_with:<ns>,...[:collect] PMIx_Fence over every rank of those namespaces
//                                 (named as for connect; a group's name too)
//   query_ns:<ns>:<key>,...[:timeout=<s>]  PMIx_Query_info of one query with those
//                                 keys and PMIX_NSPACE <ns>; prints the count
//   resolve_peers:<node|->:<ns|*> | resolve_nodes:<ns|*>
//                                 PMIx_Resolve_peers / _nodes (- : this node,
//                                 * : every namespace held)
//   directive:<call>:<key>:<reqd|opt>  calls init, finalize, fence, get, connect
//                                 or handler (PMIx_Register_event_handler) with
//                                 one bool directive <key>, PMIX_INFO_REQD or not
//   fork                          forks; later lines say [parent] or [child];
//                                 steps written c:<step> / p:<step> run in the
//                                 child / parent only; p:wait_child waits for it
//   thread:<step>|<step>|...      runs those steps on a second thread, which
//                                 starts now; join waits for it
//   wait_main_blocked             waits (up to 120 s) until the main thread
//                                 sleeps in poll(2) or futex_waitv(2), as a
//                                 blocking call waiting for its reply (or a
//                                 fence on its fence board) does; prints the
//                                 wait's status
//
// Functions computed in the client itself (docs/local-functions.md,
// tests/e2e/local_functions_test.cpp):
//   mapped:<name>                 "yes" if a file whose path contains <name> is
//                                 mapped in this process (/proc/self/maps), else "no"
//   load_topology                 PMIx_Load_topology; prints its source and the
//                                 ProcessName the topology's root carries (the
//                                 process that discovered it)
//   distances                     PMIx_Compute_distances from this process's own
//                                 binding and topology; prints each device as
//                                 <osname>=<mindist>-<maxdist>
#include <dlfcn.h>
#include <hwloc.h>
#include <pmix.h>
#include <pmix_server.h>
#include <pmix_tool.h>

#include "tests/e2e/probe.hpp"
#include "tests/e2e/group_steps.hpp"
#include "tests/e2e/request_steps.hpp"
#include "tests/e2e/tool_steps.hpp"
#include "tests/e2e/steps.hpp"
#include "tests/support/memory.hpp"
#include <signal.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

pmix_proc_t me;
std::string last_spawned;

// A namespace named in a step: self, spawned, parent, or as written.
std::string nspace_named(const std::string& token) {
  if (token == "self") return me.nspace;
  if (token == "spawned") return last_spawned;
  if (token == "parent") {
    const std::string mine = me.nspace;
    const auto dot = mine.rfind(".spawn");
    return dot == std::string::npos ? mine : mine.substr(0, dot);
  }
  return token;
}
std::string who;  // "" before a fork, "[parent] " or "[child] " after
pid_t child_pid = 0;
const pid_t main_tid = ::gettid();  // set before main() runs, on the main thread
std::thread side;                   // thread:, join

// The system call the main thread sleeps in (/proc/self/task/<tid>/syscall:
// its number first, "running" when it runs), -1 if it runs or is unknown.
long main_thread_syscall() {
  std::ifstream in("/proc/self/task/" + std::to_string(main_tid) + "/syscall");
  std::string first;
  if (!(in >> first) || first.empty() || first.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::atol(first.c_str());
}

// put_pattern's text for `rank`: printable, different for every rank and
// position modulo 26 * 7.
std::string pattern(pmix_rank_t rank, std::size_t bytes) {
  std::string out(bytes, ' ');
  for (std::size_t k = 0; k < bytes; ++k) out[k] = static_cast<char>('a' + (k / 7 + rank) % 26);
  return out;
}

std::string text_of(const pmix_value_t* v) {
  char buf[64];
  switch (v->type) {
    case PMIX_STRING: return v->data.string == nullptr ? "(null)" : v->data.string;
    case PMIX_UINT32: std::snprintf(buf, sizeof buf, "%u", v->data.uint32); return buf;
    case PMIX_UINT16: std::snprintf(buf, sizeof buf, "%u", v->data.uint16); return buf;
    case PMIX_PROC_RANK: std::snprintf(buf, sizeof buf, "%u", v->data.rank); return buf;
    case PMIX_INT: std::snprintf(buf, sizeof buf, "%d", v->data.integer); return buf;
    case PMIX_BOOL: return v->data.flag ? "true" : "false";
    case PMIX_DATA_ARRAY: {
      // A NULL-key get's answer: "[key=value,...]".
      const auto* a = v->data.darray;
      if (a == nullptr || a->type != PMIX_INFO) break;
      std::string out = "[";
      for (std::size_t k = 0; k < a->size; ++k) {
        const auto& i = static_cast<const pmix_info_t*>(a->array)[k];
        out += (k == 0 ? "" : ",") + std::string{i.key} + "=" + text_of(&i.value);
      }
      return out + "]";
    }
    default: break;
  }
  std::snprintf(buf, sizeof buf, "<type %u>", v->type);
  return buf;
}

// A step's key: "-" stands for a NULL key (all of a process's data).
const char* key_arg(const std::string& key) { return key == "-" ? nullptr : key.c_str(); }

void say(const std::string& step, pmix_status_t rc, const std::string& extra = "") {
  std::printf("%s%s %s%s%s\n", who.c_str(), step.c_str(), PMIx_Error_string(rc),
              extra.empty() ? "" : " ", extra.c_str());
  std::fflush(stdout);
}

using pmix::test::split;

// Completion of a non-blocking call, waited for on the main thread.
struct pending {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  pmix_status_t status = PMIX_ERROR;
  std::string text;
  bool on_progress_thread = false;

  void finish(pmix_status_t st, std::string t) {
    std::lock_guard<std::mutex> guard{m};
    status = st;
    text = std::move(t);
    done = true;
    cv.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> guard{m};
    cv.wait(guard, [this] { return done; });
  }
};

void op_done(pmix_status_t st, void* cbdata) { static_cast<pending*>(cbdata)->finish(st, ""); }

void value_done(pmix_status_t st, pmix_value_t* v, void* cbdata) {
  auto* p = static_cast<pending*>(cbdata);
  // A blocking call from inside a callback must not wait for itself.
  p->on_progress_thread = PMIx_Fence(nullptr, 0, nullptr, 0) == PMIX_ERR_WOULD_BLOCK;
  p->finish(st, st == PMIX_SUCCESS && v != nullptr ? text_of(v) : "");
}

}  // namespace

// ----- Functions computed in the client (docs/local-functions.md) ------------

namespace local_functions {

bool mapped(const std::string& name) {
  std::FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr) return false;
  char line[4096];
  bool found = false;
  while (!found && std::fgets(line, sizeof line, maps) != nullptr)
    found = std::strstr(line, name.c_str()) != nullptr;
  std::fclose(maps);
  return found;
}

// The ProcessName info of the topology's root, read through the hwloc the
// library loaded (this program does not link hwloc).
std::string process_name(void* topology) {
  void* hwloc = dlopen("libhwloc.so.15", RTLD_NOW | RTLD_NOLOAD);
  if (hwloc == nullptr) return "(hwloc not loaded)";
  using obj_by_depth = hwloc_obj_t (*)(hwloc_topology_t, int, unsigned);
  auto root_of = reinterpret_cast<obj_by_depth>(dlsym(hwloc, "hwloc_get_obj_by_depth"));
  hwloc_obj_t root = root_of == nullptr ? nullptr : root_of(static_cast<hwloc_topology_t>(topology), 0, 0);
  std::string name = "(none)";
  for (unsigned k = 0; root != nullptr && k < root->infos_count; ++k)
    if (std::strcmp(root->infos[k].name, "ProcessName") == 0) name = root->infos[k].value;
  dlclose(hwloc);
  return name;
}

// Runs one of these steps; false if `cmd` is not one of them.
bool run(const std::string& step, const std::string& cmd, const std::vector<std::string>& parts) {
  if (cmd == "mapped") {
    say(step, PMIX_SUCCESS, mapped(parts.at(1)) ? "yes" : "no");
  } else if (cmd == "load_topology") {
    pmix_topology_t topo{nullptr, nullptr};
    const auto rc = PMIx_Load_topology(&topo);
    say(step, rc, rc == PMIX_SUCCESS ? std::string{topo.source} + " " + process_name(topo.topology) : "");
    PMIx_Topology_destruct(&topo);
  } else if (cmd == "distances") {
    pmix_device_distance_t* dist = nullptr;
    size_t n = 0;
    const auto rc = PMIx_Compute_distances(nullptr, nullptr, nullptr, 0, &dist, &n);
    std::string text;
    for (size_t k = 0; k < n; ++k)
      text += (k == 0 ? "" : " ") + std::string{dist[k].osname} + "=" + std::to_string(dist[k].mindist) + "-" +
              std::to_string(dist[k].maxdist);
    say(step, rc, text);
    PMIX_DEVICE_DIST_FREE(dist, n);
  } else {
    return false;
  }
  return true;
}

}  // namespace local_functions

int run(const std::vector<std::string>& steps);



int main(int argc, char** argv) {
  std::vector<std::string> steps(argv + 1, argv + argc);
  const int code = run(steps);
  if (side.joinable()) side.join();  // a thread: without its join
  return code;
}

int run(const std::vector<std::string>& steps) {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    std::string step = steps[i];
    if (step.rfind("c:", 0) == 0 || step.rfind("p:", 0) == 0) {
      const bool for_child = step[0] == 'c';
      if (who.empty() || for_child != (who == "[child] ")) continue;
      step = step.substr(2);
    }
    if (step.rfind('@', 0) == 0) {
      const auto colon = step.find(':');
      const char* env_rank = std::getenv("PMIX_RANK");
      const long mine = PMIx_Initialized() ? static_cast<long>(me.rank)
                        : env_rank != nullptr ? std::atol(env_rank)
                                              : -1;
      if (colon == std::string::npos || std::atol(step.substr(1, colon - 1).c_str()) != mine) continue;
      step = step.substr(colon + 1);
    }
    const auto parts = split(step, ':');
    const auto& cmd = parts[0];
    if (cmd == "init") {
      const auto rc = PMIx_Init(&me, nullptr, 0);
      say(step, rc, rc == PMIX_SUCCESS ? std::string{me.nspace} + " " + std::to_string(me.rank) : "");
    } else if (cmd == "finalize") {
      say(step, PMIx_Finalize(nullptr, 0));
    } else if (cmd == "commit") {
      say(step, PMIx_Commit());
    } else if (cmd == "shared_mappings" || cmd == "board_mappings") {
      const char* name = cmd == "shared_mappings" ? "memfd:pmix-cxx-shared" : "memfd:pmix-cxx-fence-board";
      std::ifstream maps("/proc/self/maps");
      std::string line;
      int n = 0;
      while (std::getline(maps, line))
        if (line.find(name) != std::string::npos) ++n;
      say(step, PMIX_SUCCESS, "mapped " + std::to_string(n));
    } else if (cmd == "sleeps") {
      static long before = 0;
      rusage r{};
      ::getrusage(RUSAGE_THREAD, &r);
      say(step, PMIX_SUCCESS, "slept " + std::to_string(r.ru_nvcsw - before));
      before = r.ru_nvcsw;
    } else if (cmd == "crash") {
      ::raise(SIGKILL);
    } else if (cmd == "exit") {
      return std::atoi(parts.at(1).c_str());
    } else if (cmd == "sleep") {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(parts.at(1).c_str())));
    } else if (cmd == "put") {
      const auto kv = parts.at(1);
      const auto eq = kv.find('=');
      pmix_scope_t scope = PMIX_GLOBAL;
      if (parts.size() > 2) scope = parts[2] == "local" ? PMIX_LOCAL : parts[2] == "remote" ? PMIX_REMOTE : PMIX_GLOBAL;
      pmix_value_t v;
      PMIX_VALUE_LOAD(&v, kv.substr(eq + 1).c_str(), PMIX_STRING);
      say(step, PMIx_Put(scope, kv.substr(0, eq).c_str(), &v));
      PMIX_VALUE_DESTRUCT(&v);
    } else if (cmd == "put_pattern") {
      const auto kv = parts.at(1);
      const auto eq = kv.find('=');
      const std::string text = pattern(me.rank, std::strtoul(kv.substr(eq + 1).c_str(), nullptr, 10));
      pmix_value_t v;
      PMIX_VALUE_LOAD(&v, text.c_str(), PMIX_STRING);
      say(step, PMIx_Put(PMIX_GLOBAL, kv.substr(0, eq).c_str(), &v));
      PMIX_VALUE_DESTRUCT(&v);
    } else if (cmd == "get_pattern") {
      const auto r = static_cast<pmix_rank_t>(std::atoi(parts.at(1).c_str()));
      const auto kv = parts.at(2);
      const auto eq = kv.find('=');
      pmix_proc_t who;
      PMIX_LOAD_PROCID(&who, me.nspace, r);
      pmix_value_t* val = nullptr;
      const auto rc = PMIx_Get(&who, kv.substr(0, eq).c_str(), nullptr, 0, &val);
      std::string verdict;
      if (rc == PMIX_SUCCESS) {
        const std::string want = pattern(r, std::strtoul(kv.substr(eq + 1).c_str(), nullptr, 10));
        if (val->type != PMIX_STRING || val->data.string == nullptr) verdict = "not a string";
        else if (want == val->data.string) verdict = "intact";
        else verdict = "differs (" + std::to_string(std::strlen(val->data.string)) + " bytes)";
      }
      say(step, rc, verdict);
      if (val != nullptr) PMIX_VALUE_RELEASE(val);
    } else if (cmd == "fence") {
      bool collect = false;
      int timeout = 0;
      std::vector<pmix_proc_t> procs;
      for (std::size_t k = 1; k < parts.size(); ++k) {
        if (parts[k] == "collect") collect = true;
        if (parts[k].rfind("timeout=", 0) == 0) timeout = std::atoi(parts[k].c_str() + 8);
        if (parts[k].rfind("ranks=", 0) == 0)
          for (const auto& r : split(parts[k].substr(6), ',')) {
            procs.emplace_back();
            PMIX_LOAD_PROCID(&procs.back(), me.nspace, static_cast<pmix_rank_t>(std::atoi(r.c_str())));
          }
      }
      pmix_info_t info[2];
      PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
      PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
      say(step, PMIx_Fence(procs.empty() ? nullptr : procs.data(), procs.size(), info, timeout > 0 ? 2 : 1));
      PMIX_INFO_DESTRUCT(&info[0]);
      PMIX_INFO_DESTRUCT(&info[1]);
    } else if (cmd == "get") {
      pmix_proc_t who;
      const auto& r = parts.at(1);
      PMIX_LOAD_PROCID(&who, me.nspace, r == "*" ? PMIX_RANK_WILDCARD : static_cast<pmix_rank_t>(std::atoi(r.c_str())));
      pmix_value_t* val = nullptr;
      const auto rc = PMIx_Get(&who, key_arg(parts.at(2)), nullptr, 0, &val);
      say(step, rc, rc == PMIX_SUCCESS ? text_of(val) : "");
      if (val != nullptr) PMIX_VALUE_RELEASE(val);
    } else if (cmd == "fence_nb") {
      bool collect = parts.size() > 1 && parts[1] == "collect";
      pmix_info_t info;
      PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
      pending p;
      auto rc = PMIx_Fence_nb(nullptr, 0, &info, 1, op_done, &p);
      if (rc == PMIX_SUCCESS) {
        p.wait();
        rc = p.status;
      } else if (rc == PMIX_OPERATION_SUCCEEDED) {
        rc = PMIX_SUCCESS;
      }
      say(step, rc);
      PMIX_INFO_DESTRUCT(&info);
    } else if (cmd == "get_nb") {
      pmix_proc_t who;
      const auto& r = parts.at(1);
      PMIX_LOAD_PROCID(&who, me.nspace, r == "*" ? PMIX_RANK_WILDCARD : static_cast<pmix_rank_t>(std::atoi(r.c_str())));
      pending p;
      auto rc = PMIx_Get_nb(&who, key_arg(parts.at(2)), nullptr, 0, value_done, &p);
      if (rc == PMIX_SUCCESS) {
        p.wait();
        rc = p.status;
      }
      say(step, rc, p.text + (p.on_progress_thread ? " (callback: blocking calls refused)" : ""));
    } else if (cmd == "wait_file") {
      const auto path = step.substr(step.find(':') + 1);
      int waited = 0;
      while (::access(path.c_str(), F_OK) != 0 && waited++ < 120000)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      say(step, ::access(path.c_str(), F_OK) == 0 ? PMIX_SUCCESS : PMIX_ERR_TIMEOUT);
    } else if (cmd == "echo") {
      const std::string text = step.substr(step.find(':', 5) + 1) + "\n";
      std::FILE* to = parts.at(1) == "err" ? stderr : stdout;
      std::fputs(text.c_str(), to);
      std::fflush(to);
    } else if (cmd == "read_stdin") {
      const int n = std::atoi(parts.at(1).c_str());
      std::string lines;
      char buf[4096];
      for (int k = 0; k < n; ++k) {
        if (std::fgets(buf, sizeof buf, stdin) == nullptr) {
          lines += (k == 0 ? "" : "|") + std::string("<eof>");
          break;
        }
        std::string line = buf;
        if (!line.empty() && line.back() == '\n') line.pop_back();
        lines += (k == 0 ? "" : "|") + line;
      }
      say(step, PMIX_SUCCESS, lines);
    } else if (cmd == "tool_init") {
      std::vector<pmix_info_t> info;
      std::string ns;
      pmix_rank_t rank = 0;
      bool have_rank = false;
      bool standalone = false;
      for (std::size_t k = 1; k < parts.size(); ++k) {
        if (parts[k] == "standalone") standalone = true;
        if (parts[k].rfind("ns=", 0) == 0) ns = parts[k].substr(3);
        if (parts[k].rfind("rank=", 0) == 0) {
          rank = static_cast<pmix_rank_t>(std::atoi(parts[k].substr(5).c_str()));
          have_rank = true;
        }
      }
      const char* uri = std::getenv("TEST_SERVER_URI");
      info.reserve(3);
      if (standalone) {
        info.emplace_back();
        PMIX_INFO_LOAD(&info.back(), PMIX_TOOL_DO_NOT_CONNECT, &standalone, PMIX_BOOL);
      } else if (uri != nullptr) {
        info.emplace_back();
        PMIX_INFO_LOAD(&info.back(), PMIX_SERVER_URI, uri, PMIX_STRING);
      }
      if (!ns.empty()) {
        info.emplace_back();
        PMIX_INFO_LOAD(&info.back(), PMIX_TOOL_NSPACE, ns.c_str(), PMIX_STRING);
      }
      if (have_rank) {
        info.emplace_back();
        PMIX_INFO_LOAD(&info.back(), PMIX_TOOL_RANK, &rank, PMIX_PROC_RANK);
      }
      const auto rc = PMIx_tool_init(&me, info.empty() ? nullptr : info.data(), info.size());
      say(step, rc, rc == PMIX_SUCCESS ? std::string{me.nspace} + " " + std::to_string(me.rank) : "");
      for (auto& x : info) PMIX_INFO_DESTRUCT(&x);
    } else if (cmd == "tool_init_ns" || cmd == "tool_init_pid" || cmd == "tool_init_system" ||
               cmd == "tool_init_file") {
      pmix_info_t info;
      if (cmd == "tool_init_ns") {
        PMIX_INFO_LOAD(&info, PMIX_SERVER_NSPACE, parts.at(1).c_str(), PMIX_STRING);
      } else if (cmd == "tool_init_file") {
        PMIX_INFO_LOAD(&info, PMIX_TOOL_ATTACHMENT_FILE, step.substr(step.find(':') + 1).c_str(), PMIX_STRING);
      } else if (cmd == "tool_init_pid") {
        pid_t pid = static_cast<pid_t>(std::atoi(parts.at(1).c_str()));
        PMIX_INFO_LOAD(&info, PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
      } else {
        bool yes = true;
        PMIX_INFO_LOAD(&info, PMIX_CONNECT_TO_SYSTEM, &yes, PMIX_BOOL);
      }
      const auto rc = PMIx_tool_init(&me, &info, 1);
      say(step, rc, rc == PMIX_SUCCESS ? std::string{me.nspace} + " " + std::to_string(me.rank) : "");
      PMIX_INFO_DESTRUCT(&info);
    } else if (cmd == "xml_size") {
      pmix_proc_t job;
      PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
      pmix_value_t* val = nullptr;
      const auto rc = PMIx_Get(&job, PMIX_HWLOC_XML_V2, nullptr, 0, &val);
      say(step, rc, rc == PMIX_SUCCESS && val->type == PMIX_STRING ? std::to_string(std::strlen(val->data.string)) : "");
      if (val != nullptr) PMIX_VALUE_RELEASE(val);
    } else if (cmd == "tool_finalize") {
      say(step, PMIx_tool_finalize());
    } else if (cmd == "repeat") {
      const int n = std::atoi(parts.at(1).c_str());
      const std::vector<std::string> rest(steps.begin() + static_cast<long>(i) + 1, steps.end());
      for (int k = 0; k < n; ++k)
        if (const int code = run(rest); code != 0) return code;
      return 0;
    } else if (cmd == "fork") {
      std::fflush(nullptr);
      child_pid = ::fork();
      who = child_pid == 0 ? "[child] " : "[parent] ";
    } else if (cmd == "thread") {
      side = std::thread([sub = split(step.substr(step.find(':') + 1), '|')] { run(sub); });
    } else if (cmd == "join") {
      if (side.joinable()) side.join();
      say(step, PMIX_SUCCESS);
    } else if (cmd == "wait_main_blocked") {
      int waited = 0;
      auto blocked = [] {
        const long call = main_thread_syscall();
        return call == SYS_poll || call == SYS_ppoll || call == SYS_futex_waitv;
      };
      while (!blocked() && waited++ < 120000) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      say(step, waited <= 120000 ? PMIX_SUCCESS : PMIX_ERR_TIMEOUT);
    } else if (cmd == "wait_child") {
      int status = 0;
      ::waitpid(child_pid, &status, 0);
      say(step, PMIX_SUCCESS,
          WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                            : "signal " + std::to_string(WTERMSIG(status)));
    } else if (cmd == "touch") {
      std::FILE* f = std::fopen(step.substr(6).c_str(), "w");
      if (f != nullptr) std::fclose(f);
    } else if (cmd == "files") {  // files:<dir>:<n> makes <dir> with n files in it
      const auto where = parts.at(1);
      ::mkdir(where.c_str(), 0755);
      const int n = std::atoi(parts.at(2).c_str());
      for (int k = 0; k < n; ++k) {
        std::FILE* f = std::fopen((where + "/f" + std::to_string(k)).c_str(), "w");
        if (f != nullptr) std::fclose(f);
      }
      say(step, PMIX_SUCCESS);
    } else if (cmd == "mkdir") {
      ::mkdir(step.substr(6).c_str(), 0755);
    } else if (cmd == "cleanup" || cmd == "cleanup_dir" || cmd == "cleanup_job" || cmd == "cleanup_job_dir") {
      const auto path = step.substr(cmd.size() + 1);
      pmix_info_t info[2];
      // A job's directory is cleaned without recursion (only if empty then).
      bool recursive = cmd != "cleanup_job_dir";
      const bool dir = cmd == "cleanup_dir" || cmd == "cleanup_job_dir";
      PMIX_INFO_LOAD(&info[0], dir ? PMIX_REGISTER_CLEANUP_DIR : PMIX_REGISTER_CLEANUP, path.c_str(), PMIX_STRING);
      PMIX_INFO_LOAD(&info[1], PMIX_CLEANUP_RECURSIVE, &recursive, PMIX_BOOL);
      pmix_proc_t job;
      PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
      const bool whole = cmd == "cleanup_job" || cmd == "cleanup_job_dir";
      pmix_info_t* results = nullptr;
      size_t nresults = 0;
      say(step, PMIx_Job_control(whole ? &job : nullptr, whole ? 1 : 0, info, 2, &results, &nresults));
      PMIX_INFO_FREE(results, nresults);
      PMIX_INFO_DESTRUCT(&info[0]);
      PMIX_INFO_DESTRUCT(&info[1]);
    } else if (cmd == "query" || cmd == "query_nb") {
      // query[_nb]:<key>,<key>,...: one pmix_query_t with those keys;
      // prints the count and each string result as key=value.
      pmix_query_t q;
      PMIX_QUERY_CONSTRUCT(&q);
      std::string keys = step.substr(cmd.size() + 1);
      for (std::size_t at = 0; at <= keys.size();) {
        const auto comma = std::min(keys.find(',', at), keys.size());
        pmix_status_t appended;
        PMIX_ARGV_APPEND(appended, q.keys, keys.substr(at, comma - at).c_str());
        (void)appended;
        at = comma + 1;
      }
      pmix::test::answer a;
      auto describe = [](pmix_info_t* info, size_t n) {
        std::string text = std::to_string(n);
        for (size_t k = 0; k < n; ++k)
          if (info[k].value.type == PMIX_STRING)
            text += std::string{" "} + info[k].key + "=" + info[k].value.data.string;
        return text;
      };
      pmix_status_t rc;
      if (cmd == "query") {
        pmix_info_t* results = nullptr;
        size_t nresults = 0;
        rc = PMIx_Query_info(&q, 1, &results, &nresults);
        a.text = describe(results, nresults);
        PMIX_INFO_FREE(results, nresults);
      } else {
        static pmix::test::answer* current = nullptr;
        static std::string (*describe_fn)(pmix_info_t*, size_t) = nullptr;
        current = &a;
        describe_fn = +describe;
        rc = PMIx_Query_info_nb(&q, 1,
                                [](pmix_status_t st, pmix_info_t* info, size_t n, void*, pmix_release_cbfunc_t release,
                                   void* release_data) {
                                  std::lock_guard<std::mutex> g{current->m};
                                  current->rc = st;
                                  current->text = describe_fn(info, n);
                                  current->done = true;
                                  current->cv.notify_all();
                                  if (release != nullptr) release(release_data);
                                },
                                nullptr);
        if (rc == PMIX_SUCCESS) {
          std::unique_lock<std::mutex> g{a.m};
          a.cv.wait(g, [&] { return a.done; });
          rc = a.rc;
        }
      }
      say(step, rc, a.text);
      PMIX_QUERY_DESTRUCT(&q);
    } else if (cmd == "job_control") {
      const auto kv = step.substr(12);
      const auto eq = kv.find('=');
      pmix_info_t info;
      PMIX_INFO_LOAD(&info, kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str(), PMIX_STRING);
      pmix_info_t* results = nullptr;
      size_t nresults = 0;
      const auto rc = PMIx_Job_control(nullptr, 0, &info, 1, &results, &nresults);
      std::string first = nresults > 0 && results[0].value.type == PMIX_STRING
                              ? std::string{results[0].key} + "=" + results[0].value.data.string
                              : "";
      say(step, rc, std::to_string(nresults) + " " + first);
      PMIX_INFO_FREE(results, nresults);
      PMIX_INFO_DESTRUCT(&info);
    } else if (cmd == "cycles") {
      const bool tool = parts.at(1) == "tool";
      const int n = std::atoi(parts.at(2).c_str());
      const char* uri = std::getenv("TEST_SERVER_URI");
      pmix_info_t info;
      if (tool) PMIX_INFO_LOAD(&info, PMIX_SERVER_URI, uri == nullptr ? "" : uri, PMIX_STRING);
      int ok = 0, failed = 0, fds_start = 0;
      long rss_start = 0;
      for (int k = 0; k < n; ++k) {
        if (k == n / 10) {
          rss_start = pmix::test::held_kb();
          fds_start = pmix::test::open_fds();
        }
        pmix_proc_t p;
        const auto rc = tool ? PMIx_tool_init(&p, &info, 1) : PMIx_Init(&p, nullptr, 0);
        const auto fc = rc == PMIX_SUCCESS ? (tool ? PMIx_tool_finalize() : PMIx_Finalize(nullptr, 0))
                                           : rc;
        (rc == PMIX_SUCCESS && fc == PMIX_SUCCESS ? ok : failed)++;
      }
      if (tool) PMIX_INFO_DESTRUCT(&info);
      say(step, failed == 0 ? PMIX_SUCCESS : PMIX_ERROR,
          "ok=" + std::to_string(ok) + " failed=" + std::to_string(failed) +
              " rss_growth_kb=" + std::to_string(pmix::test::held_kb() - rss_start) +
              " fds_start=" + std::to_string(fds_start) + " fds_end=" + std::to_string(pmix::test::open_fds()));
    } else if (cmd == "race") {
      const auto kind = parts.at(1);
      int ok = 0, failed = 0;
      std::string first_error;
      auto note = [&](pmix_status_t rc, const std::string& what) {
        if (rc == PMIX_SUCCESS) return ++ok, true;
        if (failed++ == 0) first_error = what + ": " + PMIx_Error_string(rc);
        return false;
      };
      if (kind == "pair") {
        const auto peer = static_cast<pmix_rank_t>(std::atoi(parts.at(2).c_str()));
        const int n = std::atoi(parts.at(3).c_str());
        pmix_proc_t both[2];
        PMIX_LOAD_PROCID(&both[0], me.nspace, std::min(me.rank, peer));
        PMIX_LOAD_PROCID(&both[1], me.nspace, std::max(me.rank, peer));
        pmix_proc_t other;
        PMIX_LOAD_PROCID(&other, me.nspace, peer);
        for (int k = 0; k < n; ++k) {
          for (bool collect : {true, false}) {
            const std::string key = (collect ? "c" : "d") + std::to_string(k);
            const std::string mine = key + "@" + std::to_string(me.rank);
            pmix_value_t v;
            PMIX_VALUE_LOAD(&v, mine.c_str(), PMIX_STRING);
            note(PMIx_Put(PMIX_GLOBAL, key.c_str(), &v), "put");
            PMIX_VALUE_DESTRUCT(&v);
            note(PMIx_Commit(), "commit");
            pmix_info_t info;
            PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
            note(PMIx_Fence(both, 2, &info, 1), "fence");
            PMIX_INFO_DESTRUCT(&info);
            pmix_value_t* got = nullptr;
            const auto rc = PMIx_Get(&other, key.c_str(), nullptr, 0, &got);
            const std::string want = key + "@" + std::to_string(peer);
            if (note(rc, "get " + key) && (got->type != PMIX_STRING || want != got->data.string))
              note(PMIX_ERR_TYPE_MISMATCH, "value of " + key);
            if (got != nullptr) PMIX_VALUE_RELEASE(got);
          }
        }
      } else if (kind == "cycle") {
        const int n = std::atoi(parts.at(2).c_str());
        for (int k = 0; k < n; ++k) {
          pmix_proc_t p;
          if (!note(PMIx_Init(&p, nullptr, 0), "init")) continue;
          pmix_value_t v;
          PMIX_VALUE_LOAD(&v, "churn", PMIX_STRING);
          note(PMIx_Put(PMIX_GLOBAL, "churn", &v), "put");
          PMIX_VALUE_DESTRUCT(&v);
          note(PMIx_Commit(), "commit");
          note(PMIx_Finalize(nullptr, 0), "finalize");
        }
      } else if (kind == "crash") {
        const int n = std::atoi(parts.at(2).c_str());
        for (int k = 0; k < n; ++k) {
          std::fflush(nullptr);
          const pid_t pid = ::fork();
          if (pid == 0) {
            pmix_proc_t p;
            PMIx_Init(&p, nullptr, 0);
            ::raise(SIGKILL);
          }
          int status = 0;
          ::waitpid(pid, &status, 0);
          note(WIFSIGNALED(status) ? PMIX_SUCCESS : PMIX_ERROR, "crash");
        }
      }
      say(step, failed == 0 ? PMIX_SUCCESS : PMIX_ERROR,
          "ok=" + std::to_string(ok) + " failed=" + std::to_string(failed) +
              (first_error.empty() ? "" : " first: " + first_error));
    } else if (cmd == "setenv") {
      const auto kv = step.substr(7);
      const auto eq = kv.find('=');
      ::setenv(kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str(), 1);
    } else if (cmd == "unsetenv") {
      ::unsetenv(step.substr(9).c_str());
    } else if (cmd == "probe_in_callback") {
      struct probe_state {
        pending done;
        std::vector<std::pair<std::string, pmix_status_t>> results;
      } state;
      auto cb = [](pmix_status_t st, void* cbdata) {
        auto* ps = static_cast<probe_state*>(cbdata);
        ps->results = pmix::test::call_every_blocking_form(me.nspace);
        ps->done.finish(st, "");
      };
      const auto rc = PMIx_Fence_nb(nullptr, 0, nullptr, 0, cb, &state);
      if (rc == PMIX_SUCCESS) state.done.wait();
      for (const auto& [name, status] : state.results) say("probe " + name, status);
      say(step, rc);
    } else if (cmd == "probe_in_query_callback") {
      // As probe_in_callback, inside the callback of PMIx_Query_info_nb
      // (what a tool, which has no fence, can call).
      struct probe_state {
        pending done;
        std::vector<std::pair<std::string, pmix_status_t>> results;
      } state;
      auto cb = [](pmix_status_t st, pmix_info_t*, size_t, void* cbdata, pmix_release_cbfunc_t release,
                   void* release_cbdata) {
        auto* ps = static_cast<probe_state*>(cbdata);
        ps->results = pmix::test::call_every_blocking_form(me.nspace);
        if (release != nullptr) release(release_cbdata);
        ps->done.finish(st, "");
      };
      pmix_query_t q;
      PMIX_QUERY_CONSTRUCT(&q);
      char key[] = PMIX_QUERY_NAMESPACES;
      char* keys[] = {key, nullptr};
      q.keys = keys;
      const auto rc = PMIx_Query_info_nb(&q, 1, cb, &state);
      if (rc == PMIX_SUCCESS) state.done.wait();
      q.keys = nullptr;
      PMIX_QUERY_DESTRUCT(&q);
      for (const auto& [name, status] : state.results) say("probe " + name, status);
      say(step, rc);
    } else if (cmd == "publish") {
      const auto kv = parts.at(1);
      const auto eq = kv.find('=');
      pmix_info_t info[3];
      PMIX_INFO_LOAD(&info[0], kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str(), PMIX_STRING);
      size_t n = 1;
      for (std::size_t k = 2; k < parts.size(); ++k) {
        if (parts[k] == "ns") {
          pmix_data_range_t range = PMIX_RANGE_NAMESPACE;
          PMIX_INFO_LOAD(&info[n], PMIX_RANGE, &range, PMIX_DATA_RANGE);
          ++n;
        } else if (parts[k].rfind("timeout=", 0) == 0) {
          const int seconds = std::atoi(parts[k].c_str() + 8);
          PMIX_INFO_LOAD(&info[n], PMIX_TIMEOUT, &seconds, PMIX_INT);
          ++n;
        }
      }
      say(step, PMIx_Publish(info, n));
      for (size_t k = 0; k < n; ++k) PMIX_INFO_DESTRUCT(&info[k]);
    } else if (cmd == "lookup") {
      pmix_pdata_t data;
      PMIX_PDATA_CONSTRUCT(&data);
      // "garbage": not constructed, as python3-pmix allocates it (every
      // byte 0x53: a value type of 83).
      if (std::find(parts.begin(), parts.end(), "garbage") != parts.end()) std::memset(&data, 0x53, sizeof data);
      PMIX_LOAD_KEY(data.key, parts.at(1).c_str());
      std::vector<pmix_info_t> info;
      info.reserve(2);
      for (std::size_t k = 2; k < parts.size(); ++k) {
        info.emplace_back();
        if (parts[k] == "wait") {
          const bool wait = true;
          PMIX_INFO_LOAD(&info.back(), PMIX_WAIT, &wait, PMIX_BOOL);
        } else if (parts[k].rfind("uid=", 0) == 0) {
          const uint32_t uid = static_cast<uint32_t>(std::stoul(parts[k].substr(4)));
          PMIX_INFO_LOAD(&info.back(), PMIX_USERID, &uid, PMIX_UINT32);
        } else if (parts[k].rfind("timeout=", 0) == 0) {
          const int seconds = std::atoi(parts[k].c_str() + 8);
          PMIX_INFO_LOAD(&info.back(), PMIX_TIMEOUT, &seconds, PMIX_INT);
        }
      }
      const auto rc = PMIx_Lookup(&data, 1, info.empty() ? nullptr : info.data(), info.size());
      say(step, rc,
          rc == PMIX_SUCCESS ? text_of(&data.value) + " from " + data.proc.nspace + "." + std::to_string(data.proc.rank)
                             : "");
      for (auto& i : info) PMIX_INFO_DESTRUCT(&i);
      PMIX_PDATA_DESTRUCT(&data);
    } else if (cmd == "lookup_nb") {
      char* keys[] = {const_cast<char*>(parts.at(1).c_str()), nullptr};
      pending p;
      auto cb = [](pmix_status_t st, pmix_pdata_t data[], size_t ndata, void* cbdata) {
        std::string text = std::to_string(ndata);
        if (ndata > 0) text += " " + text_of(&data[0].value);
        static_cast<pending*>(cbdata)->finish(st, text);
      };
      const auto rc = PMIx_Lookup_nb(keys, nullptr, 0, cb, &p);
      if (rc == PMIX_SUCCESS) p.wait();
      say(step, rc == PMIX_SUCCESS ? p.status : rc, p.text);
    } else if (cmd == "unpublish") {
      char* keys[] = {const_cast<char*>(parts.at(1).c_str()), nullptr};
      pmix_info_t timeout;
      const int seconds = parts.size() > 2 && parts[2].rfind("timeout=", 0) == 0 ? std::atoi(parts[2].c_str() + 8) : 0;
      PMIX_INFO_LOAD(&timeout, PMIX_TIMEOUT, &seconds, PMIX_INT);
      say(step, PMIx_Unpublish(parts.at(1) == "*" ? nullptr : keys, seconds > 0 ? &timeout : nullptr, seconds > 0 ? 1 : 0));
      PMIX_INFO_DESTRUCT(&timeout);
    } else if (cmd == "spawn") {
      pmix_app_t app;
      PMIX_APP_CONSTRUCT(&app);
      const auto argv = split(step.substr(step.find(':', 6) + 1), '|');
      app.cmd = strdup(argv.at(0).c_str());
      for (const auto& a : argv) pmix_argv_append_nosize(&app.argv, a.c_str());
      app.maxprocs = std::atoi(parts.at(1).c_str());
      pmix_nspace_t child;
      const auto rc = PMIx_Spawn(nullptr, 0, &app, 1, child);
      if (rc == PMIX_SUCCESS) last_spawned = child;
      say(step, rc, rc == PMIX_SUCCESS ? std::string{child} : "");
      PMIX_APP_DESTRUCT(&app);
    } else if (cmd == "connect" || cmd == "disconnect") {
      std::vector<pmix_proc_t> procs;
      for (const auto& token : split(parts.at(1), ',')) {
        procs.emplace_back();
        PMIX_LOAD_PROCID(&procs.back(), nspace_named(token).c_str(), PMIX_RANK_WILDCARD);
      }
      pmix_info_t timeout;
      const int seconds = parts.size() > 2 && parts[2].rfind("timeout=", 0) == 0 ? std::atoi(parts[2].c_str() + 8) : 0;
      PMIX_INFO_LOAD(&timeout, PMIX_TIMEOUT, &seconds, PMIX_INT);
      const size_t n = seconds > 0 ? 1 : 0;
      say(step, cmd == "connect" ? PMIx_Connect(procs.data(), procs.size(), n ? &timeout : nullptr, n)
                                 : PMIx_Disconnect(procs.data(), procs.size(), n ? &timeout : nullptr, n));
      PMIX_INFO_DESTRUCT(&timeout);
    } else if (cmd == "collect_job_info") {
      // A client process calling the server library's collect (spec 002:
      // available only after PMIx_server_init in this process).
      pmix_proc_t p;
      PMIX_LOAD_PROCID(&p, nspace_named(parts.at(1)).c_str(), PMIX_RANK_WILDCARD);
      pmix_data_buffer_t buf;
      PMIX_DATA_BUFFER_CONSTRUCT(&buf);
      const auto rc = PMIx_server_collect_job_info(&p, 1, &buf);
      say(step, rc, "bytes=" + std::to_string(buf.bytes_used));
      PMIX_DATA_BUFFER_DESTRUCT(&buf);
    } else if (cmd == "fence_with") {
      std::vector<pmix_proc_t> procs;
      for (const auto& token : split(parts.at(1), ',')) {
        procs.emplace_back();
        PMIX_LOAD_PROCID(&procs.back(), nspace_named(token).c_str(), PMIX_RANK_WILDCARD);
      }
      bool collect = parts.size() > 2 && parts[2] == "collect";
      pmix_info_t info;
      PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
      say(step, PMIx_Fence(procs.data(), procs.size(), &info, 1));
      PMIX_INFO_DESTRUCT(&info);
    } else if (cmd == "query_ns") {
      pmix_query_t q;
      PMIX_QUERY_CONSTRUCT(&q);
      for (const auto& key : split(parts.at(2), ',')) {
        pmix_status_t appended;
        PMIX_ARGV_APPEND(appended, q.keys, key.c_str());
        (void)appended;
      }
      const int seconds = parts.size() > 3 && parts[3].rfind("timeout=", 0) == 0 ? std::atoi(parts[3].c_str() + 8) : 0;
      PMIX_INFO_CREATE(q.qualifiers, 2);
      q.nqual = seconds > 0 ? 2 : 1;
      PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_NSPACE, nspace_named(parts.at(1)).c_str(), PMIX_STRING);
      PMIX_INFO_LOAD(&q.qualifiers[1], PMIX_TIMEOUT, &seconds, PMIX_INT);
      pmix_info_t* results = nullptr;
      size_t nresults = 0;
      const auto rc = PMIx_Query_info(&q, 1, &results, &nresults);
      say(step, rc, std::to_string(nresults));
      PMIX_INFO_FREE(results, nresults);
      PMIX_QUERY_DESTRUCT(&q);
    } else if (cmd == "log_as") {
      // log_as:<nspace>.<rank>:<priority>:<channel>:<text>, the text being
      // the rest of the step (colons, newlines and escapes included).
      std::size_t at = step.find(':') + 1;
      auto next = [&] {
        const auto colon = step.find(':', at);
        std::string field = step.substr(at, colon - at);
        at = colon + 1;
        return field;
      };
      const auto who = next();
      const int priority = std::atoi(next().c_str());
      const auto channel = next();
      const auto text = step.substr(at);
      pmix_proc_t source;
      const auto dot = who.rfind('.');
      PMIX_LOAD_PROCID(&source, who.substr(0, dot).c_str(), static_cast<pmix_rank_t>(std::atoi(who.c_str() + dot + 1)));
      pmix_info_t data, directives[2];
      PMIX_INFO_LOAD(&data, channel == "syslog" ? PMIX_LOG_SYSLOG : PMIX_LOG_STDERR, text.c_str(), PMIX_STRING);
      PMIX_INFO_LOAD(&directives[0], PMIX_LOG_SOURCE, &source, PMIX_PROC);
      PMIX_INFO_LOAD(&directives[1], PMIX_LOG_SYSLOG_PRI, &priority, PMIX_INT);
      say("log_as", PMIx_Log(&data, 1, directives, 2));
      PMIX_INFO_DESTRUCT(&data);
      PMIX_INFO_DESTRUCT(&directives[0]);
      PMIX_INFO_DESTRUCT(&directives[1]);
    } else if (cmd == "get_ns") {
      pmix_proc_t who;
      const auto& r = parts.at(2);
      PMIX_LOAD_PROCID(&who, nspace_named(parts.at(1)).c_str(),
                       r == "*" ? PMIX_RANK_WILDCARD : static_cast<pmix_rank_t>(std::atoi(r.c_str())));
      pmix_value_t* val = nullptr;
      pmix_info_t timeout;
      const int seconds = parts.size() > 4 && parts[4].rfind("timeout=", 0) == 0 ? std::atoi(parts[4].c_str() + 8) : 0;
      PMIX_INFO_LOAD(&timeout, PMIX_TIMEOUT, &seconds, PMIX_INT);
      const auto rc = PMIx_Get(&who, parts.at(3).c_str(), seconds > 0 ? &timeout : nullptr, seconds > 0 ? 1 : 0, &val);
      say(step, rc, rc == PMIX_SUCCESS ? text_of(val) : "");
      if (val != nullptr) PMIX_VALUE_RELEASE(val);
      PMIX_INFO_DESTRUCT(&timeout);
    } else if (cmd == "log" || cmd == "log_nb") {
      const auto channel = parts.at(1);
      const char* key = channel == "stderr" ? PMIX_LOG_STDERR : channel == "stdout" ? PMIX_LOG_STDOUT : PMIX_LOG_SYSLOG;
      pmix_info_t data;
      PMIX_INFO_LOAD(&data, key, step.substr(cmd.size() + channel.size() + 2).c_str(), PMIX_STRING);
      if (cmd == "log") {
        say(step, PMIx_Log(&data, 1, nullptr, 0));
      } else {
        pending p;
        const auto rc = PMIx_Log_nb(&data, 1, nullptr, 0, op_done, &p);
        if (rc == PMIX_SUCCESS) p.wait();
        say(step, rc == PMIX_SUCCESS ? p.status : rc);
      }
      PMIX_INFO_DESTRUCT(&data);
    } else if (cmd == "resolve_peers") {
      pmix_proc_t* procs = nullptr;
      size_t n = 0;
      const std::string ns = parts.at(2) == "*" ? std::string{} : nspace_named(parts.at(2));
      const auto rc = PMIx_Resolve_peers(parts.at(1) == "-" ? nullptr : parts.at(1).c_str(),
                                         ns.empty() ? nullptr : ns.c_str(), &procs, &n);
      std::string text;
      for (size_t k = 0; k < n; ++k)
        text += (k == 0 ? "" : ",") + std::string{procs[k].nspace} + "." + std::to_string(procs[k].rank);
      say(step, rc, text);
      if (procs != nullptr) PMIX_PROC_FREE(procs, n);
    } else if (cmd == "resolve_nodes") {
      char* list = nullptr;
      const std::string ns = parts.at(1) == "*" ? std::string{} : nspace_named(parts.at(1));
      const auto rc = PMIx_Resolve_nodes(ns.empty() ? nullptr : ns.c_str(), &list);
      say(step, rc, list == nullptr ? "" : list);
      std::free(list);
    } else if (cmd == "directive") {
      const auto& call = parts.at(1);
      pmix_info_t info;
      bool on = true;
      PMIX_INFO_LOAD(&info, parts.at(2).c_str(), &on, PMIX_BOOL);
      if (parts.at(3) == "reqd") PMIX_INFO_REQUIRED(&info);
      pmix_status_t rc = PMIX_ERR_BAD_PARAM;
      if (call == "init") {
        pmix_proc_t p;
        rc = PMIx_Init(&p, &info, 1);
        if (rc == PMIX_SUCCESS) PMIx_Finalize(nullptr, 0);  // balanced: this was an extra reference
      } else if (call == "finalize") {
        pmix_proc_t p;
        PMIx_Init(&p, nullptr, 0);  // an extra reference to give back
        rc = PMIx_Finalize(&info, 1);
        if (rc != PMIX_SUCCESS) PMIx_Finalize(nullptr, 0);
      } else if (call == "fence") {
        rc = PMIx_Fence(nullptr, 0, &info, 1);
      } else if (call == "get") {
        pmix_proc_t who;
        PMIX_LOAD_PROCID(&who, me.nspace, PMIX_RANK_WILDCARD);
        pmix_value_t* val = nullptr;
        rc = PMIx_Get(&who, PMIX_JOB_SIZE, &info, 1, &val);
        if (val != nullptr) PMIX_VALUE_RELEASE(val);
      } else if (call == "connect") {
        pmix_proc_t all;
        PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
        rc = PMIx_Connect(&all, 1, &info, 1);
      } else if (call == "handler") {
        auto handler = [](size_t, pmix_status_t, const pmix_proc_t*, pmix_info_t[], size_t, pmix_info_t[], size_t,
                          pmix_event_notification_cbfunc_fn_t cbfunc, void* cbdata) {
          if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, nullptr, 0, nullptr, nullptr, cbdata);
        };
        rc = PMIx_Register_event_handler(nullptr, 0, &info, 1, handler, nullptr, nullptr);
        if (rc >= 0) {
          PMIx_Deregister_event_handler(static_cast<size_t>(rc), nullptr, nullptr);
          rc = PMIX_SUCCESS;
        }
      }
      say(step, rc);
      PMIX_INFO_DESTRUCT(&info);
    } else if (cmd == "initialized") {
      say(step, PMIX_SUCCESS, std::to_string(PMIx_Initialized()));
    } else if (cmd == "abort") {
      say(step, PMIx_Abort(std::atoi(parts.at(1).c_str()), "script_client abort", nullptr, 0));
    } else if (pmix::test::run_request_step(step, parts, me, [](const std::string& s, pmix_status_t rc,
                                                                  const std::string& extra) { say(s, rc, extra); })) {
      // (done)
    } else if (pmix::test::run_group_step(step, parts, me, [](const std::string& s, pmix_status_t rc,
                                                                const std::string& extra) { say(s, rc, extra); })) {
      // (done)
    } else if (pmix::test::run_tool_step(step, parts, [](const std::string& s, pmix_status_t rc,
                                                         const std::string& extra) { say(s, rc, extra); })) {
      // (done)
    } else if (local_functions::run(step, cmd, parts)) {
      // one of the steps of the block above
    } else {
      std::fprintf(stderr, "script_client: unknown step '%s'\n", step.c_str());
      return 2;
    }
  }
  return 0;
}
