#include "server/rendezvous.hpp"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

#include "common/log.hpp"

namespace pmix::server {
namespace {

constexpr off_t max_file_size = 1 << 20;
constexpr int max_temp_name_attempts = 100;
constexpr int max_publish_attempts = 3;

// strerror_r exists in a GNU form (returns the text) and an XSI form (fills
// the buffer); these two overloads accept either.
[[maybe_unused]] std::string strerror_result(const char* text, const char*) { return text; }
[[maybe_unused]] std::string strerror_result(int rc, const char* buffer) {
  return rc == 0 ? std::string(buffer) : std::string("unknown error");
}

std::string error_text(int err) {
  char buffer[256] = {0};
  return strerror_result(strerror_r(err, buffer, sizeof buffer), buffer) + " (errno " +
         std::to_string(err) + ")";
}

// A caller's mistake, or a failing system.
pmix_status_t status_for(int err) {
  switch (err) {
    case ENOTDIR:
    case EISDIR:
    case ENAMETOOLONG:
    case ELOOP:
      return PMIX_ERR_BAD_PARAM;
    default:
      return PMIX_ERR_INIT;
  }
}

class fd_guard {
 public:
  explicit fd_guard(int fd) : fd_(fd) {}
  ~fd_guard() {
    if (fd_ >= 0) ::close(fd_);
  }
  fd_guard(const fd_guard&) = delete;
  fd_guard& operator=(const fd_guard&) = delete;
  // Closes now; returns 0 or the errno of close().
  int close() {
    int rc = ::close(fd_);
    fd_ = -1;
    return rc == 0 ? 0 : errno;
  }

 private:
  int fd_;
};

// 0, or the errno of the failing write().
int write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    done += static_cast<size_t>(n);
  }
  return 0;
}

// 0, or an errno: that of a failing call, EINVAL for a file that is not
// regular, EFBIG for one larger than max_file_size.
int read_text(const std::string& path, std::string& text) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return errno;
  fd_guard guard(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) return errno;
  if (!S_ISREG(st.st_mode)) return EINVAL;
  if (st.st_size > max_file_size) return EFBIG;
  std::string result;
  char buffer[4096];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) break;
    result.append(buffer, static_cast<size_t>(n));
    if (result.size() > static_cast<size_t>(max_file_size)) return EFBIG;
  }
  text = std::move(result);
  return 0;
}

// A positive decimal number without sign, spaces or leading zeros that fits
// in pid_t.
bool parse_pid(const std::string& s, pid_t& out) {
  if (s.empty() || s[0] == '0') return false;
  long long value = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return false;
    value = value * 10 + (ch - '0');
    if (value > std::numeric_limits<pid_t>::max()) return false;
  }
  out = static_cast<pid_t>(value);
  return true;
}

// The directory part of an absolute path ("/" for "/name").
std::string parent_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == 0 ? std::string("/") : path.substr(0, slash);
}

// True if the last component of `path` can name a file.
bool names_a_file(const std::string& path) {
  std::string name = path.substr(path.rfind('/') + 1);
  return !name.empty() && name != "." && name != "..";
}

std::string join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

enum class existing { none, stale, live };

// What is at the final name of a rendezvous file. PMIX_ERR_EXISTS if it is
// a rendezvous file whose process is alive; PMIX_ERR_NO_PERMISSIONS if the
// entry belongs to another user (never read, replaced or removed: in a
// world-writable directory anyone can plant a file under a server's name);
// other errors if it cannot be told or is not a regular file.
pmix_status_t examine(const std::string& path, existing& found, std::string& error) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR) {  // ENOTDIR: reported precisely later
      found = existing::none;
      return PMIX_SUCCESS;
    }
    error = "cannot examine " + path + ": " + error_text(err);
    return status_for(err);
  }
  if (st.st_uid != ::geteuid()) {
    error = path + " belongs to uid " + std::to_string(st.st_uid) +
            ", another user: left as it is, and not written (tools will not trust it)";
    return PMIX_ERR_NO_PERMISSIONS;
  }
  if (S_ISLNK(st.st_mode) && ::stat(path.c_str(), &st) != 0) {
    int err = errno;
    if (err == ENOENT) {  // a dangling symbolic link
      found = existing::stale;
      return PMIX_SUCCESS;
    }
    error = "cannot examine " + path + ": " + error_text(err);
    return status_for(err);
  }
  if (S_ISDIR(st.st_mode)) {
    error = "rendezvous file path " + path + " is a directory";
    return PMIX_ERR_BAD_PARAM;
  }
  if (!S_ISREG(st.st_mode)) {
    error = "rendezvous file path " + path + " exists and is not a regular file";
    return PMIX_ERR_BAD_PARAM;
  }
  std::string text;
  int err = read_text(path, text);
  if (err == ENOENT) {  // removed since lstat()
    found = existing::none;
    return PMIX_SUCCESS;
  }
  if (err != 0 && err != EFBIG && err != EINVAL) {
    error = "cannot read the existing rendezvous file " + path +
            " to tell whether its server still runs: " + error_text(err);
    return status_for(err);
  }
  rendezvous_contents old;
  if (err == 0 && parse(text, old) && process_alive(old.pid)) {
    found = existing::live;
    error = "rendezvous file " + path + " belongs to running process " +
            std::to_string(old.pid) + " (another server)";
    return PMIX_ERR_EXISTS;
  }
  found = existing::stale;
  return PMIX_SUCCESS;
}

