#include "tests/support/process.hpp"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace pmix::test {

temp_dir::temp_dir() {
  char pattern[] = "/tmp/pmixt.XXXXXX";
  if (::mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

temp_dir::~temp_dir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

namespace {
std::atomic<int> counter{0};
}

child::child(const std::vector<std::string>& argv, const std::vector<std::string>& env,
             const std::string& capture_dir, uid_t run_as) {
  const int n = counter++;
  out_path_ = capture_dir + "/out." + std::to_string(n);
  err_path_ = capture_dir + "/err." + std::to_string(n);
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  std::fflush(nullptr);
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    const int out = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out, 1);
    ::dup2(err, 2);
    if (run_as != static_cast<uid_t>(-1)) {
      if (::setgroups(0, nullptr) != 0 || ::setgid(run_as) != 0 || ::setuid(run_as) != 0) {
        std::fprintf(stderr, "cannot become uid %u: %s\n", run_as, std::strerror(errno));
        ::_exit(126);
      }
    }
    ::execve(args[0], args.data(), envp.data());
    std::fprintf(stderr, "exec %s failed: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
}

child::child(child&& other) noexcept
    : pid_(other.pid_),
      status_(other.status_),
      reaped_(other.reaped_),
      out_path_(std::move(other.out_path_)),
      err_path_(std::move(other.err_path_)) {
  other.pid_ = -1;
  other.reaped_ = true;
}

child::~child() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

int child::wait(std::chrono::seconds limit) {
  if (reaped_) return status_;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      status_ = status;
      return status_;
    }
    if (limit.count() == 0) return -2;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      reaped_ = true;
      status_ = -1;
      return status_;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

bool child::exited_with(int code) {
  const int s = wait();
  return s != -1 && WIFEXITED(s) && WEXITSTATUS(s) == code;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string child::output() const { return read_file(out_path_); }
std::string child::errors() const { return read_file(err_path_); }

std::vector<std::string> environment_with(const std::vector<std::string>& extra) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string s{*e};
    const auto eq = s.find('=');
    if (eq != std::string::npos) vars[s.substr(0, eq)] = s.substr(eq + 1);
  }
  for (const auto& s : extra) {
    const auto eq = s.find('=');
    vars[s.substr(0, eq)] = eq == std::string::npos ? "" : s.substr(eq + 1);
  }
  std::vector<std::string> out;
  for (const auto& [k, v] : vars) out.push_back(k + "=" + v);
  return out;
}

std::string runfile(const std::string& workspace_relative) {
  if (const char* dir = std::getenv("TEST_SRCDIR")) {
    const std::string path = std::string{dir} + "/pmixcxx/" + workspace_relative;
    if (::access(path.c_str(), F_OK) == 0) return path;
  }
  return workspace_relative;
}

}  // namespace pmix::test
