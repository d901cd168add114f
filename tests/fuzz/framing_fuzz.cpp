// Fuzz target: the transport's length-prefixed frame reader
// (protocol/framing.hpp), driven the way the server's socket thread
// (transport/io_thread.cpp) and the client's connection
// (client/connection.cpp) drive it: bytes fed in recv()-sized chunks, next()
// called until it stops returning a frame, the limit raised once the peer
// has authenticated.
//
// Input: [limit byte][chunk byte] then the byte stream. The limit byte picks
// the frame limit before and after the "handshake" (small limits, so that
// too_large is reached; the real 1 MiB / 64 MiB ones too); the chunk byte
// the recv() sizes.
//
// Invariants: the frames returned, framed again with append_frame, are
// exactly the bytes consumed, in order; buffered() is what was fed and not
// returned; no frame is longer than the limit in force; after too_large the
// reader stays at too_large and names a length above the limit.
#include <cstdint>
#include <string>

#include "protocol/framing.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace pmix;

namespace {

std::uint32_t limit_of(unsigned code) {
  switch (code & 7) {
    case 0: return 0;
    case 1: return 1;
    case 2: return 7;
    case 3: return 64;
    case 4: return 300;
    case 5: return 4096;
    case 6: return 1u << 20;  // PMIX_CXX_MAX_HANDSHAKE_FRAME's default
    default: return protocol::default_max_frame_size;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::input in{data, size};
  const unsigned limits = in.byte();
  const unsigned chunking = in.byte();
  const std::string_view stream = in.rest();

  std::uint32_t limit = limit_of(limits);
  const std::uint32_t raised = limit_of(limits >> 3);
  const bool raise = (limits & 0x40) != 0;  // "authenticate" after the first frame
  protocol::frame_reader reader{limit};

  std::string reframed;  // append_frame of every frame returned
  std::size_t fed = 0, frames = 0;
  bool rejected = false;
  std::string payload;
  std::size_t step = 0;
  while (fed < stream.size() && !rejected) {
    // recv() sizes: 1 byte at a time up to whole 64 KiB reads.
    std::size_t n = 1 + ((chunking + step * 31) % 97);
    if (chunking & 0x80) n = 65536;
    ++step;
    if (n > stream.size() - fed) n = stream.size() - fed;
    reader.feed(stream.data() + fed, n);
    fed += n;
    for (;;) {
      const auto st = reader.next(payload);
      if (st == protocol::frame_reader::status::complete) {
        FUZZ_CHECK(payload.size() <= limit);
        protocol::append_frame(reframed, payload);
        ++frames;
        if (raise && frames == 1) {
          limit = raised;
          reader.set_max(limit);
        }
        continue;
      }
      if (st == protocol::frame_reader::status::too_large) {
        FUZZ_CHECK(reader.rejected_length() > limit);
        // Unusable from now on, whatever else arrives.
        reader.feed("\0\0\0\0", 4);
        FUZZ_CHECK(reader.next(payload) == protocol::frame_reader::status::too_large);
        rejected = true;
      }
      break;
    }
    if (!rejected) {
      // Everything fed is either returned (reframed) or still buffered.
      FUZZ_CHECK(reframed.size() + reader.buffered() == fed);
      FUZZ_CHECK(stream.substr(0, reframed.size()) == reframed);
      // What is left is less than one whole frame.
      if (reader.buffered() >= protocol::frame_header_size) {
        const auto* p = reinterpret_cast<const unsigned char*>(stream.data() + reframed.size());
        const std::uint32_t announced = (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) |
                                        (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
        FUZZ_CHECK(reader.buffered() < protocol::frame_header_size + announced);
      }
    }
  }
  return 0;
}