// Creates the missing directories on the way to the file `path`, oldest
// first, appending each to `created`.
pmix_status_t create_parents(const std::string& path, mode_t mode,
                             std::vector<std::string>& created, std::string& error) {
  for (size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    if (path[slash - 1] == '/') continue;  // an empty component ("a//b")
    const std::string dir = path.substr(0, slash);
    struct stat st;
    if (::stat(dir.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) continue;
      error = "cannot use " + dir + " as a directory: it is not one";
      return PMIX_ERR_BAD_PARAM;
    }
    int err = errno;
    if (err != ENOENT) {
      error = "cannot examine directory " + dir + ": " + error_text(err);
      return status_for(err);
    }
    if (::mkdir(dir.c_str(), mode) == 0) {
      created.push_back(dir);
      continue;
    }
    err = errno;
    if (err == EEXIST) {
      if (::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) continue;  // created meanwhile
      error = "cannot create directory " + dir + ": something that is not a directory is there";
      return PMIX_ERR_BAD_PARAM;
    }
    error = "cannot create directory " + dir + ": " + error_text(err);
    return status_for(err);
  }
  return PMIX_SUCCESS;
}

// Undoes what one write call did unless committed: removes its temporary
// file (always, if still there under that name) and the directories it
// created (the tail of `dirs` from the size at construction).
class call_undo {
 public:
  explicit call_undo(std::vector<std::string>& dirs) : dirs_(dirs), first_new_(dirs.size()) {}
  ~call_undo() {
    if (!temp_.empty()) ::unlink(temp_.c_str());
    if (committed_) return;
    while (dirs_.size() > first_new_) {
      ::rmdir(dirs_.back().c_str());
      dirs_.pop_back();
    }
  }
  call_undo(const call_undo&) = delete;
  call_undo& operator=(const call_undo&) = delete;

  void set_temp(const std::string& path) { temp_ = path; }
  const std::string& temp() const { return temp_; }
  void temp_renamed() { temp_.clear(); }
  void commit() { committed_ = true; }

 private:
  std::vector<std::string>& dirs_;
  size_t first_new_;
  std::string temp_;
  bool committed_ = false;
};

// Creates a new temporary file in `dir` with `mode` (subject to the umask),
// holding `text`; `id` receives its stat.
pmix_status_t write_temp(const std::string& dir, const std::string& text, mode_t mode,
                         unsigned& counter, call_undo& undo, struct stat& id, std::string& error) {
  std::string temp;
  int fd = -1;
  int err = 0;
  for (int attempt = 0; attempt < max_temp_name_attempts; ++attempt) {
    temp = join(dir, ".pmix-tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++));
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd >= 0) break;
    err = errno;
    if (err != EEXIST) break;
  }
  if (fd < 0) {
    error = "cannot create temporary file " + temp + ": " + error_text(err);
    return status_for(err);
  }
  undo.set_temp(temp);
  fd_guard guard(fd);
  err = write_all(fd, text);
  if (err == 0 && ::fstat(fd, &id) != 0) err = errno;
  if (err == 0) err = guard.close();
  if (err != 0) {
    error = "cannot write temporary file " + temp + ": " + error_text(err);
    return status_for(err);
  }
  return PMIX_SUCCESS;
}

}  // namespace

bool operator==(const rendezvous_contents& a, const rendezvous_contents& b) {
  return a.uri == b.uri && a.version == b.version && a.pid == b.pid && a.alt_uris == b.alt_uris &&
         a.openpmix == b.openpmix;
}

bool operator!=(const rendezvous_contents& a, const rendezvous_contents& b) { return !(a == b); }

