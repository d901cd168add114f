// Epilogs (spec 004): cleanup a process or job registered with
// PMIx_Job_control (PMIX_REGISTER_CLEANUP, PMIX_REGISTER_CLEANUP_DIR), run
// when the peer ends (finalize, death, deregistration) or when the namespace
// is deregistered. Plain code, no actors (tests/actors/epilog_test).
//
// Safety: the server may run as root for clients of any user, so an epilog
// removes only what belongs to the user who registered it (root's epilogs:
// anything), never follows a symbolic link, and takes absolute paths only.
#pragma once

#include <pmix_common.h>
#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "common/value.hpp"

namespace pmix::actors {

struct cleanup_item {
  std::string path;
  uid_t owner = 0;            // who registered it: only their entries go
  bool directory = false;
  bool recursive = false;     // PMIX_CLEANUP_RECURSIVE: subdirectories too
  bool empty_only = false;    // PMIX_CLEANUP_EMPTY: only empty directories
  bool leave_topdir = false;  // PMIX_CLEANUP_LEAVE_TOPDIR
  // PMIX_CLEANUP_IGNORE: names left alone; one list for every path of a
  // registration (copied into each, a list of N names for N paths was N x N).
  std::shared_ptr<const std::vector<std::string>> ignore;
};

class epilog {
 public:
  // True when `directives` hold any cleanup directive.
  static bool is_cleanup(const info_list& directives);
  // Adds the cleanup items `directives` describe, registered by `owner`.
  // PMIX_ERR_BAD_PARAM (and `error`) for a relative path or a value of the
  // wrong type; nothing is added then.
  pmix_status_t add(const info_list& directives, uid_t owner, std::string& error);

  // What one process's or one job's cleanup registrations may weigh
  // together: the paths' and ignored names' bytes, and 64 for each entry.
  // An add that would pass it is refused (PMIX_ERR_OUT_OF_RESOURCE), and
  // nothing of it is added: a client cannot make the server hold more.
  static constexpr std::size_t max_weight = 4u << 20;
  // What `directives` weigh by that measure (0: no cleanup directive).
  static std::size_t weight(const info_list& directives);

  // Removes what was registered (once; later calls do nothing). Returns the
  // number of filesystem entries removed; failures are logged.
  std::size_t run();

  bool empty() const { return items_.empty(); }
  const std::vector<cleanup_item>& items() const { return items_; }

 private:
  std::vector<cleanup_item> items_;
  std::size_t weight_ = 0;
  bool done_ = false;
};

}  // namespace pmix::actors
