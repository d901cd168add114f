#include "protocol/framing.hpp"

#include <cstring>

namespace pmix::protocol {

void append_frame(std::string& out, std::string_view payload) {
  const auto n = static_cast<std::uint32_t>(payload.size());
  const char header[frame_header_size] = {
      static_cast<char>((n >> 24) & 0xff), static_cast<char>((n >> 16) & 0xff),
      static_cast<char>((n >> 8) & 0xff), static_cast<char>(n & 0xff)};
  out.append(header, frame_header_size);
  out.append(payload.data(), payload.size());
}

void frame_reader::feed(const char* data, std::size_t size) {
  if (!buffer_) buffer_ = std::make_unique<std::string>();
  auto& buffer = *buffer_;
  // Drop what was already handed out before growing the buffer.
  if (consumed_ > 0 && consumed_ == buffer.size()) {
    buffer.clear();
    consumed_ = 0;
  } else if (consumed_ > (1u << 16) && consumed_ > buffer.size() / 2) {
    buffer.erase(0, consumed_);
    consumed_ = 0;
  }
  buffer.append(data, size);
}

void frame_reader::release_if_drained() {
  if (buffered() != 0) return;
  buffer_.reset();
  consumed_ = 0;
}

frame_reader::status frame_reader::take(std::string_view in, std::string& payload, std::size_t& used) {
  if (sniffing_) {
    if (in.size() < 4) return status::need_more;
    openpmix_ = std::memcmp(in.data(), "\xff\xff\xff\xff", 4) == 0;
    sniffing_ = false;
  }
  if (openpmix_) {
    constexpr std::size_t header = 16;
    if (in.size() < header) return status::need_more;
    const auto* p = reinterpret_cast<const unsigned char*>(in.data()) + 8;
    std::uint32_t n;
    if (openpmix_handshake_)
      std::memcpy(&n, p, 4);
    else
      n = (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
    if (n > max_frame_size_) {
      rejected_length_ = n;
      return status::too_large;
    }
    if (in.size() < header + n) return status::need_more;
    payload.assign(in.data(), header + n);
    used = header + n;
    openpmix_handshake_ = false;
    return status::complete;
  }
  if (in.size() < frame_header_size) return status::need_more;
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
  const std::uint32_t n = (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) |
                          (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
  if (n > max_frame_size_) {
    rejected_length_ = n;
    return status::too_large;
  }
  if (in.size() < frame_header_size + n) return status::need_more;
  payload.assign(in.data() + frame_header_size, n);
  used = frame_header_size + n;
  return status::complete;
}

frame_reader::status frame_reader::next_from(std::string_view& data, std::string& payload) {
  if (rejected_length_ != 0) return status::too_large;
  if (buffered() == 0) {
    std::size_t used = 0;
    const auto st = take(data, payload, used);
    if (st == status::complete) data.remove_prefix(used);
    if (st != status::need_more) return st;
  }
  if (!data.empty()) {
    feed(data.data(), data.size());
    data = {};
  }
  return next(payload);
}

frame_reader::status frame_reader::next(std::string& payload) {
  if (rejected_length_ != 0) return status::too_large;
  if (!buffer_) return status::need_more;
  std::size_t used = 0;
  const auto st = take(std::string_view{*buffer_}.substr(consumed_), payload, used);
  if (st == status::complete) consumed_ += static_cast<std::uint32_t>(used);
  return st;
}

}  // namespace pmix::protocol
