#include "stdin.hpp"

#include <fcntl.h>
#include <termios.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "info.hpp"

namespace pmixrun {

struct stdin_forwarder::pending {
  std::size_t left = 0;  // targets that have not taken their bytes yet
  bool failed = false;
  done_fn done;
};

namespace {

// pmixrun runs in the background of the terminal its stdin is: reading it
// now would stop pmixrun (SIGTTIN).
bool in_background(int fd) {
  if (::isatty(fd) == 0) return false;
  const pid_t foreground = ::tcgetpgrp(fd);
  return foreground != -1 && foreground != ::getpgrp();
}

}  // namespace

stdin_forwarder::stdin_forwarder(settings s) : settings_(std::move(s)) {
  buffer_.resize(settings_.read_max);
}

stdin_forwarder::~stdin_forwarder() {
  for (auto& t : targets_)
    if (t->fd >= 0) ::close(t->fd);
}

void stdin_forwarder::add(const pmix_proc_t& proc, int fd, bool from_source) {
  if (fd < 0) return;
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  auto t = std::make_unique<target>();
  t->proc = proc;
  t->fd = fd;
  t->from_source = from_source;
  targets_.push_back(std::move(t));
}

stdin_forwarder::target* stdin_forwarder::find(const pmix_proc_t& proc) {
  for (auto& t : targets_)
    if (t->fd >= 0 && same_proc(t->proc, proc)) return t.get();
  return nullptr;
}

const stdin_forwarder::target* stdin_forwarder::find(const pmix_proc_t& proc) const {
  for (const auto& t : targets_)
    if (t->fd >= 0 && same_proc(t->proc, proc)) return t.get();
  return nullptr;
}

bool stdin_forwarder::open(const pmix_proc_t& proc) const {
  const target* t = find(proc);
  return t != nullptr && !t->ending;
}

void stdin_forwarder::finished(chunk& c, pmix_status_t status) {
  if (!c.from) return;
  std::shared_ptr<pending> p = std::move(c.from);
  if (status != PMIX_SUCCESS) p->failed = true;
  if (p->left > 0 && --p->left == 0 && p->done)
    p->done(p->failed ? PMIX_ERR_IOF_FAILURE : PMIX_SUCCESS);
}

void stdin_forwarder::push(const std::vector<pmix_proc_t>& targets, const std::string& bytes,
                           bool end, done_fn done) {
  auto p = std::make_shared<pending>();
  p->left = targets.size();
  p->done = std::move(done);
  if (targets.empty()) {
    if (p->done) p->done(PMIX_SUCCESS);
    return;
  }
  bytes_pushed_ += bytes.size();
  for (const auto& proc : targets) {
    chunk c{bytes, end, p};
    target* t = find(proc);
    if (t == nullptr || t->ending) {
      finished(c, PMIX_ERR_IOF_FAILURE);
      continue;
    }
    t->queued += c.bytes.size();
    t->queue.push_back(std::move(c));
    if (end) t->ending = true;
    pump(*t);
  }
}

void stdin_forwarder::process_ended(const pmix_proc_t& proc) {
  if (target* t = find(proc)) close(*t, PMIX_ERR_IOF_FAILURE);
}

// Writes what waits for t, as far as the pipe takes it without waiting.
void stdin_forwarder::pump(target& t) {
  while (t.fd >= 0 && !t.queue.empty()) {
    chunk& c = t.queue.front();
    while (t.offset < c.bytes.size()) {
      const ssize_t n = ::write(t.fd, c.bytes.data() + t.offset, c.bytes.size() - t.offset);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n <= 0) {  // EPIPE: the process no longer reads its stdin
        close(t, PMIX_ERR_IOF_FAILURE);
        return;
      }
      t.offset += static_cast<std::size_t>(n);
      t.queued -= static_cast<std::size_t>(n);
      bytes_written_ += static_cast<std::size_t>(n);
    }
    chunk written = std::move(c);
    t.queue.pop_front();
    t.offset = 0;
    if (written.end) {
      ::close(t.fd);
      t.fd = -1;
    }
    finished(written, PMIX_SUCCESS);
  }
}

void stdin_forwarder::close(target& t, pmix_status_t status) {
  if (t.fd >= 0) ::close(t.fd);
  t.fd = -1;
  t.ending = true;
  std::deque<chunk> dropped;
  dropped.swap(t.queue);
  t.queued = 0;
  t.offset = 0;
  for (auto& c : dropped) finished(c, status);
}

bool stdin_forwarder::reading_source() const {
  if (!source_open_) return false;
  bool wanted = false;
  for (const auto& t : targets_) {
    if (!t->from_source || t->fd < 0 || t->ending) continue;
    if (t->queued >= settings_.backlog_max) return false;
    wanted = true;
  }
  return wanted && !in_background(settings_.source_fd);
}

// One read of pmixrun's stdin, copied to every process that takes it; at its
// end, their input ends too.
void stdin_forwarder::read_source() {
  const ssize_t n = ::read(settings_.source_fd, buffer_.data(), buffer_.size());
  if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) return;
  const bool ended = n <= 0;
  if (ended) source_open_ = false;
  const std::string bytes = ended ? std::string() : std::string(buffer_.data(), static_cast<std::size_t>(n));
  bytes_read_ += bytes.size();
  for (auto& t : targets_) {
    if (!t->from_source || t->fd < 0 || t->ending) continue;
    t->queued += bytes.size();
    t->queue.push_back(chunk{bytes, ended, nullptr});
    if (ended) t->ending = true;
    pump(*t);
  }
}

void stdin_forwarder::poll_set(std::vector<pollfd>& fds) {
  polled_.clear();
  targets_.erase(std::remove_if(targets_.begin(), targets_.end(),
                                [](const std::unique_ptr<target>& t) { return t->fd < 0; }),
                 targets_.end());
  if (reading_source()) {
    fds.push_back(pollfd{settings_.source_fd, POLLIN, 0});
    polled_.push_back(nullptr);
  }
  for (auto& t : targets_) {
    if (t->queue.empty()) continue;
    fds.push_back(pollfd{t->fd, POLLOUT, 0});
    polled_.push_back(t.get());
  }
}

void stdin_forwarder::handle(const pollfd* fds, std::size_t n) {
  const std::size_t count = std::min(n, polled_.size());
  for (std::size_t k = 0; k < count; ++k) {
    if (fds[k].revents == 0) continue;
    if (target* t = polled_[k]) {
      pump(*t);
    } else if (source_open_) {
      read_source();
    }
  }
}

void stdin_forwarder::close_all(pmix_status_t status) {
  source_open_ = false;
  for (auto& t : targets_) close(*t, status);
}

}  // namespace pmixrun
