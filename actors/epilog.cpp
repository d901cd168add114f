#include "actors/epilog.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log.hpp"

namespace pmix::actors {
namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const auto end = comma == std::string::npos ? text.size() : comma;
    if (end > start) out.push_back(text.substr(start, end - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

struct remover {
  const cleanup_item& item;
  std::size_t removed = 0;

  bool allowed(const struct stat& st, const std::string& path) const {
    if (item.owner == 0 || st.st_uid == item.owner) return true;
    log::warning("epilog", "not removing ", path, ": it belongs to uid ", st.st_uid,
                 ", the cleanup was registered by uid ", item.owner);
    return false;
  }
  bool ignored(const std::string& path) const {
    const auto name = base_name(path);
    return std::find(item.ignore.begin(), item.ignore.end(), name) != item.ignore.end();
  }
  void remove_entry(const std::string& path, bool is_dir) {
    const int rc = is_dir ? ::rmdir(path.c_str()) : ::unlink(path.c_str());
    if (rc == 0) {
      ++removed;
    } else if (!(is_dir && (errno == ENOTEMPTY || errno == EEXIST))) {
      log::warning("epilog", "cannot remove ", path, ": ", std::strerror(errno));
    }
  }
  // Cleans the contents of directory `dir`; `depth` 0 is the registered one.
  void clean_dir(const std::string& dir, int depth) {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return;
    std::vector<std::string> names;
    while (auto* e = ::readdir(d))
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
        names.emplace_back(e->d_name);
    ::closedir(d);
    for (const auto& name : names) {
      const auto path = dir + "/" + name;
      struct stat st;
      if (::lstat(path.c_str(), &st) != 0 || ignored(path) || !allowed(st, path)) continue;
      if (S_ISDIR(st.st_mode)) {
        if (!item.recursive) continue;
        clean_dir(path, depth + 1);
        remove_entry(path, true);  // only if it ended up empty
      } else if (!item.empty_only) {
        remove_entry(path, false);  // files and symbolic links themselves
      }
    }
  }
  void run() {
    struct stat st;
    if (::lstat(item.path.c_str(), &st) != 0 || ignored(item.path) || !allowed(st, item.path)) return;
    if (!item.directory || !S_ISDIR(st.st_mode)) {
      if (!S_ISDIR(st.st_mode)) remove_entry(item.path, false);
      return;
    }
    clean_dir(item.path, 0);
    if (!item.leave_topdir) remove_entry(item.path, true);
  }
};

}  // namespace

bool epilog::is_cleanup(const info_list& directives) {
  return find(directives, PMIX_REGISTER_CLEANUP) != nullptr ||
         find(directives, PMIX_REGISTER_CLEANUP_DIR) != nullptr;
}

pmix_status_t epilog::add(const info_list& directives, uid_t owner, std::string& error) {
  cleanup_item flags;
  flags.owner = owner;
  for (const auto& d : directives) {
    if (d.key == PMIX_CLEANUP_RECURSIVE) flags.recursive = d.val.truthy();
    else if (d.key == PMIX_CLEANUP_EMPTY) flags.empty_only = d.val.truthy();
    else if (d.key == PMIX_CLEANUP_LEAVE_TOPDIR) flags.leave_topdir = d.val.truthy();
    else if (d.key == PMIX_CLEANUP_IGNORE) {
      const auto* names = d.val.as_string();
      if (names == nullptr) {
        error = "PMIX_CLEANUP_IGNORE must be a string";
        return PMIX_ERR_BAD_PARAM;
      }
      flags.ignore = split_list(*names);
    }
  }
  std::vector<cleanup_item> added;
  for (const auto& d : directives) {
    const bool file = d.key == PMIX_REGISTER_CLEANUP;
    if (!file && d.key != PMIX_REGISTER_CLEANUP_DIR) continue;
    const auto* list = d.val.as_string();
    if (list == nullptr) {
      error = d.key + " must be a string";
      return PMIX_ERR_BAD_PARAM;
    }
    for (const auto& path : split_list(*list)) {
      if (path.empty() || path[0] != '/') {
        error = "cleanup paths must be absolute: '" + path + "'";
        return PMIX_ERR_BAD_PARAM;
      }
      auto item = flags;
      item.path = path;
      item.directory = !file;
      added.push_back(std::move(item));
    }
  }
  items_.insert(items_.end(), added.begin(), added.end());
  return PMIX_SUCCESS;
}

std::size_t epilog::run() {
  if (done_) return 0;
  done_ = true;
  std::size_t removed = 0;
  for (const auto& item : items_) {
    remover r{item};
    r.run();
    removed += r.removed;
  }
  return removed;
}

}  // namespace pmix::actors
