// End-to-end: hostile local users (issue 14, docs/security.md). The server
// runs as root, next to other users' processes; each case reproduces an
// attack with a real process of another user (uid 65534) over the real
// socket. Needs root, as CI has.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <pmix_server.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/e2e/host.hpp"

using namespace pmix::test;

namespace {

constexpr uid_t nobody = 65534;

// A process of another user claiming rank `r` of `nspace`, with the
// environment the host would have given that rank.
child impostor(const std::string& nspace, pmix_rank_t r, const std::vector<std::string>& steps,
               const std::string& bin, const std::string& capture) {
  pmix_proc_t p;
  PMIX_LOAD_PROCID(&p, nspace.c_str(), r);
  char** env = nullptr;
  PMIx_server_setup_fork(&p, &env);
  std::vector<std::string> extra{"LD_LIBRARY_PATH=" + bin};
  for (char** e = env; e != nullptr && *e != nullptr; ++e) extra.emplace_back(*e);
  PMIX_ARGV_FREE(env);
  std::vector<std::string> argv{bin + "/script_client"};
  argv.insert(argv.end(), steps.begin(), steps.end());
  return child(argv, environment_with(extra), capture, nobody);
}

// This process's stderr goes to a file while the object lives.
class capture_stderr {
 public:
  explicit capture_stderr(const std::string& path) : saved_(::dup(STDERR_FILENO)) {
    const int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(file, STDERR_FILENO);
    ::close(file);
  }
  ~capture_stderr() {
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
  }

 private:
  int saved_;
};

pmix_status_t register_rank(const std::string& nspace, pmix_rank_t r, uid_t uid, gid_t gid) {
  pmix_proc_t p;
  PMIX_LOAD_PROCID(&p, nspace.c_str(), r);
  return PMIx_server_register_client(&p, uid, gid, nullptr, nullptr, nullptr);
}

}  // namespace

