// Rendezvous files (server/rendezvous.hpp): the file format, modes under
// several umasks, created and existing directories, stale and live files,
// plain files and removal. Real files in fresh directories under /tmp; dead
// and live PIDs come from child processes. The tests run as root in CI, so
// none relies on a permission being refused.
#include "server/rendezvous.hpp"

#include <dirent.h>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pmix_common.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

using pmix::server::format;
using pmix::server::parse;
using pmix::server::process_alive;
using pmix::server::read_file;
using pmix::server::rendezvous_contents;
using pmix::server::rendezvous_set;

namespace {

// A fresh directory under /tmp, removed with everything in it.
class temp_dir {
 public:
  temp_dir() {
    char name[] = "/tmp/rdvXXXXXX";
    REQUIRE(::mkdtemp(name) != nullptr);
    path_ = name;
  }
  ~temp_dir() {
    ::nftw(
        path_.c_str(),
        [](const char* p, const struct stat*, int, struct FTW*) {
          ::remove(p);
          return 0;
        },
        16, FTW_DEPTH | FTW_PHYS);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Sets the process umask for a scope.
class umask_scope {
 public:
  explicit umask_scope(mode_t mask) : old_(::umask(mask)) {}
  ~umask_scope() { ::umask(old_); }
  umask_scope(const umask_scope&) = delete;
  umask_scope& operator=(const umask_scope&) = delete;

 private:
  mode_t old_;
};

// A child process that sleeps until killed and reaped at scope exit.
class sleeping_child {
 public:
  sleeping_child() {
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      for (;;) ::pause();
    }
  }
  ~sleeping_child() { stop(); }
  sleeping_child(const sleeping_child&) = delete;
  sleeping_child& operator=(const sleeping_child&) = delete;
  pid_t pid() const { return pid_; }
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
};

// The PID of a child that has exited and been reaped.
pid_t dead_pid() {
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) ::_exit(0);
  REQUIRE(::waitpid(pid, nullptr, 0) == pid);
  return pid;
}

bool exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

// Permission bits, or -1 if missing.
int mode_of(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return -1;
  return static_cast<int>(st.st_mode & 07777);
}

ino_t inode_of(const std::string& path) {
  struct stat st;
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_ino;
}

// The names in a directory, sorted.
std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void put(const std::string& path, const std::string& text, mode_t mode = 0644) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, mode);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  ::close(fd);
}

rendezvous_contents ours() {
  rendezvous_contents c;
  c.uri = "myserver.0;uds:///tmp/x/server.sock";
  c.version = "4.2.2";
  c.pid = ::getpid();
  c.alt_uris = {"myserver.0;tcp4://127.0.0.1:5000"};
  return c;
}

rendezvous_contents someone_else(pid_t pid) {
  rendezvous_contents c;
  c.uri = "other.0;uds:///tmp/other/server.sock";
  c.version = "4.2.2";
  c.pid = pid;
  return c;
}

using strings = std::vector<std::string>;

}  // namespace

