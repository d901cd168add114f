// A PMIx server in its own process, for tests that need two servers or a
// server's standard streams. Each argument is a directive "key=value"
// (true/false: bool; digits: int, or pmix_rank_t for PMIX_SERVER_RANK;
// anything else: string). Prints "init <STATUS>" (and with $SERVER_HOST_JOB
// registers a job and prints its rank 0's environment), then waits until the file
// named by $SERVER_HOST_STOP exists (or for ever if unset; SIGKILL ends it),
// finalizes and prints "finalize <STATUS>". With $SERVER_HOST_QUERY set, the
// host module has a query up-call that answers every key with the job's
// namespace, so a tool can tell which server answered; without it there is
// no module. With $SERVER_HOST_RETRY a failed init is followed by what it
// left, the finalize answer and the same init again (below).
#include <pmix.h>
#include <dirent.h>
#include <pmix_server.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

// How many entries a directory of /proc has (this process's threads, its
// descriptors), "." and ".." and the listing's own descriptor aside.
std::size_t entries(const char* dir) {
  std::size_t n = 0;
  if (DIR* d = ::opendir(dir)) {
    while (const auto* e = ::readdir(d))
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) ++n;
    ::closedir(d);
  }
  return std::string{dir} == "/proc/self/fd" && n > 0 ? n - 1 : n;
}

std::string query_answer = "(no job)";  // what every query key gets (SERVER_HOST_QUERY)

struct answer {
  pmix_info_t* info;
  size_t ninfo;
};

void release_answer(void* cbdata) {
  auto* a = static_cast<answer*>(cbdata);
  PMIX_INFO_FREE(a->info, a->ninfo);
  delete a;
}

