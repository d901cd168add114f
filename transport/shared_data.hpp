// Bytes the server shares with many local clients at once (a collecting
// fence's data, a job's data): written once into a sealed memfd whose
// descriptor travels with each client's reply (SCM_RIGHTS), so a node holds
// one copy instead of one per client, and the server writes a few bytes per
// client instead of the whole data (docs/wire-format.md, "Shared data").
#pragma once

#include <cstddef>
#include <cstdint>
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
  friend class fence_board;
  shared_data(int fd, std::size_t size) : fd_(fd), size_(size) {}
  int fd_;
  std::size_t size_;
};

// A namespace's fence board (docs/wire-format.md, "Fence board"): a memfd
// the server maps writable and its local clients read-only, where the
// server posts a whole-namespace fence's reply once for all of them and
// wakes them all with one futex call, instead of one socket write and one
// wake-up per client. The first 64 bytes are a board_header; the reply
// follows. Sealed against resizing and against any new writable mapping
// (F_SEAL_FUTURE_WRITE): a client cannot change what the others read.
struct board_header {
  std::uint32_t magic;
  std::uint32_t version;
  std::uint32_t generation;  // +1 at each post; the futex word
  std::uint32_t poster_cpu;  // 1 + the CPU the last post was written on; 0: not known
  std::uint64_t size;      // bytes of the posted FenceReply
  std::uint64_t capacity;  // bytes after board_data_offset
};
constexpr std::uint32_t board_magic = 0x50584642;  // "BFXP"
constexpr std::uint32_t board_version = 1;
constexpr std::size_t board_data_offset = 64;

class fence_board {
 public:
  // Null if the system refuses one (the fences then answer by socket).
  static std::shared_ptr<fence_board> make(std::size_t capacity);
  ~fence_board();
  fence_board(const fence_board&) = delete;
  fence_board& operator=(const fence_board&) = delete;

  // The descriptor and size to pass to clients.
  const std::shared_ptr<const shared_data>& file() const { return file_; }
  std::size_t capacity() const { return capacity_; }
  // Writes `reply`, then publishes it (the generation + 1, release) and
  // wakes every process waiting on the generation. False, and nothing
  // changes, when it does not fit.
  bool post(std::string_view reply);
  std::uint32_t generation() const;

 private:
  fence_board(std::shared_ptr<const shared_data> file, void* at, std::size_t capacity)
      : file_(std::move(file)), at_(at), capacity_(capacity) {}
  std::shared_ptr<const shared_data> file_;
  void* at_;
  std::size_t capacity_;
};

// The board's capacity: PMIX_CXX_FENCE_BOARD_BYTES (0: no board, every
// fence answers by socket), default 1 MiB. A larger reply goes by socket.
std::size_t fence_board_capacity();

// The client's side: maps a received board read-only after checking that it
// is a memfd sealed against resizing and new writable mappings, of `size`
// bytes, with a valid header. Takes over `fd`. Returns the mapping's owner
// and sets `header`; null on refusal.
std::shared_ptr<const void> map_board(int fd, std::size_t size, const board_header*& header);

// A board's generation, read with acquire order (client and tests).
std::uint32_t board_generation(const board_header* header);
// The CPU the server's last post was written on, -1 if none is known (no
// post yet, or the kernel would not say).
int board_poster_cpu(const board_header* header);
// Copies the posted reply into `out` if the board's generation is still
// `generation` after the copy (it cannot change while this client waits in
// the fence it belongs to; a change means the board is not to be trusted).
bool board_read(const board_header* header, std::uint32_t generation, std::string& out);

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