TEST_SUITE("hostile local users") {
  TEST_CASE("[issue 14.1] another user cannot connect as any rank of a root job: registered, unregistered, remote, "
            "deregistered") {
    if (::getuid() != 0) FAIL("this test runs processes as another user: run it as root (CI does)");
    temp_dir dir;
    ::chmod(dir.path().c_str(), 0711);  // other users may reach the socket, not list the folder
    const auto bin = stage_for_other_user(dir.path());
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    // Ranks 0 and 1 here, rank 2 on another node; only rank 0 is registered.
    REQUIRE(register_job("rootjob", 3, 1) == PMIX_SUCCESS);
    const int connected_before = record().connected;

    for (pmix_rank_t r : {0u, 1u, 2u}) {
      CAPTURE(r);
      auto c = impostor("rootjob", r, {"init", "put:forged=1", "commit", "fence:collect"}, bin, dir.path());
      CHECK_MESSAGE(c.exited_with(0), c.errors());
      const auto out = c.output();
      CHECK_MESSAGE(contains(out, "init PMIX_ERR_"), out);
      CHECK_FALSE(contains(out, "init PMIX_SUCCESS"));
    }
    // None of them reached the host, nor took part in anything.
    CHECK(record().connected == connected_before);
    CHECK(record().aborts == 0);
    CHECK(take_snapshot().connections == 0);

    // Root itself cannot connect as a rank the host deregistered, until the
    // host registers it again.
    pmix_proc_t p0;
    PMIX_LOAD_PROCID(&p0, "rootjob", 0);
    PMIx_server_deregister_client(&p0, nullptr, nullptr);
    {
      auto c = launch("rootjob", 0, {runfile("tests/e2e/script_client"), "init", "finalize"}, dir.path());
      CHECK_MESSAGE(c.exited_with(0), c.errors());
      CHECK_MESSAGE(contains(c.output(), "init PMIX_ERR_NOT_FOUND"), c.output());
    }
    REQUIRE(register_rank("rootjob", 0, 0, 0) == PMIX_SUCCESS);
    {
      auto c = launch("rootjob", 0, {runfile("tests/e2e/script_client"), "init", "finalize"}, dir.path());
      CHECK_MESSAGE(c.exited_with(0), c.errors());
      CHECK(contains(c.output(), "init PMIX_SUCCESS"));
    }
    CHECK(deregister_job("rootjob") == PMIX_SUCCESS);
  }

  TEST_CASE("[issue 14.1] a user's own job admits that user, and only as the ranks registered for it") {
    if (::getuid() != 0) FAIL("this test runs processes as another user: run it as root (CI does)");
    temp_dir dir;
    ::chmod(dir.path().c_str(), 0711);
    const auto bin = stage_for_other_user(dir.path());
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    pmix_info_t info;
    const std::uint32_t size = 2;
    PMIX_INFO_LOAD(&info, PMIX_JOB_SIZE, &size, PMIX_UINT32);
    REQUIRE(PMIx_server_register_nspace("userjob", 2, &info, 1, nullptr, nullptr) == PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&info);
    REQUIRE(register_rank("userjob", 0, nobody, nobody) == PMIX_SUCCESS);
    auto own = impostor("userjob", 0, {"init", "finalize"}, bin, dir.path());
    CHECK_MESSAGE(own.exited_with(0), own.errors());
    CHECK_MESSAGE(contains(own.output(), "init PMIX_SUCCESS"), own.output());
    auto other = impostor("userjob", 1, {"init"}, bin, dir.path());
    CHECK_MESSAGE(other.exited_with(0), other.errors());
    CHECK_MESSAGE(contains(other.output(), "init PMIX_ERR_NOT_FOUND"), other.output());
    CHECK(deregister_job("userjob") == PMIX_SUCCESS);
  }

  TEST_CASE("[issue 14.7] register_client refuses a rank beyond the job size, and another user for a registered rank") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("sized", 2, 2) == PMIX_SUCCESS);  // ranks 0 and 1 registered for this user
    CHECK(register_rank("sized", 2, ::getuid(), ::getgid()) == PMIX_ERR_BAD_PARAM);
    CHECK(register_rank("sized", 1, nobody, nobody) == PMIX_ERR_EXISTS);
    CHECK(register_rank("sized", 1, ::getuid(), ::getgid()) == PMIX_SUCCESS);  // the same user again
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, "sized", 1);
    PMIx_server_deregister_client(&p, nullptr, nullptr);
    CHECK(register_rank("sized", 1, nobody, nobody) == PMIX_SUCCESS);  // once deregistered, anyone the host says
    // Before the namespace: the same rules once it comes.
    CHECK(register_rank("early", 0, nobody, nobody) == PMIX_SUCCESS);
    CHECK(register_rank("early", 0, ::getuid(), ::getgid()) == PMIX_ERR_EXISTS);
    CHECK(register_rank("early", 5, nobody, nobody) == PMIX_SUCCESS);
    // The namespace comes; register_job then registers rank 0 for this user:
    // refused, the rank is nobody's.
    CHECK(register_job("early", 1, 1) == PMIX_ERR_EXISTS);
    auto snap = take_snapshot();
    const auto* ns = snap.nspace("early");
    REQUIRE(ns != nullptr);
    CHECK(ns->rank(5) == nullptr);  // beyond the job size: dropped
    CHECK(deregister_job("early") == PMIX_SUCCESS);
    CHECK(deregister_job("sized") == PMIX_SUCCESS);
  }

  TEST_CASE("[issue 14.6] control characters a client sends reach the server's log escaped") {
    temp_dir dir;
    const std::string log_file = dir.path() + "/server.log";
    const std::string evil = "evil\n[pmix 1] error server: forged line\x1b[31m";
    {
      server srv(dir.path());
      REQUIRE(srv.status() == PMIX_SUCCESS);
      capture_stderr capture{log_file};
      // A namespace nobody registered: the server logs the refusal, naming it.
      auto c = launch(evil, 0, {runfile("tests/e2e/script_client"), "init"}, dir.path());
      CHECK(c.exited_with(0));
      CHECK(contains(c.output(), "init PMIX_ERR_NOT_FOUND"));
    }
    const auto logged = read_file(log_file);
    CHECK_MESSAGE(contains(logged, "evil\\x0a[pmix 1] error server: forged line\\x1b[31m"), logged);
    CHECK(logged.find('\x1b') == std::string::npos);
    // Every line the server wrote is one of its own.
    std::size_t start = 0;
    while (start < logged.size()) {
      const auto end = logged.find('\n', start);
      const auto line = logged.substr(start, end - start);
      CHECK_MESSAGE(line.rfind("[pmix ", 0) == 0, line);
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
}