std::string format(const rendezvous_contents& c) {
  std::string text = c.uri + '\n' + c.version + '\n' + std::to_string(c.pid) + '\n';
  for (const auto& alt : c.alt_uris) text += alt + '\n';
  return text;
}

bool parse(const std::string& text, rendezvous_contents& out) {
  if (text.empty() || text.back() != '\n' || text.find('\0') != std::string::npos) return false;
  std::vector<std::string> lines;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  rendezvous_contents result;
  if (lines.size() < 3 || lines[0].empty() || !parse_pid(lines[2], result.pid)) return false;
  // OpenPMIx's form: the URI, version and pid, then "<uid>:<gid>", the
  // time it was written and an empty line.
  if (lines.size() == 6 && lines[5].empty() && !lines[4].empty() &&
      lines[3].find_first_not_of("0123456789:") == std::string::npos &&
      std::count(lines[3].begin(), lines[3].end(), ':') == 1 && lines[3].front() != ':' &&
      lines[3].back() != ':') {
    result.uri = std::move(lines[0]);
    result.version = std::move(lines[1]);
    result.openpmix = true;
    out = std::move(result);
    return true;
  }
  for (size_t i = 3; i < lines.size(); ++i) {
    if (lines[i].empty()) return false;
  }
  result.uri = std::move(lines[0]);
  result.version = std::move(lines[1]);
  result.alt_uris.assign(std::make_move_iterator(lines.begin() + 3),
                         std::make_move_iterator(lines.end()));
  out = std::move(result);
  return true;
}

bool read_file(const std::string& path, rendezvous_contents& out) {
  std::string text;
  return read_text(path, text) == 0 && parse(text, out);
}

bool read_trusted(const std::string& path, rendezvous_contents& out, std::string& why) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) {
    const int err = errno;
    why = err == ELOOP ? "a symbolic link" : error_text(err);
    return false;
  }
  fd_guard guard(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    why = error_text(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    why = "not a regular file";
    return false;
  }
  if (st.st_uid != 0 && st.st_uid != ::geteuid()) {
    why = "owned by uid " + std::to_string(st.st_uid) + ", neither root nor this user";
    return false;
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    why = "writable by others than its owner";
    return false;
  }
  if (st.st_size > max_file_size) {
    why = "too large";
    return false;
  }
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      why = error_text(errno);
      return false;
    }
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > static_cast<std::size_t>(max_file_size)) {
      why = "too large";
      return false;
    }
  }
  if (!parse(text, out)) {
    why = "not a rendezvous file";
    return false;
  }
  return true;
}

bool process_alive(pid_t pid) {
  if (pid <= 0) return false;  // kill() would address process groups
  return ::kill(pid, 0) == 0 || errno == EPERM;
}

rendezvous_set::~rendezvous_set() { remove_all(); }

rendezvous_set::rendezvous_set(rendezvous_set&& other) noexcept
    : files_(std::move(other.files_)),
      identities_(std::move(other.identities_)),
      created_dirs_(std::move(other.created_dirs_)),
      temp_counter_(other.temp_counter_) {
  other.files_.clear();
  other.identities_.clear();
  other.created_dirs_.clear();
}

rendezvous_set& rendezvous_set::operator=(rendezvous_set&& other) noexcept {
  if (this != &other) {
    remove_all();
    files_ = std::move(other.files_);
    identities_ = std::move(other.identities_);
    created_dirs_ = std::move(other.created_dirs_);
    temp_counter_ = other.temp_counter_;
    other.files_.clear();
    other.identities_.clear();
    other.created_dirs_.clear();
  }
  return *this;
}

