#include "actors/epilog.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <memory>

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

// Removes one cleanup item through directory descriptors (issue 14.2): each
// directory is opened with O_NOFOLLOW relative to the descriptor of its
// parent, from "/" down, and every entry is examined and removed relative to
// the descriptor of the directory that holds it (fstatat, unlinkat). Nothing
// is ever looked up by a path again after it was checked, so swapping a path
// component for a symbolic link while the epilog runs cannot lead it out of
// the registered tree (the class of CVE-2023-41915).
struct remover {
  const cleanup_item& item;
  std::size_t removed = 0;

  bool allowed(const struct stat& st, const std::string& path) const {
    if (item.owner == 0 || st.st_uid == item.owner) return true;
    log::warning("epilog", "not removing ", path, ": it belongs to uid ", st.st_uid,
                 ", the cleanup was registered by uid ", item.owner);
    return false;
  }
  bool ignored(const std::string& name) const {
    return item.ignore && std::find(item.ignore->begin(), item.ignore->end(), name) != item.ignore->end();
  }
  void remove_entry(int dirfd, const std::string& name, bool is_dir, const std::string& shown) {
    if (::unlinkat(dirfd, name.c_str(), is_dir ? AT_REMOVEDIR : 0) == 0) {
      ++removed;
    } else if (!(is_dir && (errno == ENOTEMPTY || errno == EEXIST))) {
      log::warning("epilog", "cannot remove ", shown, ": ", std::strerror(errno));
    }
  }
  // Opens directory `name` of `dirfd`, refusing a symbolic link, and checks
  // it is still the entry `expected` described (same device and inode).
  static int open_dir(int dirfd, const std::string& name, const struct stat* expected) {
    const int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || expected == nullptr) return fd;
    struct stat now;
    if (::fstat(fd, &now) != 0 || now.st_dev != expected->st_dev || now.st_ino != expected->st_ino) {
      ::close(fd);
      errno = ESTALE;
      return -1;
    }
    return fd;
  }
  // Cleans the contents of the directory open as `fd` (closed here).
  void clean_dir(int fd, const std::string& shown) {
    DIR* d = ::fdopendir(fd);
    if (d == nullptr) {
      ::close(fd);
      return;
    }
    std::vector<std::string> names;
    while (auto* e = ::readdir(d))
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
    const int dirfd = ::dirfd(d);
    for (const auto& name : names) {
      const auto path = shown + "/" + name;
      struct stat st;
      if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || ignored(name) || !allowed(st, path))
        continue;
      if (S_ISDIR(st.st_mode)) {
        if (!item.recursive) continue;
        const int sub = open_dir(dirfd, name, &st);
        if (sub < 0) {
          log::warning("epilog", "not descending into ", path, ": ", std::strerror(errno));
          continue;
        }
        clean_dir(sub, path);
        remove_entry(dirfd, name, true, path);  // only if it ended up empty
      } else if (!item.empty_only) {
        remove_entry(dirfd, name, false, path);  // files and symbolic links themselves
      }
    }
    ::closedir(d);
  }
  // The descriptor of the directory holding the registered path, reached
  // component by component from "/" without following any symbolic link.
  int open_parent(std::string& last) const {
    int fd = ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    std::size_t start = 1;
    for (;;) {
      const auto slash = item.path.find('/', start);
      if (slash == std::string::npos) {
        last = item.path.substr(start);
        return fd;
      }
      const auto part = item.path.substr(start, slash - start);
      start = slash + 1;
      if (part.empty() || part == ".") continue;
      if (part == "..") {  // a path leaving its own tree is not followed
        ::close(fd);
        errno = EINVAL;
        return -1;
      }
      const int next = open_dir(fd, part, nullptr);
      ::close(fd);
      if (next < 0) return -1;
      fd = next;
    }
  }
  void run() {
    std::string last;
    const int parent = open_parent(last);
    if (parent < 0) {
      log::warning("epilog", "not removing ", item.path, ": ", std::strerror(errno),
                   " (a component is not a directory, or is a symbolic link)");
      return;
    }
    struct stat st;
    if (last.empty() || last == "." || last == ".." ||
        ::fstatat(parent, last.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || ignored(last) ||
        !allowed(st, item.path)) {
      ::close(parent);
      return;
    }
    if (!item.directory || !S_ISDIR(st.st_mode)) {
      if (!S_ISDIR(st.st_mode)) remove_entry(parent, last, false, item.path);
      ::close(parent);
      return;
    }
    const int fd = open_dir(parent, last, &st);
    if (fd >= 0) clean_dir(fd, item.path);
    if (!item.leave_topdir) remove_entry(parent, last, true, item.path);
    ::close(parent);
  }
};

}  // namespace

bool epilog::is_cleanup(const info_list& directives) {
  return find(directives, PMIX_REGISTER_CLEANUP) != nullptr ||
         find(directives, PMIX_REGISTER_CLEANUP_DIR) != nullptr;
}

std::size_t epilog::weight(const info_list& directives) {
  std::size_t total = 0;
  for (const auto& d : directives) {
    if (d.key != PMIX_REGISTER_CLEANUP && d.key != PMIX_REGISTER_CLEANUP_DIR && d.key != PMIX_CLEANUP_IGNORE) continue;
    const auto* list = d.val.as_string();
    if (list == nullptr) continue;
    // Each name or path: its bytes (the commas stand for them) and 64 for
    // the string and its place.
    total += list->size() + 64 * (1 + static_cast<std::size_t>(std::count(list->begin(), list->end(), ',')));
  }
  return total;
}

pmix_status_t epilog::add(const info_list& directives, uid_t owner, std::string& error) {
  const auto adds = weight(directives);
  if (adds > max_weight || weight_ + adds > max_weight) {
    error = "cleanup registrations would weigh " + std::to_string(weight_ + adds) + " bytes, more than the " +
            std::to_string(max_weight) + " one process or job may register";
    return PMIX_ERR_OUT_OF_RESOURCE;
  }
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
      flags.ignore = std::make_shared<const std::vector<std::string>>(split_list(*names));
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
  items_.insert(items_.end(), std::make_move_iterator(added.begin()), std::make_move_iterator(added.end()));
  weight_ += adds;
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
