// Test support: short temporary directories, child processes with captured
// output, and generous timeouts that only guard against hangs.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace pmix::test {

// A directory under /tmp (short enough for Unix socket paths), removed with
// its contents when the object dies.
class temp_dir {
 public:
  temp_dir();
  ~temp_dir();
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A child process running `argv` with `env` (NAME=value entries); its stdout
// and stderr go to files read back by output()/errors().
class child {
 public:
  // With `run_as` set, the child drops to that uid and gid before exec.
  child(const std::vector<std::string>& argv, const std::vector<std::string>& env,
        const std::string& capture_dir, uid_t run_as = static_cast<uid_t>(-1));
  ~child();  // kills the child if still running
  child(child&&) noexcept;
  child(const child&) = delete;

  pid_t pid() const { return pid_; }
  // Waits up to `limit` (a guard against hangs, never a timing assertion).
  // Returns the wait status, or -1 if the child had to be killed. A limit of
  // 0 only polls: -2 if the child is still running.
  int wait(std::chrono::seconds limit = std::chrono::seconds(120));
  bool exited_with(int code);  // waits, then checks
  std::string output() const;
  std::string errors() const;

 private:
  pid_t pid_ = -1;
  int status_ = -1;
  bool reaped_ = false;
  std::string out_path_;
  std::string err_path_;
};

// This process's environment as NAME=value entries, plus `extra` (which
// replaces entries of the same name).
std::vector<std::string> environment_with(const std::vector<std::string>& extra);

// The path of a file in the test's runfiles (e.g. "tools/demo/pmix_demo").
std::string runfile(const std::string& workspace_relative);

std::string read_file(const std::string& path);

}  // namespace pmix::test
