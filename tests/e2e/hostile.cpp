#include "tests/e2e/hostile.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "protocol/codec.hpp"
#include "protocol/framing.hpp"
#include "tests/e2e/host.hpp"

namespace pmix::test {

capture_stderr::capture_stderr(const std::string& path) : saved_(::dup(STDERR_FILENO)) {
  const int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ::dup2(file, STDERR_FILENO);
  ::close(file);
}

capture_stderr::~capture_stderr() {
  ::dup2(saved_, STDERR_FILENO);
  ::close(saved_);
}

scoped_env::scoped_env(std::string n, const std::string& v) : name(std::move(n)) {
  ::setenv(name.c_str(), v.c_str(), 1);
}

scoped_env::~scoped_env() { ::unsetenv(name.c_str()); }

int connect_raw(const std::string& uri) {
  if (const auto tcp = uri.find("tcp4://"); tcp != std::string::npos) {
    const auto address = uri.substr(tcp + 7);
    const auto colon = address.rfind(':');
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_port = htons(static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1))));
    ::inet_pton(AF_INET, address.substr(0, colon).c_str(), &in.sin_addr);
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&in), sizeof in) != 0) {
      ::close(fd);
      return -1;
    }
    timeval tv{60, 0};  // a guard against hangs only
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
  }
  const auto at = uri.find("uds://");
  const auto path = at == std::string::npos ? uri : uri.substr(at + 6);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  timeval tv{60, 0};  // a guard against hangs only
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

bool closed_by_server(int fd) {
  char buf[4096];
  for (;;) {
    const auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
    if (n < 0) return false;
  }
}

void send_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const auto n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

std::string connect_frame(const pmix_proc_t& p) {
  pmix::wire::Envelope e;
  e.set_id(1);
  auto* c = e.mutable_connect();
  c->set_protocol_version(1);
  c->mutable_proc()->set_nspace(p.nspace);
  c->mutable_proc()->set_rank(p.rank);
  c->set_pid(::getpid());
  return pmix::protocol::to_frame(e);
}

namespace {

// The next whole envelope from `fd` (a guard of 60 s against hangs).
bool next_envelope(int fd, pmix::protocol::frame_reader& reader, pmix::wire::Envelope& e) {
  std::string payload;
  char buf[65536];
  while (reader.next(payload) != pmix::protocol::frame_reader::status::complete) {
    const auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return false;
    reader.feed(buf, static_cast<std::size_t>(n));
  }
  return e.ParseFromString(payload);
}

}  // namespace

int raw_client(const pmix_proc_t& p) {
  const int fd = connect_raw(server_uri());
  if (fd < 0) return -1;
  send_all(fd, connect_frame(p));
  pmix::protocol::frame_reader reader;
  pmix::wire::Envelope e;
  if (!next_envelope(fd, reader, e) || e.connect_reply().status() != PMIX_SUCCESS) {
    ::close(fd);
    return -1;
  }
  return fd;
}

pmix_status_t raw_finalize(int fd) {
  pmix::wire::Envelope e;
  e.set_id(2);
  e.mutable_finalize();
  send_all(fd, pmix::protocol::to_frame(e));
  pmix::protocol::frame_reader reader;
  pmix::wire::Envelope reply;
  if (!next_envelope(fd, reader, reply)) return PMIX_ERR_UNREACH;
  return reply.status_reply().status();
}

std::string commit_frame(const std::string& key, const std::string& text, bool value_in_two_parts) {
  pmix::wire::Info item;
  item.set_key(key);
  item.mutable_value()->set_type(PMIX_STRING);
  std::string info;
  if (value_in_two_parts) {
    info = item.SerializeAsString();
    pmix::wire::Value payload;
    payload.set_bytes(text);
    pmix::protocol::append_length_delimited(info, 2, payload.SerializeAsString());  // Info.value again
  } else {
    item.mutable_value()->set_bytes(text);
    info = item.SerializeAsString();
  }
  pmix::wire::ScopedInfo scoped;
  scoped.set_scope(PMIX_GLOBAL);
  std::string scoped_bytes = scoped.SerializeAsString();
  pmix::protocol::append_length_delimited(scoped_bytes, 2, info);  // ScopedInfo.info
  std::string commit;
  pmix::protocol::append_length_delimited(commit, 1, scoped_bytes);  // CommitRequest.data
  std::string envelope;
  pmix::protocol::append_length_delimited(envelope, 13, commit);  // Envelope.commit
  std::string frame;
  pmix::protocol::append_frame(frame, envelope);
  return frame;
}

std::string fence_frame(std::uint64_t id, bool collect) {
  pmix::wire::Envelope e;
  e.set_id(id);
  e.mutable_fence()->set_collect_data(collect);
  return pmix::protocol::to_frame(e);
}

pmix_status_t raw_exchange(int fd, const std::string& frames) {
  send_all(fd, frames);
  pmix::protocol::frame_reader reader;
  pmix::wire::Envelope reply;
  if (!next_envelope(fd, reader, reply)) return PMIX_ERR_UNREACH;
  switch (reply.body_case()) {
    case pmix::wire::Envelope::kStatusReply: return reply.status_reply().status();
    case pmix::wire::Envelope::kFenceReply: return reply.fence_reply().status();
    default: return PMIX_ERR_UNPACK_FAILURE;
  }
}

}  // namespace pmix::test
