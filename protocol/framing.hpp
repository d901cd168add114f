// Length-prefixed framing for PMIx messages on stream sockets.
//
// A frame is a 4-byte big-endian payload length followed by that many bytes
// (one serialized wire::Envelope). A length above the configured maximum is a
// protocol error: the connection that sent it is closed (docs/wire-format.md).
// This header knows nothing about protobuf.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace pmix::protocol {

inline constexpr std::size_t frame_header_size = 4;
// Default largest accepted payload: 64 MiB.
inline constexpr std::uint32_t default_max_frame_size = 64u << 20;

// Appends one frame (header + payload) to `out`. The caller guarantees that
// payload.size() <= the peer's maximum frame size.
void append_frame(std::string& out, std::string_view payload);

// Splits a byte stream into frames. Feed it whatever recv() returned, then
// call next() until it stops returning frame_status::complete.
class frame_reader {
 public:
  enum class status { complete, need_more, too_large };

  explicit frame_reader(std::uint32_t max_frame_size = default_max_frame_size)
      : max_frame_size_(max_frame_size) {}

  void feed(const char* data, std::size_t size);

  // On complete, `payload` holds the next frame's payload. After too_large,
  // the stream is unusable and the connection must be closed.
  status next(std::string& payload);
  // feed() of `data` and next() in one: while nothing is buffered, a frame
  // that is whole in `data` is taken from it directly (one copy fewer: a
  // 64-rank fence reply is 7 kB, read by each of 64 clients), and only a
  // partial frame is buffered. Consumes what it takes or buffers from the
  // front of `data`; call it again, with what is left, until need_more
  // (after which `data` is empty).
  status next_from(std::string_view& data, std::string& payload);

  // OpenPMIx's framing instead of ours (issue 35): a 16-byte header (index,
  // tag, payload length, padding), in the sender's byte order for the first
  // frame (the handshake) and big-endian after it; a frame is returned
  // whole, header included (the tag is the request's id). A client reads
  // only big-endian headers (its server's handshake reply is not framed):
  // `handshake_first` false.
  void use_openpmix_framing(bool handshake_first = true) {
    openpmix_ = true;
    openpmix_handshake_ = handshake_first;
  }
  // Either framing, as the first frame shows (OpenPMIx's handshake header
  // begins with four 0xff bytes, a length no frame of ours has): the
  // listener that OpenPMIx's processes and ours may both reach.
  void use_either_framing() { sniffing_ = true; }
  bool openpmix() const { return openpmix_; }

  // Changes the largest accepted payload (a peer's limit grows once it has
  // authenticated).
  void set_max(std::uint32_t max_frame_size) { max_frame_size_ = max_frame_size; }
  // Bytes received but not yet returned as a frame.
  std::size_t buffered() const { return buffer_ ? buffer_->size() - consumed_ : 0; }
  // Frees the buffer once every byte in it was returned as a frame: for a
  // reader that is idle most of the time (one per client in a server), its
  // capacity would otherwise stay at the largest read (about 0.6 kB a
  // connection after the handshake; pmixsim).
  void release_if_drained();
  // The length announced by the header that caused too_large.
  std::uint32_t rejected_length() const { return rejected_length_; }

 private:
  // One frame from the front of `in`: complete (its payload copied out,
  // `used` bytes taken), need_more, or too_large.
  status take(std::string_view in, std::string& payload, std::size_t& used);

  // Made when bytes wait for the rest of their frame, freed once drained
  // (release_if_drained): an idle reader (one per client in a server) is
  // 24 bytes, not 56.
  std::unique_ptr<std::string> buffer_;
  std::uint32_t consumed_ = 0;
  std::uint32_t max_frame_size_;
  std::uint32_t rejected_length_ = 0;
  bool openpmix_ = false;
  bool openpmix_handshake_ = true;  // its first frame's header is in host order
  bool sniffing_ = false;            // the first frame decides (use_either_framing)
};

}  // namespace pmix::protocol
