// Length-prefixed framing (protocol/framing.hpp): a 4-byte big-endian payload
// length, then the payload; lengths above the reader's maximum are refused.
#include "protocol/framing.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace proto = pmix::protocol;
using status = proto::frame_reader::status;

namespace {

std::string frame(const std::string& payload) {
  std::string out;
  proto::append_frame(out, payload);
  return out;
}

std::string header(std::uint32_t n) {
  return std::string{static_cast<char>(n >> 24), static_cast<char>((n >> 16) & 0xff),
                     static_cast<char>((n >> 8) & 0xff), static_cast<char>(n & 0xff)};
}

void feed(proto::frame_reader& r, const std::string& bytes) { r.feed(bytes.data(), bytes.size()); }

// Every complete frame the reader holds, in order; `last` is the status that
// stopped the loop.
std::vector<std::string> drain(proto::frame_reader& r, status& last) {
  std::vector<std::string> out;
  std::string payload;
  while ((last = r.next(payload)) == status::complete) out.push_back(payload);
  return out;
}

// next_from() over `bytes` until it needs more: the frames, in order.
std::vector<std::string> drain_from(proto::frame_reader& r, const std::string& bytes, status& last) {
  std::vector<std::string> out;
  std::string_view data{bytes};
  std::string payload;
  while ((last = r.next_from(data, payload)) == status::complete) out.push_back(payload);
  if (last == status::need_more) CHECK(data.empty());
  return out;
}

// A payload whose bytes depend on `seed`, including NULs and high bytes.
std::string payload_of(std::size_t size, unsigned seed) {
  std::string p(size, '\0');
  for (std::size_t i = 0; i < size; ++i) p[i] = static_cast<char>((i * 131 + seed * 7) & 0xff);
  return p;
}

}  // namespace

