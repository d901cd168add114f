// The rendezvous files a server writes so that tools can find it, and their
// removal (spec 000, 20.2.247.6.1). Plain code: no actors, no threads, no
// global state. Which files a server writes, and where, is the caller's
// business; this module writes one file at a given path and undoes it.
#pragma once

#include <pmix_common.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace pmix::server {

// What a rendezvous file holds.
struct rendezvous_contents {
  std::string uri;                    // e.g. "myserver.0;uds:///tmp/x/server.sock"
  std::string version;                // e.g. "4.2.2"
  pid_t pid = 0;                      // the server process
  std::vector<std::string> alt_uris;  // other addresses a tool may try
  // Read from a file a server of OpenPMIx's wrote (its form below): the
  // tool speaks OpenPMIx's protocol to it (issue 36).
  bool openpmix = false;
};

bool operator==(const rendezvous_contents& a, const rendezvous_contents& b);
bool operator!=(const rendezvous_contents& a, const rendezvous_contents& b);

// File format. The file is text, one item per line, every line (the last one
// included) ended by a single '\n':
//
//   line 1   uri        non-empty
//   line 2   version    may be empty
//   line 3   pid        decimal digits only (no sign, no spaces), value > 0
//                       that fits in pid_t
//   line 4.. alt uris   one per line, each non-empty; zero or more
//
// parse() also reads the form OpenPMIx's servers write (uri, version, pid,
// "<uid>:<gid>", the time, an empty line), as openpmix contents with no
// alternatives; format() never writes it.
//
// Nothing else: no header, no blank line but an empty version, no NUL byte,
// no leading zero in the pid; a '\r' is part of its item. So format() gives
// back exactly the text parse() accepted. For example, uri "a;uds:///s",
// version "4.2.2", pid 42 and one alt uri "tcp4://10.0.0.1:5000" give
//   "a;uds:///s\n4.2.2\n42\ntcp4://10.0.0.1:5000\n"

// The text of `c` in the format above. Contents that cannot be represented
// (empty uri or alt uri, pid <= 0, a '\n' or NUL in an item) give text that
// parse() rejects or reads back differently; rendezvous_set::write() refuses
// such contents.
std::string format(const rendezvous_contents& c);

// The inverse of format(). Returns false, leaving `out` unchanged, for text
// not in the format: fewer than three lines, a missing final '\n', an empty
// uri, a pid that is not a positive decimal number fitting in pid_t (or has
// a leading zero), an empty alt uri line, or a NUL byte.
bool parse(const std::string& text, rendezvous_contents& out);

// Reads and parses the regular file at `path` (symbolic links followed).
// False if it cannot be opened, is not a regular file, is larger than 1 MiB
// or does not parse; `out` is then unchanged.
bool read_file(const std::string& path, rendezvous_contents& out);

// The same for a file a tool may trust (docs/security.md, "Rendezvous
// files"): the file itself, not a symbolic link, owned by root or by this
// process's user, and writable by nobody else. False otherwise, with `why`.
bool read_trusted(const std::string& path, rendezvous_contents& out, std::string& why);

// True if a process with this PID exists: kill(pid, 0) succeeds or fails
// with EPERM (it exists but belongs to another user). False for pid <= 0.
// A zombie (exited, not yet reaped) counts as alive.
bool process_alive(pid_t pid);

// Everything one server wrote and created for tools to find it. remove_all()
// undoes it; it is called at PMIx_server_finalize and after a failed
// PMIx_server_init, and by the destructor. Movable, not copyable.
//
// Files are published atomically: the text is written to a temporary file
// (".pmix-tmp.<pid>.<n>", same directory, same mode) that is then linked or
// renamed to its final name, so a tool never reads a partial file.
//
// Errors: PMIX_ERR_BAD_PARAM for a bad request (path not absolute, a path
// component or the existing entry at `path` of the wrong type, contents that
// cannot be formatted, a missing directory for write_plain), PMIX_ERR_INIT for
// a failing system call (permission denied, no space...). `error` then says
// what failed and why (strerror), for the caller to log; this module logs only
// non-fatal oddities found by remove_all(). A failed call leaves nothing
// behind: no temporary file and none of the directories it created.
class rendezvous_set {
 public:
  rendezvous_set() = default;
  ~rendezvous_set();
  rendezvous_set(rendezvous_set&& other) noexcept;
  rendezvous_set& operator=(rendezvous_set&& other) noexcept;
  rendezvous_set(const rendezvous_set&) = delete;
  rendezvous_set& operator=(const rendezvous_set&) = delete;

  // Writes a rendezvous file at the absolute `path` [20.2.247.6.1]:
  // - Missing directories on the path are created with mode 0700, or 0755 if
  //   `world_readable`, subject to the umask, and recorded for removal. An
  //   existing directory is used as found: its mode is never changed.
  // - The file is created with mode 0600, or 0644 if `world_readable`,
  //   subject to the umask.
  // - A regular file already at `path` whose recorded PID is alive belongs to
  //   another server (or to this one): PMIX_ERR_EXISTS, and nothing is
  //   written or created. One whose PID is dead, or that does not parse, is
  //   stale and is replaced (atomically) by ours. The check is made on the
  //   final name; two servers replacing the same stale file at the same
  //   instant are not told apart.
  // - Anything at `path` owned by another user (a symbolic link included):
  //   PMIX_ERR_NO_PERMISSIONS, and nothing is written, created, replaced or
  //   removed (the takeover rule applies to our own files only).
  // - A directory or another non-regular file at `path`: PMIX_ERR_BAD_PARAM.
  // Returns PMIX_SUCCESS and records the file for remove_all().
  pmix_status_t write(const std::string& path, const rendezvous_contents& c, bool world_readable,
                      std::string& error);

  // A plain file holding `text` (the file form of PMIX_TCP_REPORT_URI; not a
  // rendezvous file): created with mode 0666 subject to the umask, replacing
  // whatever is at `path` but a directory (PMIX_ERR_BAD_PARAM), and removed
  // by remove_all(); writing the same path again replaces the record. A
  // relative path is made absolute with the current directory at the time of
  // the call. Missing directories are not created: PMIX_ERR_BAD_PARAM.
  pmix_status_t write_plain(const std::string& path, const std::string& text, std::string& error);

  // Removes the files written, newest first, each only if it is still ours
  // (the same device and inode as written: a file someone put in its place is
  // left alone), then rmdir()s the directories this object created, newest
  // first (a directory that is not empty stays). Forgets everything, so a
  // second call does nothing.
  void remove_all();

  // The files written (absolute paths) and the directories created, oldest
  // first, until remove_all().
  const std::vector<std::string>& files() const { return files_; }
  const std::vector<std::string>& created_dirs() const { return created_dirs_; }

 private:
  struct file_identity {
    dev_t device;
    ino_t inode;
  };

  void record_file(const std::string& path, const file_identity& id);

  std::vector<std::string> files_;
  std::vector<file_identity> identities_;  // parallel to files_
  std::vector<std::string> created_dirs_;
  unsigned temp_counter_ = 0;
};

}  // namespace pmix::server