pmix_status_t rendezvous_set::write(const std::string& path, const rendezvous_contents& c,
                                    bool world_readable, std::string& error) {
  error.clear();
  if (path.empty() || path.front() != '/') {
    error = "rendezvous file path \"" + path + "\" is not absolute";
    return PMIX_ERR_BAD_PARAM;
  }
  if (!names_a_file(path)) {
    error = "rendezvous file path " + path + " does not end in a file name";
    return PMIX_ERR_BAD_PARAM;
  }
  const std::string text = format(c);
  rendezvous_contents readback;
  if (!parse(text, readback) || readback != c) {
    error = "cannot write rendezvous file " + path +
            ": empty uri or alt uri, pid <= 0, or a newline or NUL in an item";
    return PMIX_ERR_BAD_PARAM;
  }

  // A live owner is refused before anything is created.
  existing found = existing::none;
  pmix_status_t status = examine(path, found, error);
  if (status != PMIX_SUCCESS) return status;

  call_undo undo(created_dirs_);
  status = create_parents(path, world_readable ? 0755 : 0700, created_dirs_, error);
  if (status != PMIX_SUCCESS) return status;
  struct stat id;
  status = write_temp(parent_of(path), text, world_readable ? 0644 : 0600, temp_counter_, undo, id,
                      error);
  if (status != PMIX_SUCCESS) return status;

  // No file at the final name: link(), which fails if another server created
  // one meanwhile (then look again). A stale file, or a file system without
  // hard links: rename() over it.
  for (int attempt = 1;; ++attempt) {
    if (found == existing::none) {
      if (::link(undo.temp().c_str(), path.c_str()) == 0) break;  // undo unlinks the temporary
      if (errno == EEXIST) {
        if (attempt == max_publish_attempts) {
          error = "cannot write rendezvous file " + path + ": other processes keep creating it";
          return PMIX_ERR_INIT;
        }
        status = examine(path, found, error);
        if (status != PMIX_SUCCESS) return status;
        continue;
      }
    }
    if (::rename(undo.temp().c_str(), path.c_str()) == 0) {
      undo.temp_renamed();
      break;
    }
    int err = errno;
    error = "cannot write rendezvous file " + path + ": " + error_text(err);
    return status_for(err);
  }
  undo.commit();
  record_file(path, {id.st_dev, id.st_ino});
  return PMIX_SUCCESS;
}

pmix_status_t rendezvous_set::write_plain(const std::string& path, const std::string& text,
                                          std::string& error) {
  error.clear();
  if (path.empty()) {
    error = "empty file path";
    return PMIX_ERR_BAD_PARAM;
  }
  std::string full = path;
  if (path.front() != '/') {
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof cwd) == nullptr) {
      int err = errno;
      error = "cannot resolve relative path " + path + ": " + error_text(err);
      return PMIX_ERR_INIT;
    }
    full = join(cwd, path);
  }
  if (!names_a_file(full)) {
    error = "path " + full + " does not end in a file name";
    return PMIX_ERR_BAD_PARAM;
  }
  const std::string dir = parent_of(full);
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    int err = errno;
    error = "cannot write " + full + ": directory " + dir + ": " + error_text(err);
    return err == ENOENT ? PMIX_ERR_BAD_PARAM : status_for(err);
  }
  if (!S_ISDIR(st.st_mode)) {
    error = "cannot write " + full + ": " + dir + " is not a directory";
    return PMIX_ERR_BAD_PARAM;
  }
  if (::lstat(full.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    error = "cannot write " + full + ": it is a directory";
    return PMIX_ERR_BAD_PARAM;
  }

  call_undo undo(created_dirs_);  // creates no directory; removes the temporary
  struct stat id;
  pmix_status_t status = write_temp(dir, text, 0666, temp_counter_, undo, id, error);
  if (status != PMIX_SUCCESS) return status;
  if (::rename(undo.temp().c_str(), full.c_str()) != 0) {
    int err = errno;
    error = "cannot write " + full + ": " + error_text(err);
    return status_for(err);
  }
  undo.temp_renamed();
  undo.commit();
  record_file(full, {id.st_dev, id.st_ino});
  return PMIX_SUCCESS;
}

void rendezvous_set::record_file(const std::string& path, const file_identity& id) {
  for (size_t i = 0; i < files_.size(); ++i) {
    if (files_[i] == path) {  // written again (write_plain replaces)
      identities_[i] = id;
      return;
    }
  }
  files_.push_back(path);
  identities_.push_back(id);
}

void rendezvous_set::remove_all() {
  for (size_t i = files_.size(); i-- > 0;) {
    const std::string& path = files_[i];
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) {
      int err = errno;
      if (err != ENOENT) log::warning("rendezvous", "cannot examine ", path, ": ", error_text(err));
      continue;
    }
    if (st.st_dev != identities_[i].device || st.st_ino != identities_[i].inode) {
      log::warning("rendezvous", "not removing ", path, ": another file replaced ours");
      continue;
    }
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      int err = errno;
      log::warning("rendezvous", "cannot remove ", path, ": ", error_text(err));
    }
  }
  for (size_t i = created_dirs_.size(); i-- > 0;) {
    const std::string& dir = created_dirs_[i];
    if (::rmdir(dir.c_str()) != 0) {
      int err = errno;
      if (err != ENOENT && err != ENOTEMPTY && err != EEXIST) {
        log::warning("rendezvous", "cannot remove directory ", dir, ": ", error_text(err));
      }
    }
  }
  files_.clear();
  identities_.clear();
  created_dirs_.clear();
}

}  // namespace pmix::server