TEST_SUITE("framing") {
  TEST_CASE("append_frame writes a big-endian length before the payload") {
    std::string out = "x";  // appends, does not overwrite
    proto::append_frame(out, "hello");
    CHECK(out == std::string{"x\0\0\0\5hello", 10});

    out.clear();
    const std::string big(0x010203, 'a');
    proto::append_frame(out, big);
    REQUIRE(out.size() == proto::frame_header_size + big.size());
    CHECK(static_cast<unsigned char>(out[0]) == 0x00);
    CHECK(static_cast<unsigned char>(out[1]) == 0x01);
    CHECK(static_cast<unsigned char>(out[2]) == 0x02);
    CHECK(static_cast<unsigned char>(out[3]) == 0x03);
    CHECK(out.compare(4, std::string::npos, big) == 0);
  }

  TEST_CASE("a frame fed whole comes out whole and leaves nothing buffered") {
    proto::frame_reader r;
    feed(r, frame("payload"));
    std::string p;
    CHECK(r.next(p) == status::complete);
    CHECK(p == "payload");
    CHECK(r.buffered() == 0);
    CHECK(r.next(p) == status::need_more);
  }

  TEST_CASE("an empty reader needs more") {
    proto::frame_reader r;
    std::string p = "untouched";
    CHECK(r.next(p) == status::need_more);
    CHECK(r.buffered() == 0);
  }

  TEST_CASE("an empty payload is a complete frame of its own") {
    proto::frame_reader r;
    feed(r, frame("") + frame("") + frame("after"));
    std::string p = "stale";
    CHECK(r.next(p) == status::complete);
    CHECK(p.empty());
    CHECK(r.next(p) == status::complete);
    CHECK(p.empty());
    CHECK(r.next(p) == status::complete);
    CHECK(p == "after");
    CHECK(r.next(p) == status::need_more);
  }

  TEST_CASE("a stream split at every byte boundary yields the same frames") {
    // Three frames, one empty, one with NULs and high bytes.
    const std::vector<std::string> payloads = {"first", "", payload_of(300, 3), "z"};
    std::string stream;
    for (const auto& p : payloads) proto::append_frame(stream, p);

    for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
      CAPTURE(cut);
      proto::frame_reader r;
      status last = status::complete;
      feed(r, stream.substr(0, cut));
      auto got = drain(r, last);
      CHECK(last == status::need_more);
      feed(r, stream.substr(cut));
      auto rest = drain(r, last);
      CHECK(last == status::need_more);
      got.insert(got.end(), rest.begin(), rest.end());
      CHECK(got == payloads);
      CHECK(r.buffered() == 0);
    }
  }

  TEST_CASE("next_from: a stream read in two parts cut anywhere yields the same frames as feed and next") {
    const std::vector<std::string> payloads = {"first", "", payload_of(300, 3), "z", payload_of(70000, 5)};
    std::string stream;
    for (const auto& p : payloads) proto::append_frame(stream, p);
    for (std::size_t cut = 0; cut <= stream.size(); cut += (cut < 400 ? 1 : 997)) {
      CAPTURE(cut);
      proto::frame_reader r;
      status last = status::complete;
      auto got = drain_from(r, stream.substr(0, cut), last);
      CHECK(last == status::need_more);
      auto rest = drain_from(r, stream.substr(cut), last);
      CHECK(last == status::need_more);
      got.insert(got.end(), rest.begin(), rest.end());
      CHECK(got == payloads);
      CHECK(r.buffered() == 0);
    }
  }

  TEST_CASE("next_from takes whole frames from the data and buffers only a partial one") {
    proto::frame_reader r;
    status last = status::complete;
    const std::string two = frame("one") + frame("two");
    const std::string partial = frame(payload_of(100, 1)).substr(0, 50);
    auto got = drain_from(r, two + partial, last);
    CHECK(got == std::vector<std::string>{"one", "two"});
    CHECK(r.buffered() == 50);  // the partial frame alone
    got = drain_from(r, frame(payload_of(100, 1)).substr(50) + frame("after"), last);
    CHECK(got == std::vector<std::string>{payload_of(100, 1), "after"});
    CHECK(r.buffered() == 0);

    // Too large, from the data as from the buffer: and it stays so.
    proto::frame_reader small{8};
    got = drain_from(small, frame("ok") + header(9) + "123456789", last);
    CHECK(got == std::vector<std::string>{"ok"});
    CHECK(last == status::too_large);
    CHECK(small.rejected_length() == 9);
    std::string_view none;
    std::string payload;
    CHECK(small.next_from(none, payload) == status::too_large);
    proto::frame_reader split{8};
    drain_from(split, header(9).substr(0, 2), last);
    CHECK(last == status::need_more);
    drain_from(split, header(9).substr(2), last);
    CHECK(last == status::too_large);
  }

  TEST_CASE("a stream fed one byte at a time yields every frame exactly when complete") {
    const std::vector<std::string> payloads = {"a", payload_of(17, 1), "", "last frame"};
    std::string stream;
    std::vector<std::size_t> ends;  // offset just after each frame
    for (const auto& p : payloads) {
      proto::append_frame(stream, p);
      ends.push_back(stream.size());
    }
    proto::frame_reader r;
    std::vector<std::string> got;
    std::string p;
    for (std::size_t i = 0; i < stream.size(); ++i) {
      r.feed(&stream[i], 1);
      const auto s = r.next(p);
      const bool frame_ends_here =
          std::find(ends.begin(), ends.end(), i + 1) != ends.end();
      CAPTURE(i);
      CHECK((s == status::complete) == frame_ends_here);
      if (s == status::complete) got.push_back(p);
      CHECK(r.next(p) == status::need_more);
    }
    CHECK(got == payloads);
  }

  TEST_CASE("many frames in one feed come out in order") {
    std::string stream;
    std::vector<std::string> payloads;
    for (unsigned i = 0; i < 50; ++i) {
      payloads.push_back(payload_of(i * 3, i));
      proto::append_frame(stream, payloads.back());
    }
    proto::frame_reader r;
    feed(r, stream);
    CHECK(r.buffered() == stream.size());
    status last = status::complete;
    CHECK(drain(r, last) == payloads);
    CHECK(last == status::need_more);
    CHECK(r.buffered() == 0);
  }

  TEST_CASE("a header split across feeds is reassembled") {
    const std::string f = frame("split header");
    for (std::size_t cut = 1; cut < proto::frame_header_size; ++cut) {
      CAPTURE(cut);
      proto::frame_reader r;
      std::string p;
      feed(r, f.substr(0, cut));
      CHECK(r.next(p) == status::need_more);
      CHECK(r.buffered() == cut);
      feed(r, f.substr(cut, 1));
      // One more header byte: at best the header is whole, the payload is not.
      CHECK(r.next(p) == status::need_more);
      feed(r, f.substr(cut + 1));
      CHECK(r.next(p) == status::complete);
      CHECK(p == "split header");
    }
  }

  TEST_CASE("a truncated frame needs more forever and keeps its bytes") {
    const std::string f = frame("0123456789");
    proto::frame_reader r;
    feed(r, f.substr(0, f.size() - 1));
    std::string p = "unchanged";
    for (int i = 0; i < 5; ++i) {
      CHECK(r.next(p) == status::need_more);
      feed(r, "");  // an empty recv changes nothing
    }
    CHECK(p == "unchanged");
    CHECK(r.buffered() == f.size() - 1);
    // The missing byte completes it.
    feed(r, f.substr(f.size() - 1));
    CHECK(r.next(p) == status::complete);
    CHECK(p == "0123456789");
  }

  TEST_CASE("a payload of exactly the maximum size is accepted") {
    constexpr std::uint32_t max = 1000;
    proto::frame_reader r{max};
    const auto payload = payload_of(max, 9);
    feed(r, frame(payload));
    std::string p;
    CHECK(r.next(p) == status::complete);
    CHECK(p == payload);
    CHECK(r.rejected_length() == 0);
  }

  TEST_CASE("a length one above the maximum is too_large and stays too_large") {
    constexpr std::uint32_t max = 1000;
    proto::frame_reader r{max};
    // Only the header is needed to refuse it.
    feed(r, header(max + 1));
    std::string p = "unchanged";
    CHECK(r.next(p) == status::too_large);
    CHECK(r.rejected_length() == max + 1);
    // More bytes, even a valid frame afterwards, do not revive the stream.
    feed(r, std::string(max + 1, 'x'));
    feed(r, frame("valid"));
    for (int i = 0; i < 3; ++i) CHECK(r.next(p) == status::too_large);
    CHECK(p == "unchanged");
    CHECK(r.rejected_length() == max + 1);
  }

  TEST_CASE("frames before an oversized one are still delivered") {
    proto::frame_reader r{10};
    feed(r, frame("ok") + header(11) + "abc");
    std::string p;
    CHECK(r.next(p) == status::complete);
    CHECK(p == "ok");
    CHECK(r.next(p) == status::too_large);
    CHECK(r.rejected_length() == 11);
  }

  TEST_CASE("the default maximum is 64 MiB") {
    CHECK(proto::default_max_frame_size == 64u * 1024 * 1024);
    proto::frame_reader r;
    std::string p;
    feed(r, header(proto::default_max_frame_size));
    CHECK(r.next(p) == status::need_more);  // allowed: waits for the payload

    proto::frame_reader r2;
    feed(r2, header(proto::default_max_frame_size + 1));
    CHECK(r2.next(p) == status::too_large);
    CHECK(r2.rejected_length() == proto::default_max_frame_size + 1);
  }

  TEST_CASE("the length 0xFFFFFFFF is too_large by default and does not overflow") {
    proto::frame_reader r;
    feed(r, header(0xFFFFFFFFu) + "abc");
    std::string p;
    CHECK(r.next(p) == status::too_large);
    CHECK(r.rejected_length() == 0xFFFFFFFFu);

    // With the largest possible maximum it is a legal length: the reader
    // waits for four billion bytes instead of wrapping around.
    proto::frame_reader wide{0xFFFFFFFFu};
    feed(wide, header(0xFFFFFFFFu) + std::string(100, 'a'));
    CHECK(wide.next(p) == status::need_more);
    CHECK(wide.rejected_length() == 0);
    CHECK(wide.buffered() == 104);
  }

  TEST_CASE("100000 small frames fed in chunks come out in order (buffer compaction)") {
    constexpr unsigned count = 100000;
    std::string stream;
    for (unsigned i = 0; i < count; ++i) proto::append_frame(stream, std::to_string(i));

    proto::frame_reader r;
    unsigned expected = 0;
    std::string p;
    // Odd chunk sizes: frames and headers straddle chunk boundaries, and the
    // reader is drained after each feed so consumed bytes pile up at the front.
    const std::size_t chunk = 4093;
    std::size_t max_buffered = 0;
    for (std::size_t off = 0; off < stream.size(); off += chunk) {
      r.feed(stream.data() + off, std::min(chunk, stream.size() - off));
      max_buffered = std::max(max_buffered, r.buffered());
      status s;
      while ((s = r.next(p)) == status::complete) {
        if (p != std::to_string(expected)) {
          FAIL("frame " << expected << " came out as " << p);
        }
        ++expected;
      }
      REQUIRE(s == status::need_more);
    }
    CHECK(expected == count);
    CHECK(r.buffered() == 0);
    // Never more than one chunk plus one partial frame outstanding.
    CHECK(max_buffered < chunk + 16);
  }

  TEST_CASE("100000 frames in a single feed, drained with interleaved partial feeds") {
    constexpr unsigned count = 100000;
    std::string stream;
    for (unsigned i = 0; i < count; ++i) proto::append_frame(stream, payload_of(i % 7, i));

    proto::frame_reader r;
    // Everything but the last 3 bytes in one go, then the rest.
    feed(r, stream.substr(0, stream.size() - 3));
    unsigned n = 0;
    std::string p;
    status s;
    while ((s = r.next(p)) == status::complete) {
      if (p != payload_of(n % 7, n)) FAIL("frame " << n << " differs");
      ++n;
      // Feeding nothing between frames must not disturb the read position,
      // even once compaction kicks in.
      if (n % 1000 == 0) r.feed(p.data(), 0);
    }
    CHECK(s == status::need_more);
    CHECK(n == count - 1);
    feed(r, stream.substr(stream.size() - 3));
    CHECK(r.next(p) == status::complete);
    CHECK(p == payload_of((count - 1) % 7, count - 1));
    CHECK(r.buffered() == 0);
  }

  TEST_CASE("release_if_drained keeps a partial frame and frees only a drained buffer") {
    proto::frame_reader r;
    const std::string a = frame(payload_of(300, 1)), b = frame(payload_of(40, 2));
    // A whole frame and half of the next: the half stays.
    feed(r, a + b.substr(0, 20));
    std::string p;
    REQUIRE(r.next(p) == status::complete);
    CHECK(p == payload_of(300, 1));
    REQUIRE(r.next(p) == status::need_more);
    r.release_if_drained();
    CHECK(r.buffered() == 20);
    feed(r, b.substr(20));
    REQUIRE(r.next(p) == status::complete);
    CHECK(p == payload_of(40, 2));
    CHECK(r.buffered() == 0);
    // Drained: freed, and the reader goes on as new.
    r.release_if_drained();
    CHECK(r.buffered() == 0);
    feed(r, a);
    REQUIRE(r.next(p) == status::complete);
    CHECK(p == payload_of(300, 1));
    status last;
    CHECK(drain(r, last).empty());
    CHECK(last == status::need_more);
  }

  TEST_CASE("OpenPMIx's framing: the handshake's header in host order, then big-endian ones; frames whole") {
    // Bytes an OpenPMIx 4.2.2 client sent (x86: little-endian): a handshake
    // header announcing 51 bytes, then a request header (tag 101, 2 bytes).
    std::string handshake("\xff\xff\xff\xff\xff\xff\xff\xff\x33\x00\x00\x00\x00\x00\x00\x00", 16);
    handshake += std::string(51, 'h');
    std::string request("\x00\x00\x00\x00\x00\x00\x00\x65\x00\x00\x00\x02\x00\x00\x00\x00", 16);
    request += std::string("\x02\x00", 2);
    pmix::protocol::frame_reader r{1024};
    r.use_openpmix_framing();
    const std::string both = handshake + request;
    std::string p;
    for (std::size_t k = 0; k < both.size(); ++k) {  // a byte at a time
      r.feed(both.data() + k, 1);
      const auto st = r.next(p);
      if (k + 1 == handshake.size()) {
        REQUIRE(st == status::complete);
        CHECK(p == handshake);
      } else if (k + 1 == both.size()) {
        REQUIRE(st == status::complete);
        CHECK(p == request);
      } else {
        CHECK(st == status::need_more);
      }
    }
    // A length over the limit ends the stream.
    std::string huge("\x00\x00\x00\x00\x00\x00\x00\x66\x7f\xff\xff\xff\x00\x00\x00\x00", 16);
    r.feed(huge.data(), huge.size());
    CHECK(r.next(p) == status::too_large);
    CHECK(r.rejected_length() == 0x7fffffffu);
  }

  TEST_CASE("either framing: the first four bytes tell OpenPMIx's handshake (ff ff ff ff) from a frame of ours") {
    std::string handshake("\xff\xff\xff\xff\xff\xff\xff\xff\x05\x00\x00\x00\x00\x00\x00\x00", 16);
    handshake += "hello";
    std::string p;
    {
      pmix::protocol::frame_reader r{1024};
      r.use_either_framing();
      for (std::size_t k = 0; k + 1 < handshake.size(); ++k) {  // a byte at a time
        r.feed(handshake.data() + k, 1);
        CHECK(r.next(p) == status::need_more);
      }
      r.feed(handshake.data() + handshake.size() - 1, 1);
      REQUIRE(r.next(p) == status::complete);
      CHECK(r.openpmix());
      CHECK(p == handshake);
    }
    {
      pmix::protocol::frame_reader r{1024};
      r.use_either_framing();
      const auto ours = frame("payload") + frame("second");
      r.feed(ours.data(), 2);
      CHECK(r.next(p) == status::need_more);
      r.feed(ours.data() + 2, ours.size() - 2);
      REQUIRE(r.next(p) == status::complete);
      CHECK_FALSE(r.openpmix());
      CHECK(p == "payload");
      REQUIRE(r.next(p) == status::complete);
      CHECK(p == "second");
    }
    {
      // Ours announcing more than the limit is refused, as without sniffing.
      pmix::protocol::frame_reader r{1024};
      r.use_either_framing();
      const auto big = header(4096) + std::string(16, 'x');
      r.feed(big.data(), big.size());
      CHECK(r.next(p) == status::too_large);
      CHECK_FALSE(r.openpmix());
    }
  }
}
