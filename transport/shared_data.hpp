// Bytes the server shares with many local clients at once (a collecting
// fence's data, a job's data): written once into a sealed memfd whose
// descriptor travels with each client's reply (SCM_RIGHTS), so a node holds
// one copy instead of one per client, and the server writes a few bytes per
// client instead of the whole data (docs/wire-format.md, "Shared data").
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <string_view>

namespace pmix::transport {

class shared_data {
 public:
  // A sealed (no write, no resize, no unsealing) memfd holding `bytes`;
  // null if the system refuses one (the caller sends the bytes inline).
  static std::shared_ptr<const shared_data> make(std::string_view bytes);
  ~shared_data();
  shared_data(const shared_data&) = delete;
  shared_data& operator=(const shared_data&) = delete;

  int fd() const { return fd_; }
  std::size_t size() const { return size_; }

 private:
  shared_data(int fd, std::size_t size) : fd_(fd), size_(size) {}
  int fd_;
  std::size_t size_;
};

// From how many bytes on data goes to local clients as shared data:
// PMIX_CXX_SHARED_DATA_MIN (bytes; 0 never), default 16384. Below it a
// reply carries its bytes, which costs less than a descriptor and a mapping.
std::size_t shared_data_threshold();

// The client's side: maps a received descriptor read-only after checking
// that it is a memfd sealed against writes and shrinking, of at least `size`
// bytes. Takes over `fd` (closed in every case). Returns the mapping's
// owner (unmapped when the last copy goes) and sets `bytes`; null on refusal.
std::shared_ptr<const void> map_shared(int fd, std::size_t size, std::string_view& bytes);

// recv() on `socket` that also keeps the descriptors passed along with the
// bytes (SCM_RIGHTS, close-on-exec), appended to `fds` in order: a reader
// takes them as the frames it decodes announce them (protocol::shared_size).
// Returns what recv() returns.
long receive_with_descriptors(int socket, char* buf, std::size_t size, std::deque<int>& fds);

}  // namespace pmix::transport
