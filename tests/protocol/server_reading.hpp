// The server's two readings of a commit or fence frame, side by side
// (tests/protocol/messages_test.cpp, tests/fuzz/server_envelope_fuzz.cpp):
// protobuf's, which every other request takes, and the hand codec's
// (protocol::read_request), which actors/peer_actor.cpp's read_fence_request
// takes first. Whatever the second reads, the first must read the same.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/value.hpp"
#include "protocol/codec.hpp"
#include "protocol/direct.hpp"
#include "protocol/messages.hpp"
#include "protocol/pmix.pb.h"

namespace pmix::test {

struct server_reading {
  protocol::body kind = protocol::body::none;
  std::uint64_t id = 0;
  std::vector<std::pair<std::string, std::string>> items;  // each item's key and the bytes kept
  std::vector<proc_id> procs;
  info_list info;
  bool collect = false, board_wait = false, board_request = false;
};

// As on_commit and on_fence read a frame protobuf parsed: false when the
// server would close the connection, or for any other request.
inline bool by_protobuf(std::string_view payload, server_reading& out) {
  out = server_reading{};
  wire::Envelope e;
  if (!e.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) return false;
  out.id = e.id();
  if (e.body_case() == wire::Envelope::kCommit) {
    out.kind = protocol::body::commit;
    for (const auto& d : e.commit().data()) {
      std::string bytes, key;
      if (!protocol::canonical_item(d, bytes, key)) return false;
      out.items.emplace_back(std::move(key), std::move(bytes));
    }
    return true;
  }
  if (e.body_case() != wire::Envelope::kFence) return false;
  out.kind = protocol::body::fence;
  for (const auto& p : e.fence().procs()) out.procs.push_back(protocol::from_wire(p));
  if (!protocol::from_wire(e.fence().info(), out.info)) return false;
  out.collect = e.fence().collect_data();
  out.board_wait = e.fence().board_wait();
  out.board_request = e.fence().board_request();
  return true;
}

// As read_fence_request reads it: false when it leaves the frame to protobuf.
inline bool directly(std::string_view payload, server_reading& out) {
  out = server_reading{};
  protocol::request r;
  if (!protocol::read_request(payload, r)) return false;
  out.id = r.id;
  out.kind = r.kind;
  if (r.kind == protocol::body::commit) {
    std::vector<protocol::scoped_info> read;
    if (!protocol::read_commit(r.message, read)) return false;
    for (auto& d : read) {
      std::string bytes;
      protocol::write_scoped_item(bytes, d.scope, d.item);
      out.items.emplace_back(d.item.key, std::move(bytes));
    }
    return true;
  }
  protocol::fence_request_data read;
  if (!protocol::read_fence(r.message, read)) return false;
  out.procs = std::move(read.procs);
  out.info = std::move(read.info);
  out.collect = read.collect_data;
  out.board_wait = read.board_wait;
  out.board_request = read.board_request;
  return true;
}

// The same reading: the infos are compared by what the direct writer makes
// of them (protobuf's bytes: equal exactly when the values are).
inline bool same_reading(const server_reading& a, const server_reading& b) {
  auto encoded = [](const info_list& list) {
    std::string out;
    for (const auto& i : list) protocol::append_info(out, 2, i);
    return out;
  };
  return a.kind == b.kind && a.id == b.id && a.items == b.items && a.procs == b.procs &&
         encoded(a.info) == encoded(b.info) && a.collect == b.collect && a.board_wait == b.board_wait &&
         a.board_request == b.board_request;
}

}  // namespace pmix::test