pmix_status_t answer_query(pmix_proc_t*, pmix_query_t* queries, size_t nqueries, pmix_info_cbfunc_t cbfunc,
                           void* cbdata) {
  auto* a = new answer{nullptr, 0};
  for (size_t q = 0; q < nqueries; ++q)
    for (char** k = queries[q].keys; k != nullptr && *k != nullptr; ++k) ++a->ninfo;
  PMIX_INFO_CREATE(a->info, a->ninfo);
  size_t n = 0;
  for (size_t q = 0; q < nqueries; ++q)
    for (char** k = queries[q].keys; k != nullptr && *k != nullptr; ++k)
      PMIX_INFO_LOAD(&a->info[n++], *k, query_answer.c_str(), PMIX_STRING);
  cbfunc(PMIX_SUCCESS, a->info, a->ninfo, cbdata, release_answer, a);
  return PMIX_SUCCESS;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<pmix_info_t> info(static_cast<std::size_t>(argc > 1 ? argc - 1 : 0));
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto eq = arg.find('=');
    const auto key = arg.substr(0, eq);
    const auto val = arg.substr(eq + 1);
    auto& d = info[static_cast<std::size_t>(i - 1)];
    if (val == "true" || val == "false") {
      bool b = val == "true";
      PMIX_INFO_LOAD(&d, key.c_str(), &b, PMIX_BOOL);
    } else if (!val.empty() && val.find_first_not_of("0123456789") == std::string::npos) {
      if (key == PMIX_SERVER_RANK) {
        pmix_rank_t r = static_cast<pmix_rank_t>(std::stoul(val));
        PMIX_INFO_LOAD(&d, key.c_str(), &r, PMIX_PROC_RANK);
      } else {
        int n = std::atoi(val.c_str());
        PMIX_INFO_LOAD(&d, key.c_str(), &n, PMIX_INT);
      }
    } else {
      PMIX_INFO_LOAD(&d, key.c_str(), val.c_str(), PMIX_STRING);
    }
  }
  pmix_server_module_t module{};
  module.query = answer_query;
  const bool with_query = std::getenv("SERVER_HOST_QUERY") != nullptr;
  if (const char* job = std::getenv("SERVER_HOST_JOB")) {
    const std::string spec = job;
    query_answer = spec.substr(0, spec.find(':'));
  }
  if (std::getenv("SERVER_HOST_RETRY") != nullptr)
    std::printf("before %zu %zu\n", entries("/proc/self/task"), entries("/proc/self/fd"));
  const auto rc =
      PMIx_server_init(with_query ? &module : nullptr, info.empty() ? nullptr : info.data(), info.size());
  std::printf("init %s\n", PMIx_Error_string(rc));
  std::fflush(stdout);
  if (rc != PMIX_SUCCESS && std::getenv("SERVER_HOST_RETRY") != nullptr) {
    // SERVER_HOST_RETRY: after a failed init, what it left ("left
    // <threads> <descriptors>" of this process), the finalize answer, then
    // RLIMIT_NPROC's soft limit raised to its hard one and the same init
    // again (the caller may correct what was refused and call again).
    std::printf("left %zu %zu\n", entries("/proc/self/task"), entries("/proc/self/fd"));
    std::printf("finalize %s\n", PMIx_Error_string(PMIx_server_finalize()));
    rlimit nproc{};
    ::getrlimit(RLIMIT_NPROC, &nproc);
    nproc.rlim_cur = nproc.rlim_max;
    ::setrlimit(RLIMIT_NPROC, &nproc);
    const auto again = PMIx_server_init(nullptr, info.empty() ? nullptr : info.data(), info.size());
    std::printf("init %s\n", PMIx_Error_string(again));
    if (again == PMIX_SUCCESS) std::printf("finalize %s\n", PMIx_Error_string(PMIx_server_finalize()));
    for (auto& d : info) PMIX_INFO_DESTRUCT(&d);
    return again == PMIX_SUCCESS ? 0 : 1;
  }
  for (auto& d : info) PMIX_INFO_DESTRUCT(&d);
  if (rc != PMIX_SUCCESS) return 1;
  // SERVER_HOST_JOB=<nspace>:<size>[:<uid>]: registers that job, every rank
  // here and registered for this user (or user <uid>, with the same gid),
  // and prints the environment of rank 0's process ("env NAME=value" lines,
  // then "ready").
  if (const char* job = std::getenv("SERVER_HOST_JOB")) {
    const std::string spec = job;
    const auto colon = spec.find(':');
    const std::string nspace = spec.substr(0, colon);
    const std::uint32_t size = static_cast<std::uint32_t>(std::stoul(spec.substr(colon + 1)));
    const auto second = spec.find(':', colon + 1);
    const uid_t uid = second == std::string::npos ? getuid() : static_cast<uid_t>(std::stoul(spec.substr(second + 1)));
    const gid_t gid = second == std::string::npos ? getgid() : static_cast<gid_t>(uid);
    pmix_info_t jinfo;
    PMIX_INFO_LOAD(&jinfo, PMIX_JOB_SIZE, &size, PMIX_UINT32);
    if (PMIx_server_register_nspace(nspace.c_str(), static_cast<int>(size), &jinfo, 1, nullptr, nullptr) !=
        PMIX_SUCCESS)
      return 2;
    PMIX_INFO_DESTRUCT(&jinfo);
    for (pmix_rank_t r = 0; r < size; ++r) {
      pmix_proc_t p;
      PMIX_LOAD_PROCID(&p, nspace.c_str(), r);
      if (PMIx_server_register_client(&p, uid, gid, nullptr, nullptr, nullptr) != PMIX_SUCCESS) return 3;
    }
    pmix_proc_t p0;
    PMIX_LOAD_PROCID(&p0, nspace.c_str(), 0);
    char** env = nullptr;
    PMIx_server_setup_fork(&p0, &env);
    for (char** e = env; e != nullptr && *e != nullptr; ++e) std::printf("env %s\n", *e);
    PMIX_ARGV_FREE(env);
    std::printf("ready\n");
    std::fflush(stdout);
  }
  const char* stop = std::getenv("SERVER_HOST_STOP");
  while (stop == nullptr || ::access(stop, F_OK) != 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::printf("finalize %s\n", PMIx_Error_string(PMIx_server_finalize()));
  return 0;
}
