#include "faults.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <cerrno>
#include <pmix.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#if __has_include("api/server_runtime_abi.h")
#include "api/server_runtime_abi.h"
#define PMIXRUN_HAS_FAULTS 1
#endif

namespace pmixrun {

#ifdef PMIXRUN_HAS_FAULTS
namespace {
const pmix_cxx_server_runtime_t* runtime_table() {
  void* h = ::dlopen(PMIX_CXX_SERVER_LIBRARY, RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return nullptr;
  auto fn = reinterpret_cast<pmix_cxx_server_runtime_fn>(::dlsym(h, PMIX_CXX_SERVER_RUNTIME_SYMBOL));
  const auto* t = fn == nullptr ? nullptr : fn();
  return t != nullptr && t->version == PMIX_CXX_SERVER_RUNTIME_VERSION ? t : nullptr;
}
}  // namespace

bool faults_available() { return runtime_table() != nullptr; }

bool faults_check(const std::string& nspace, int wait_ms, std::string& report) {
  const auto* t = runtime_table();
  if (t == nullptr) {
    report = "the invariant checker is not available in this PMIx library\n";
    return false;
  }
  char* text = nullptr;
  const auto rc = t->faults_check(nspace.empty() ? nullptr : nspace.c_str(), wait_ms, &text);
  report = text != nullptr ? text : "";
  std::free(text);
  if (rc != PMIX_SUCCESS && rc != PMIX_ERROR)
    report += std::string{"violation the checker failed: "} + PMIx_Error_string(rc) + "\n";
  return rc == PMIX_SUCCESS;
}

void faults_disarm() {
  if (const auto* t = runtime_table()) t->faults_disarm();
}
#else
bool faults_available() { return false; }
bool faults_check(const std::string&, int, std::string& report) {
  report = "the invariant checker is not available in this PMIx library\n";
  return false;
}
void faults_disarm() {}
#endif

int probe_client() {
  pmix_proc_t me;
  pmix_status_t rc = PMIx_Init(&me, nullptr, 0);
  if (rc != PMIX_SUCCESS) {
    std::fprintf(stderr, "probe: PMIx_Init: %s\n", PMIx_Error_string(rc));
    return 1;
  }
  int failures = 0;
  auto check = [&](const char* what, pmix_status_t st) {
    if (st == PMIX_SUCCESS) return;
    std::fprintf(stderr, "probe: %s: %s\n", what, PMIx_Error_string(st));
    ++failures;
  };
  pmix_value_t v;
  PMIX_VALUE_LOAD(&v, &me.rank, PMIX_UINT32);
  check("PMIx_Put", PMIx_Put(PMIX_GLOBAL, "pmixrun.probe", &v));
  PMIX_VALUE_DESTRUCT(&v);
  check("PMIx_Commit", PMIx_Commit());
  pmix_info_t collect;
  bool yes = true;
  PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
  check("PMIx_Fence", PMIx_Fence(nullptr, 0, &collect, 1));
  PMIX_INFO_DESTRUCT(&collect);
  pmix_value_t* got = nullptr;
  check("PMIx_Get", PMIx_Get(&me, "pmixrun.probe", nullptr, 0, &got));
  if (got != nullptr) PMIX_VALUE_RELEASE(got);
  check("PMIx_Finalize", PMIx_Finalize(nullptr, 0));
  return failures == 0 ? 0 : 1;
}

namespace {
// Runs pmixrun with `plan`; true when it fails an invariant (exit status 3).
bool still_fails(const std::string& plan, const std::string& seed, const std::vector<std::string>& command) {
  const pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) {
    std::vector<std::string> args{command.front(), "--quiet", "--faults", plan, "--seed", seed};
    args.insert(args.end(), command.begin() + 1, command.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) {
      ::dup2(null, 1);
      ::dup2(null, 2);
    }
    ::execv("/proc/self/exe", argv.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 3;
}

std::string join(const std::vector<std::string>& rules) {
  std::string s;
  for (const auto& r : rules) s += (s.empty() ? "" : "; ") + r;
  return s;
}
}  // namespace

std::string shrink(const std::vector<std::string>& trace, const std::string& seed,
                   const std::vector<std::string>& command) {
  std::vector<std::string> rules = trace;
  // One rule at a time, as long as removing one keeps the run failing.
  for (bool removed = true; removed && rules.size() > 1;) {
    removed = false;
    for (std::size_t k = 0; k < rules.size(); ++k) {
      auto fewer = rules;
      fewer.erase(fewer.begin() + static_cast<long>(k));
      if (still_fails(join(fewer), seed, command)) {
        std::fprintf(stderr, "pmixrun: shrink: still failing without %s\n", rules[k].c_str());
        rules = std::move(fewer);
        removed = true;
        break;
      }
    }
  }
  return join(rules);
}

}  // namespace pmixrun
