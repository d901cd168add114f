#include "iof.hpp"

#include <fcntl.h>
#include <pmix_server.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>

#include "host_thread.hpp"

namespace pmixrun {

struct output_forwarder::source {
  pmix_proc_t proc;
  int open = 0;  // streams not ended yet
};

struct output_forwarder::stream {
  int fd = -1;  // -1 once ended
  source* src = nullptr;
  pmix_iof_channel_t channel = PMIX_FWD_STDOUT_CHANNEL;
  int dest = 0;         // index into dest_
  std::string prefix;   // the tag
  std::string partial;  // bytes after the last newline, waiting for theirs
};

// One PMIx_server_IOF_deliver: it owns the bytes until the library calls back.
struct output_forwarder::delivery {
  output_forwarder* owner;
  std::string bytes;
  pmix_byte_object_t bo;
};

namespace {

// Every line of `unit` prefixed, the last one ended with a newline if it has none.
std::string tagged(const std::string& prefix, const std::string& unit) {
  const auto lines = static_cast<std::size_t>(std::count(unit.begin(), unit.end(), '\n')) + 1;
  std::string out;
  out.reserve(unit.size() + lines * prefix.size() + 1);
  std::size_t pos = 0;
  while (pos < unit.size()) {
    const void* nl = std::memchr(unit.data() + pos, '\n', unit.size() - pos);
    const std::size_t end =
        nl != nullptr ? static_cast<std::size_t>(static_cast<const char*>(nl) - unit.data()) + 1
                      : unit.size();
    out += prefix;
    out.append(unit, pos, end - pos);
    if (nl == nullptr) out += '\n';
    pos = end;
  }
  return out;
}

}  // namespace

output_forwarder::output_forwarder(settings s) : settings_(std::move(s)) {
  dest_[0].fd = settings_.out_fd;
  dest_[1].fd = settings_.err_fd;
  for (auto& d : dest_) {
    struct stat st;
    // Plain files and devices other than terminals (/dev/null) take any
    // write at once; pipes, sockets and terminals are written when poll
    // says they have room.
    d.regular = ::fstat(d.fd, &st) == 0 &&
                (S_ISREG(st.st_mode) || (S_ISCHR(st.st_mode) && ::isatty(d.fd) == 0));
  }
  buffer_.resize(64 * 1024);
}

output_forwarder::~output_forwarder() {
  for (auto& s : streams_)
    if (s->fd >= 0) ::close(s->fd);
}

void output_forwarder::add(const pmix_proc_t& proc, uint32_t job_index, int out_fd, int err_fd) {
  auto src = std::make_unique<source>();
  src->proc = proc;
  const std::string who = "[" + std::to_string(job_index) + "," + std::to_string(proc.rank) + "]";
  const int fds[2] = {out_fd, err_fd};
  for (int k = 0; k < 2; ++k) {
    if (fds[k] < 0) continue;
    ::fcntl(fds[k], F_SETFL, ::fcntl(fds[k], F_GETFL) | O_NONBLOCK);
    auto s = std::make_unique<stream>();
    s->fd = fds[k];
    s->src = src.get();
    s->channel = k == 0 ? PMIX_FWD_STDOUT_CHANNEL : PMIX_FWD_STDERR_CHANNEL;
    s->dest = k;
    s->prefix = who + (k == 0 ? "<stdout>:" : "<stderr>:");
    ++src->open;
    streams_.push_back(std::move(s));
  }
  if (src->open == 0) {
    if (settings_.closed) settings_.closed(proc);
    return;
  }
  sources_.push_back(std::move(src));
}

bool output_forwarder::paused(const stream& s) const {
  if (in_flight_bytes_ >= settings_.backlog_max) return true;
  return settings_.write && dest_[s.dest].queued >= settings_.backlog_max;
}

void output_forwarder::poll_set(std::vector<pollfd>& fds) {
  polled_.clear();
  for (auto& s : streams_) {
    if (s->fd < 0) continue;
    // A paused stream is left out (fd -1): poll would report its hang-up
    // even without POLLIN asked for.
    fds.push_back(pollfd{paused(*s) ? -1 : s->fd, POLLIN, 0});
    polled_.push_back(s.get());
  }
  for (auto& d : dest_) {
    if (d.queue.empty() || d.broken) continue;
    fds.push_back(pollfd{d.fd, POLLOUT, 0});
    polled_.push_back(nullptr);
  }
}

void output_forwarder::handle(const pollfd* fds, std::size_t n) {
  const std::size_t count = std::min(n, polled_.size());
  for (std::size_t k = 0; k < count; ++k) {
    if (fds[k].revents == 0) continue;
    if (stream* s = polled_[k]) {
      if (s->fd >= 0) read_stream(*s, false);
    } else {
      for (auto& d : dest_)
        if (d.fd == fds[k].fd && !d.queue.empty() && !d.broken) pump(d, false);
    }
  }
  remove_ended();
}

// One read (with `drain`: until the pipe is empty, 1 MiB at most, for a
// writer that does not stop), passed on in whole lines.
void output_forwarder::read_stream(stream& s, bool drain) {
  for (int reads = drain ? 16 : 1; reads > 0 && s.fd >= 0; --reads) {
    const ssize_t n = ::read(s.fd, buffer_.data(), buffer_.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {  // end of file (or an error, taken as one)
      end(s);
      return;
    }
    bytes_read_ += static_cast<std::size_t>(n);
    const char* data = buffer_.data();
    const auto size = static_cast<std::size_t>(n);
    std::string unit;
    if (const void* nl = ::memrchr(data, '\n', size)) {
      const std::size_t upto = static_cast<std::size_t>(static_cast<const char*>(nl) - data) + 1;
      unit.swap(s.partial);
      unit.append(data, upto);
      s.partial.assign(data + upto, size - upto);
    } else {
      s.partial.append(data, size);
    }
    if (s.partial.size() >= settings_.line_max) {
      unit += s.partial;
      s.partial.clear();
    }
    if (!unit.empty()) pass_on(s, std::move(unit));
  }
}

void output_forwarder::pass_on(stream& s, std::string unit) {
  if (settings_.deliver) deliver(s, unit);
  if (settings_.sink) return settings_.sink(s.src->proc, s.dest, unit);
  if (!settings_.write) return;
  destination& d = dest_[s.dest];
  if (d.broken) return;
  std::string out = settings_.tag ? tagged(s.prefix, unit) : std::move(unit);
  d.queued += out.size();
  d.queue.push_back(std::move(out));
  pump(d, false);
}

// The stream ended: what is left of its last line goes out, then it closes.
void output_forwarder::end(stream& s) {
  if (s.fd < 0) return;
  std::string rest;
  rest.swap(s.partial);
  if (!rest.empty()) pass_on(s, std::move(rest));
  if (s.fd < 0) return;  // closed meanwhile: its destination broke
  ::close(s.fd);
  s.fd = -1;
  removal_due_ = true;
  if (--s.src->open == 0 && settings_.closed) settings_.closed(s.src->proc);
}

void output_forwarder::remove_ended() {
  if (!removal_due_) return;
  removal_due_ = false;
  polled_.clear();
  streams_.erase(std::remove_if(streams_.begin(), streams_.end(),
                                [](const std::unique_ptr<stream>& s) { return s->fd < 0; }),
                 streams_.end());
  sources_.erase(std::remove_if(sources_.begin(), sources_.end(),
                                [](const std::unique_ptr<source>& s) { return s->open == 0; }),
                 sources_.end());
}

void output_forwarder::close_all() {
  for (auto& s : streams_) {
    read_stream(*s, true);
    end(*s);
  }
  remove_ended();
}

void output_forwarder::flush() {
  for (auto& d : dest_) pump(d, true);
}

void output_forwarder::deliver(const stream& s, const std::string& unit) {
  auto* d = new delivery{this, unit, {}};
  d->bo.bytes = d->bytes.data();
  d->bo.size = d->bytes.size();
  const pmix_status_t rc =
      PMIx_server_IOF_deliver(&s.src->proc, s.channel, &d->bo, nullptr, 0, delivered, d);
  if (rc != PMIX_SUCCESS) {  // no callback will come
    delete d;
    return;
  }
  ++in_flight_;
  in_flight_bytes_ += unit.size();
  ++deliveries_;
  bytes_delivered_ += unit.size();
}

// On a library thread: frees the bytes, and tells the host thread.
void output_forwarder::delivered(pmix_status_t, void* cbdata) {
  auto* d = static_cast<delivery*>(cbdata);
  output_forwarder* self = d->owner;
  const std::size_t size = d->bytes.size();
  delete d;
  post([self, size] {
    --self->in_flight_;
    self->in_flight_bytes_ -= size;
  });
}

// Writes what is queued for d: only as much as it takes without waiting,
// unless `block`.
void output_forwarder::pump(destination& d, bool block) {
  while (!d.queue.empty() && !d.broken) {
    const std::string& front = d.queue.front();
    const char* p = front.data() + d.offset;
    std::size_t chunk = front.size() - d.offset;
    if (!d.regular && !block) {
      pollfd pfd{d.fd, POLLOUT, 0};
      if (::poll(&pfd, 1, 0) <= 0) return;
      // Room for PIPE_BUF bytes at least: a pipe with room has a free page.
      // Cut after a line where possible, so that what another destination
      // writes to the same pipe lands between lines.
      if (chunk > PIPE_BUF) {
        const void* nl = ::memrchr(p, '\n', PIPE_BUF);
        chunk = nl != nullptr ? static_cast<std::size_t>(static_cast<const char*>(nl) - p) + 1
                              : PIPE_BUF;
      }
    }
    const ssize_t n = ::write(d.fd, p, chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {  // a non-blocking descriptor
        if (!block) return;
        pollfd pfd{d.fd, POLLOUT, 0};
        ::poll(&pfd, 1, -1);
        continue;
      }
      broke(d);
      return;
    }
    d.offset += static_cast<std::size_t>(n);
    d.queued -= static_cast<std::size_t>(n);
    bytes_written_ += static_cast<std::size_t>(n);
    if (d.offset == front.size()) {
      d.queue.pop_front();
      d.offset = 0;
    }
  }
}

// Nobody reads d any more (EPIPE): drop its output and close the pipes that
// feed it, so that their writers learn it as they would have writing to d.
void output_forwarder::broke(destination& d) {
  d.broken = true;
  d.queue.clear();
  d.queued = 0;
  d.offset = 0;
  for (auto& s : streams_) {
    if (s->fd < 0 || &dest_[s->dest] != &d) continue;
    s->partial.clear();
    ::close(s->fd);
    s->fd = -1;
    removal_due_ = true;
    if (--s->src->open == 0 && settings_.closed) settings_.closed(s->src->proc);
  }
}

}  // namespace pmixrun