TEST_SUITE("rendezvous") {

// ---- format and parse ----------------------------------------------------------

TEST_CASE("format writes uri, version, pid and each alt uri on its own line") {
  rendezvous_contents c;
  c.uri = "a;uds:///s";
  c.version = "4.2.2";
  c.pid = 42;
  c.alt_uris = {"tcp4://10.0.0.1:5000", "tcp6://[::1]:5000"};
  CHECK(format(c) == "a;uds:///s\n4.2.2\n42\ntcp4://10.0.0.1:5000\ntcp6://[::1]:5000\n");
  c.alt_uris.clear();
  CHECK(format(c) == "a;uds:///s\n4.2.2\n42\n");
}

TEST_CASE("parse is the inverse of format") {
  std::vector<rendezvous_contents> cases;
  cases.push_back(ours());
  cases.push_back({"u", "", 1, {}});                          // empty version
  cases.push_back({"u;x", "4.2.2", 2147483647, {"a", "b", "c"}});  // largest pid_t
  cases.push_back({"u\r", "v 1", 7, {"alt with spaces\r"}});  // '\r' is part of the item
  for (const auto& c : cases) {
    CAPTURE(format(c));
    rendezvous_contents back;
    REQUIRE(parse(format(c), back));
    CHECK(back == c);
    CHECK(format(back) == format(c));
  }
}

TEST_CASE("parse rejects malformed text and leaves its output unchanged") {
  const strings bad = {
      "",
      "\n",
      "uri\n",
      "uri\n4.2.2\n",            // no pid line
      "uri\n4.2.2\n42",          // no final newline
      "uri\n4.2.2\n42\nalt",     // no final newline after an alt uri
      "\n4.2.2\n42\n",           // empty uri
      "uri\n4.2.2\n\n",          // empty pid
      "uri\n4.2.2\nabc\n",       // non-numeric pid
      "uri\n4.2.2\n42x\n",
      "uri\n4.2.2\n-42\n",
      "uri\n4.2.2\n+42\n",
      "uri\n4.2.2\n 42\n",
      "uri\n4.2.2\n42 \n",
      "uri\n4.2.2\n0\n",         // not a process
      "uri\n4.2.2\n042\n",       // leading zero
      "uri\n4.2.2\n2147483648\n",  // does not fit in pid_t
      "uri\n4.2.2\n99999999999999999999999\n",
      "uri\n4.2.2\n42\n\n",      // empty alt uri
      "uri\n4.2.2\n42\n\nalt\n",
      "uri\n4.2.2\n42\nalt\n\n",
      std::string("u\0ri\n4.2.2\n42\n", 13),  // NUL byte
  };
  for (const auto& text : bad) {
    CAPTURE(text);
    rendezvous_contents out = someone_else(5);
    CHECK_FALSE(parse(text, out));
    CHECK(out == someone_else(5));
  }
}

TEST_CASE("[issue 36] parse reads the form OpenPMIx's servers write, marked as theirs, with no alternatives") {
  // As OpenPMIx 4.2.2 writes it: the URI, its version, its pid, the
  // server's uid:gid, ctime()'s line (with its own newline) and a newline.
  const std::string theirs = "pmix-server.4704;tcp4://127.0.0.1:34505\n4.2.2rc2\n4704\n0:0\n"
                             "Sat Dec  5 02:54:59 2026\n\n";
  rendezvous_contents out;
  REQUIRE(parse(theirs, out));
  CHECK(out.openpmix);
  CHECK(out.uri == "pmix-server.4704;tcp4://127.0.0.1:34505");
  CHECK(out.version == "4.2.2rc2");
  CHECK(out.pid == 4704);
  CHECK(out.alt_uris.empty());
  // Ours is never read as theirs, nor written in their form.
  rendezvous_contents ours;
  REQUIRE(parse(format(out), ours));
  CHECK_FALSE(ours.openpmix);
  // Not their form: a bad uid:gid line, no time, or more lines after the
  // empty one.
  for (const std::string bad : {"u;tcp4://1.2.3.4:5\n4.2.2\n42\n0:\nSat\n\n", "u\n4.2.2\n42\n0:0\n\n\n",
                                "u\n4.2.2\n42\n0:0\nSat\n\nmore\n", "u\n4.2.2\n42\nx:0\nSat\n\n"}) {
    CAPTURE(bad);
    rendezvous_contents r;
    CHECK_FALSE(parse(bad, r));
  }
}

TEST_CASE("read_file reads a formatted file and rejects others") {
  temp_dir dir;
  const auto c = ours();
  put(dir / "good", format(c));
  rendezvous_contents out;
  REQUIRE(read_file(dir / "good", out));
  CHECK(out == c);

  put(dir / "bad", "not a rendezvous file");
  CHECK_FALSE(read_file(dir / "bad", out));
  CHECK_FALSE(read_file(dir / "missing", out));
  CHECK_FALSE(read_file(dir.path(), out));  // a directory
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  CHECK_FALSE(read_file(dir / "fifo", out));  // not regular: not even opened for long
  put(dir / "huge", std::string(2 << 20, 'x') + "\n4.2.2\n42\n");
  CHECK_FALSE(read_file(dir / "huge", out));
  CHECK(out == c);
}

TEST_CASE("process_alive: kill(pid, 0) succeeds or fails with EPERM") {
  CHECK(process_alive(::getpid()));
  CHECK(process_alive(1));  // init: alive, perhaps not ours to signal
  CHECK_FALSE(process_alive(dead_pid()));
  CHECK_FALSE(process_alive(0));   // would mean our process group
  CHECK_FALSE(process_alive(-1));  // would mean every process
  sleeping_child child;
  CHECK(process_alive(child.pid()));
  child.stop();
  CHECK_FALSE(process_alive(child.pid()));
}

// ---- modes ---------------------------------------------------------------------

TEST_CASE("[20.2.247.6.1] a rendezvous file is 0600, or 0644 for foreign tools, subject to the umask") {
  struct row {
    mode_t mask;
    bool world_readable;
    int expected;
  };
  const row rows[] = {
      {022, false, 0600}, {022, true, 0644}, {077, false, 0600},
      {077, true, 0600},  {027, true, 0640}, {0, true, 0644},
  };
  for (const auto& r : rows) {
    CAPTURE(r.mask);
    CAPTURE(r.world_readable);
    temp_dir dir;
    const std::string path = dir / "pmix.host.tool";
    rendezvous_set set;
    std::string error;
    {
      umask_scope mask(r.mask);
      REQUIRE(set.write(path, ours(), r.world_readable, error) == PMIX_SUCCESS);
    }
    CHECK(error.empty());
    CHECK(mode_of(path) == r.expected);
    rendezvous_contents back;
    REQUIRE(read_file(path, back));
    CHECK(back == ours());
    CHECK(set.files() == strings{path});
    CHECK(set.created_dirs().empty());
    CHECK(entries(dir.path()) == strings{"pmix.host.tool"});  // no temporary left
    CHECK(mode_of(dir.path()) == 0700);                      // mkdtemp's, untouched
    set.remove_all();
    CHECK_FALSE(exists(path));
    CHECK(exists(dir.path()));
  }
}

// ---- directories ---------------------------------------------------------------

TEST_CASE("[20.2.247.6.1] missing directories are created 0700, or 0755 for foreign tools, "
          "subject to the umask, and removed by remove_all") {
  struct row {
    mode_t mask;
    bool world_readable;
    int expected;
  };
  const row rows[] = {
      {022, false, 0700}, {022, true, 0755}, {077, false, 0700}, {077, true, 0700}, {027, true, 0750},
  };
  for (const auto& r : rows) {
    CAPTURE(r.mask);
    CAPTURE(r.world_readable);
    temp_dir dir;
    const std::string a = dir / "a";
    const std::string b = a + "/b";
    const std::string path = b + "/pmix.sys.host";
    rendezvous_set set;
    std::string error;
    {
      umask_scope mask(r.mask);
      REQUIRE(set.write(path, ours(), r.world_readable, error) == PMIX_SUCCESS);
    }
    CHECK(mode_of(a) == r.expected);
    CHECK(mode_of(b) == r.expected);
    CHECK(set.created_dirs() == strings{a, b});
    CHECK(entries(b) == strings{"pmix.sys.host"});
    set.remove_all();
    CHECK_FALSE(exists(a));
    CHECK(entries(dir.path()).empty());
    CHECK(mode_of(dir.path()) == 0700);
    CHECK(set.created_dirs().empty());
    CHECK(set.files().empty());
  }
}

TEST_CASE("[20.2.247.6.1] an existing directory is used as found: its mode is never changed") {
  umask_scope mask(022);
  SUBCASE("0711, foreign tools allowed") {
    temp_dir dir;
    const std::string d = dir / "d";
    REQUIRE(::mkdir(d.c_str(), 0700) == 0);
    REQUIRE(::chmod(d.c_str(), 0711) == 0);
    rendezvous_set set;
    std::string error;
    REQUIRE(set.write(d + "/rv", ours(), true, error) == PMIX_SUCCESS);
    CHECK(mode_of(d) == 0711);
    CHECK(mode_of(d + "/rv") == 0644);
    CHECK(set.created_dirs().empty());
    set.remove_all();
    CHECK(mode_of(d) == 0711);
  }
  SUBCASE("0700 stays 0700 even for foreign tools") {
    temp_dir dir;
    rendezvous_set set;
    std::string error;
    REQUIRE(set.write(dir / "rv", ours(), true, error) == PMIX_SUCCESS);
    CHECK(mode_of(dir.path()) == 0700);
  }
  SUBCASE("0777 stays 0777 and is not removed") {
    temp_dir dir;
    const std::string d = dir / "shared";
    REQUIRE(::mkdir(d.c_str(), 0700) == 0);
    REQUIRE(::chmod(d.c_str(), 0777) == 0);
    rendezvous_set set;
    std::string error;
    REQUIRE(set.write(d + "/rv", ours(), false, error) == PMIX_SUCCESS);
    CHECK(mode_of(d) == 0777);
    CHECK(mode_of(d + "/rv") == 0600);
    set.remove_all();
    CHECK(mode_of(d) == 0777);
    CHECK(entries(d).empty());
  }
  SUBCASE("only the missing part of the path is created, and only it is removed") {
    temp_dir dir;
    const std::string d = dir / "existing";
    REQUIRE(::mkdir(d.c_str(), 0750) == 0);
    rendezvous_set set;
    std::string error;
    REQUIRE(set.write(d + "/new/rv", ours(), false, error) == PMIX_SUCCESS);
    CHECK(set.created_dirs() == strings{d + "/new"});
    CHECK(mode_of(d) == 0750);
    set.remove_all();
    CHECK(mode_of(d) == 0750);
    CHECK(entries(d).empty());
  }
}

// ---- stale and live files ----------------------------------------------------

TEST_CASE("[20.2.247.6.1] a file whose PID is no longer running is removed and replaced") {
  umask_scope mask(022);
  temp_dir dir;
  const std::string path = dir / "pmix.host.tool";
  put(path, format(someone_else(dead_pid())), 0644);
  const ino_t old_inode = inode_of(path);
  rendezvous_set set;
  std::string error;
  REQUIRE(set.write(path, ours(), false, error) == PMIX_SUCCESS);
  rendezvous_contents back;
  REQUIRE(read_file(path, back));
  CHECK(back == ours());
  CHECK(inode_of(path) != old_inode);
  CHECK(mode_of(path) == 0600);  // ours, not the stale file's
  CHECK(entries(dir.path()) == strings{"pmix.host.tool"});
  set.remove_all();
  CHECK(entries(dir.path()).empty());
}

TEST_CASE("[20.2.247.6.1] a file that does not parse is stale and replaced") {
  const strings texts = {"", "garbage", "uri\n4.2.2\n", "uri\n4.2.2\nnot-a-pid\n"};
  for (const auto& text : texts) {
    CAPTURE(text);
    temp_dir dir;
    const std::string path = dir / "rv";
    put(path, text);
    rendezvous_set set;
    std::string error;
    REQUIRE(set.write(path, ours(), false, error) == PMIX_SUCCESS);
    CHECK(slurp(path) == format(ours()));
  }
}

TEST_CASE("[20.2.247.6.1] a dangling symbolic link at the name is stale and replaced") {
  temp_dir dir;
  const std::string path = dir / "rv";
  REQUIRE(::symlink((dir / "nowhere").c_str(), path.c_str()) == 0);
  rendezvous_set set;
  std::string error;
  REQUIRE(set.write(path, ours(), false, error) == PMIX_SUCCESS);
  struct stat st;
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  CHECK(S_ISREG(st.st_mode));
  CHECK_FALSE(exists(dir / "nowhere"));
}

TEST_CASE("[20.2.247.6.1] a file whose PID is running belongs to another server: "
          "PMIX_ERR_EXISTS, nothing written or created") {
  temp_dir dir;
  const std::string path = dir / "pmix.host.tool";
  sleeping_child other;
  SUBCASE("our own PID") {
    const std::string text = format(someone_else(::getpid()));
    put(path, text, 0640);
    const ino_t inode = inode_of(path);
    rendezvous_set set;
    std::string error;
    CHECK(set.write(path, ours(), true, error) == PMIX_ERR_EXISTS);
    CHECK(error.find(std::to_string(::getpid())) != std::string::npos);
    CHECK(slurp(path) == text);
    CHECK(inode_of(path) == inode);
    CHECK(mode_of(path) == 0640);
    CHECK(entries(dir.path()) == strings{"pmix.host.tool"});
    CHECK(set.files().empty());
    CHECK(set.created_dirs().empty());
    set.remove_all();
    CHECK(slurp(path) == text);  // never ours: not removed
  }
  SUBCASE("a sleeping child's PID, then replaced once the child is dead") {
    const std::string text = format(someone_else(other.pid()));
    put(path, text);
    rendezvous_set set;
    std::string error;
    CHECK(set.write(path, ours(), false, error) == PMIX_ERR_EXISTS);
    CHECK_FALSE(error.empty());
    CHECK(slurp(path) == text);
    CHECK(entries(dir.path()) == strings{"pmix.host.tool"});
    other.stop();
    REQUIRE(set.write(path, ours(), false, error) == PMIX_SUCCESS);
    CHECK(slurp(path) == format(ours()));
  }
  SUBCASE("the same set writing the same name twice is refused the second time") {
    rendezvous_set set;
    std::string error;
    REQUIRE(set.write(path, ours(), false, error) == PMIX_SUCCESS);
    CHECK(set.write(path, ours(), false, error) == PMIX_ERR_EXISTS);
    CHECK(set.files() == strings{path});
    set.remove_all();
    CHECK_FALSE(exists(path));
  }
  SUBCASE("reached through a missing directory: the directory made for the attempt is removed") {
    // "<dir>/new/../pmix.host.tool" names the live file only once "new"
    // exists, so the refusal comes after directories were created.
    const std::string text = format(someone_else(other.pid()));
    put(path, text);
    rendezvous_set set;
    std::string error;
    CHECK(set.write(dir / "new/../pmix.host.tool", ours(), false, error) == PMIX_ERR_EXISTS);
    CHECK(slurp(path) == text);
    CHECK(entries(dir.path()) == strings{"pmix.host.tool"});
    CHECK(set.created_dirs().empty());
    CHECK(set.files().empty());
  }
}

// ---- refusals and unwinding --------------------------------------------------

TEST_CASE("write refuses bad requests with PMIX_ERR_BAD_PARAM and leaves nothing behind") {
  temp_dir dir;
  REQUIRE(::mkdir((dir / "subdir").c_str(), 0700) == 0);
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  const strings before = entries(dir.path());

  struct row {
    const char* what;
    std::string path;
    rendezvous_contents contents;
  };
  auto with = [](auto change) {
    rendezvous_contents c = ours();
    change(c);
    return c;
  };
  const std::vector<row> rows = {
      {"empty path", "", ours()},
      {"relative path", "tmp/rv", ours()},
      {"no file name", dir / "new/", ours()},
      {"dot", dir / "new/.", ours()},
      {"dot dot", dir / "new/..", ours()},
      {"a directory", dir / "subdir", ours()},
      {"a fifo", dir / "fifo", ours()},
      {"empty uri", dir / "new/rv", with([](rendezvous_contents& c) { c.uri.clear(); })},
      {"pid 0", dir / "new/rv", with([](rendezvous_contents& c) { c.pid = 0; })},
      {"negative pid", dir / "new/rv", with([](rendezvous_contents& c) { c.pid = -3; })},
      {"newline in uri", dir / "new/rv", with([](rendezvous_contents& c) { c.uri += "\nx"; })},
      {"newline in version", dir / "new/rv",
       with([](rendezvous_contents& c) { c.version = "4\n2"; })},
      {"newline in alt uri", dir / "new/rv",
       with([](rendezvous_contents& c) { c.alt_uris = {"a\nb"}; })},
      {"empty alt uri", dir / "new/rv", with([](rendezvous_contents& c) { c.alt_uris = {""}; })},
  };
  for (const auto& r : rows) {
    CAPTURE(r.what);
    rendezvous_set set;
    std::string error;
    CHECK(set.write(r.path, r.contents, false, error) == PMIX_ERR_BAD_PARAM);
    CHECK_FALSE(error.empty());
    CHECK(set.files().empty());
    CHECK(set.created_dirs().empty());
    CHECK(entries(dir.path()) == before);
  }
}

TEST_CASE("a path under a regular file fails with nothing left behind") {
  temp_dir dir;
  const std::string file = dir / "file";
  put(file, "just a file\n");
  rendezvous_set set;
  std::string error;
  CHECK(set.write(file + "/sub/rv", ours(), false, error) == PMIX_ERR_BAD_PARAM);
  CHECK(error.find(file) != std::string::npos);
  CHECK(entries(dir.path()) == strings{"file"});
  CHECK(slurp(file) == "just a file\n");
  CHECK(set.files().empty());
  CHECK(set.created_dirs().empty());
}

TEST_CASE("a failure after directories were created removes them") {
  // The file name is too long for the file system; that is found only when
  // the file is published, after "a" and "a/b" were made.
  temp_dir dir;
  const std::string path = dir / ("a/b/" + std::string(NAME_MAX + 1, 'n'));
  rendezvous_set set;
  std::string error;
  CHECK(set.write(path, ours(), false, error) == PMIX_ERR_BAD_PARAM);
  CHECK_FALSE(error.empty());
  CHECK(entries(dir.path()).empty());
  CHECK(set.files().empty());
  CHECK(set.created_dirs().empty());
}

TEST_CASE("a failed write keeps what earlier writes of the set did") {
  temp_dir dir;
  rendezvous_set set;
  std::string error;
  REQUIRE(set.write(dir / "a/one", ours(), false, error) == PMIX_SUCCESS);
  REQUIRE(set.write(dir / "a/b/c/two", ours(), false, error) == PMIX_SUCCESS);
  put(dir / "file", "x");
  CHECK(set.write(dir / ("a/b/new/" + std::string(NAME_MAX + 1, 'n')), ours(), false, error) ==
        PMIX_ERR_BAD_PARAM);
  CHECK(set.write(dir / "file/sub/rv", ours(), false, error) == PMIX_ERR_BAD_PARAM);
  CHECK(set.files() == strings{dir / "a/one", dir / "a/b/c/two"});
  CHECK(set.created_dirs() == strings{dir / "a", dir / "a/b", dir / "a/b/c"});
  CHECK(entries(dir / "a/b") == strings{"c"});
  set.remove_all();
  CHECK(entries(dir.path()) == strings{"file"});
}

// ---- plain files ---------------------------------------------------------------

TEST_CASE("[20.2.247.6.1] write_plain: default permissions subject to the umask, removed by "
          "remove_all") {
  struct row {
    mode_t mask;
    int expected;
  };
  const row rows[] = {{022, 0644}, {077, 0600}, {0, 0666}};
  for (const auto& r : rows) {
    CAPTURE(r.mask);
    temp_dir dir;
    const std::string path = dir / "uri.txt";
    rendezvous_set set;
    std::string error;
    {
      umask_scope mask(r.mask);
      REQUIRE(set.write_plain(path, "myserver.0;tcp4://127.0.0.1:5000\n", error) == PMIX_SUCCESS);
    }
    CHECK(mode_of(path) == r.expected);
    CHECK(slurp(path) == "myserver.0;tcp4://127.0.0.1:5000\n");
    CHECK(entries(dir.path()) == strings{"uri.txt"});
    CHECK(set.files() == strings{path});
    set.remove_all();
    CHECK(entries(dir.path()).empty());
  }
}

TEST_CASE("write_plain replaces any existing file, even one naming a live process") {
  umask_scope mask(022);
  temp_dir dir;
  const std::string path = dir / "uri.txt";
  put(path, format(someone_else(::getpid())), 0600);
  rendezvous_set set;
  std::string error;
  REQUIRE(set.write_plain(path, "new\n", error) == PMIX_SUCCESS);
  CHECK(slurp(path) == "new\n");
  CHECK(mode_of(path) == 0644);
  SUBCASE("written twice: recorded once, removed") {
    REQUIRE(set.write_plain(path, "newer\n", error) == PMIX_SUCCESS);
    CHECK(slurp(path) == "newer\n");
    CHECK(set.files() == strings{path});
    set.remove_all();
    CHECK_FALSE(exists(path));
  }
}

TEST_CASE("write_plain creates no directory and refuses a directory") {
  temp_dir dir;
  rendezvous_set set;
  std::string error;
  CHECK(set.write_plain(dir / "missing/uri.txt", "x\n", error) == PMIX_ERR_BAD_PARAM);
  CHECK(error.find("missing") != std::string::npos);
  CHECK(set.write_plain(dir.path(), "x\n", error) == PMIX_ERR_BAD_PARAM);
  CHECK(set.write_plain("", "x\n", error) == PMIX_ERR_BAD_PARAM);
  put(dir / "file", "x");
  CHECK(set.write_plain(dir / "file/uri.txt", "x\n", error) == PMIX_ERR_BAD_PARAM);
  CHECK(entries(dir.path()) == strings{"file"});
  CHECK(set.files().empty());
  CHECK(set.created_dirs().empty());
}

TEST_CASE("write_plain takes a relative path from the current directory") {
  temp_dir dir;
  char cwd[PATH_MAX];
  REQUIRE(::getcwd(cwd, sizeof cwd) != nullptr);
  rendezvous_set set;
  std::string error;
  REQUIRE(::chdir(dir.path().c_str()) == 0);
  const auto rc = set.write_plain("uri.txt", "x\n", error);
  REQUIRE(::chdir(cwd) == 0);
  REQUIRE(rc == PMIX_SUCCESS);
  CHECK(set.files() == strings{dir / "uri.txt"});
  CHECK(slurp(dir / "uri.txt") == "x\n");
  set.remove_all();  // from another current directory
  CHECK(entries(dir.path()).empty());
}

// ---- removal -------------------------------------------------------------------

TEST_CASE("remove_all leaves a file that someone put in place of ours") {
  temp_dir dir;
  const std::string path = dir / "new/rv";
  rendezvous_set set;
  std::string error;
  REQUIRE(set.write(path, ours(), false, error) == PMIX_SUCCESS);
  REQUIRE(set.write_plain(dir / "uri.txt", "x\n", error) == PMIX_SUCCESS);
  // Replacements made while ours still exist, so they get other inodes.
  put(dir / "new/replacement", "someone else's\n");
  REQUIRE(::rename((dir / "new/replacement").c_str(), path.c_str()) == 0);
  put(dir / "replacement", "someone else's\n");
  REQUIRE(::rename((dir / "replacement").c_str(), (dir / "uri.txt").c_str()) == 0);
  set.remove_all();
  CHECK(slurp(path) == "someone else's\n");
  CHECK(slurp(dir / "uri.txt") == "someone else's\n");
  CHECK(exists(dir / "new"));  // not empty: stays
}

TEST_CASE("remove_all keeps ours when rewritten in place, and tolerates files already gone") {
  temp_dir dir;
  rendezvous_set set;
  std::string error;
  REQUIRE(set.write(dir / "one", ours(), false, error) == PMIX_SUCCESS);
  REQUIRE(set.write(dir / "two", ours(), false, error) == PMIX_SUCCESS);
  put(dir / "one", "changed in place\n");  // same inode: still ours
  REQUIRE(::unlink((dir / "two").c_str()) == 0);
  set.remove_all();
  CHECK(entries(dir.path()).empty());
}

TEST_CASE("remove_all removes files newest first, then the directories it created; a directory "
          "that is not empty stays") {
  temp_dir dir;
  rendezvous_set set;
  std::string error;
  REQUIRE(set.write(dir / "a/b/one", ours(), false, error) == PMIX_SUCCESS);
  REQUIRE(set.write(dir / "a/two", ours(), false, error) == PMIX_SUCCESS);
  REQUIRE(set.write(dir / "a/b/c/three", ours(), false, error) == PMIX_SUCCESS);
  CHECK(set.files() == strings{dir / "a/b/one", dir / "a/two", dir / "a/b/c/three"});
  CHECK(set.created_dirs() == strings{dir / "a", dir / "a/b", dir / "a/b/c"});
  put(dir / "a/b/foreign", "not ours\n");
  set.remove_all();
  CHECK(entries(dir.path()) == strings{"a"});
  CHECK(entries(dir / "a") == strings{"b"});
  CHECK(entries(dir / "a/b") == strings{"foreign"});
}

TEST_CASE("remove_all is idempotent, and the set can be used again") {
  temp_dir dir;
  rendezvous_set set;
  std::string error;
  REQUIRE(set.write(dir / "d/rv", ours(), false, error) == PMIX_SUCCESS);
  set.remove_all();
  CHECK(entries(dir.path()).empty());
  // Something new at the same place is not ours any more.
  REQUIRE(::mkdir((dir / "d").c_str(), 0700) == 0);
  put(dir / "d/rv", "new owner\n");
  set.remove_all();
  CHECK(slurp(dir / "d/rv") == "new owner\n");
  CHECK(set.files().empty());
  CHECK(set.created_dirs().empty());

  REQUIRE(set.write(dir / "e/rv", ours(), false, error) == PMIX_SUCCESS);
  set.remove_all();
  set.remove_all();
  CHECK_FALSE(exists(dir / "e"));
}

TEST_CASE("the destructor removes everything; a moved-from set owns nothing") {
  temp_dir dir;
  std::string error;
  {
    rendezvous_set set;
    REQUIRE(set.write(dir / "d/rv", ours(), false, error) == PMIX_SUCCESS);
    REQUIRE(set.write_plain(dir / "uri.txt", "x\n", error) == PMIX_SUCCESS);
  }
  CHECK(entries(dir.path()).empty());

  rendezvous_set target;
  {
    rendezvous_set source;
    REQUIRE(source.write(dir / "m/rv", ours(), false, error) == PMIX_SUCCESS);
    target = std::move(source);
    CHECK(source.files().empty());  // NOLINT(bugprone-use-after-move): documented state
    CHECK(source.created_dirs().empty());
  }
  CHECK(exists(dir / "m/rv"));
  rendezvous_set moved(std::move(target));
  CHECK(moved.files() == strings{dir / "m/rv"});
  moved.remove_all();
  CHECK(entries(dir.path()).empty());
}

}  // TEST_SUITE("rendezvous")
