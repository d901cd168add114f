// The client's side of the wire (pmix.proto) without libprotobuf: the
// requests a client or tool sends are written straight into their protobuf
// encoding, and the messages it receives are read into the library's C++
// values. Every byte written is what protobuf writes for the same message,
// and every message protobuf writes reads back as the codec
// (protocol/codec.hpp) reads it (tests/protocol/messages_test.cpp).
//
// Why by hand: the client library is loaded by every process of a job, and
// libprotobuf-lite brings libstdc++ with it; without both, libpmix.so.2 links
// the C++ runtime statically and a rank starts about 0.8 ms sooner
// (docs/performance.md, "Client start-up cost").
#pragma once

#include <cstdint>
#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/event.hpp"
#include "common/value.hpp"

namespace pmix::protocol {

// The field numbers of Envelope's `body` oneof.
enum class body : std::uint32_t {
  none = 0,
  connect = 10,
  connect_reply = 11,
  finalize = 12,
  commit = 13,
  fence = 14,
  fence_reply = 15,
  get = 16,
  get_reply = 17,
  abort = 18,
  status_reply = 19,
  job_control = 20,
  info_reply = 21,
  notify = 22,
  event = 23,
  query = 24,
  publish = 25,
  lookup = 26,
  lookup_reply = 27,
  unpublish = 28,
  spawn = 29,
  spawn_reply = 30,
  connect_procs = 31,
  connect_procs_reply = 32,
  log = 33,
  host = 34,
  iof = 35,
  group = 36,
  fence_board = 37,
  commit_hold_end = 38,
  commit_hold_ended = 39,
};

// One received Envelope. `message` is the body's bytes, inside `bytes`.
struct envelope {
  std::uint64_t id = 0;
  protocol::body kind = body::none;
  std::string bytes;
  std::string_view message;
  // Data that came as a shared memory descriptor with this frame
  // (FenceReply.shared), mapped by the connection, and what keeps it mapped.
  std::shared_ptr<const void> shared_owner;
  std::string_view shared;

  envelope() = default;
  envelope(envelope&& o) noexcept { *this = std::move(o); }
  envelope& operator=(envelope&& o) noexcept;
};
// Parses one frame's payload (taking it over). False on garbage.
bool parse_envelope(std::string payload, envelope& out);

// One complete frame (length prefix, then an Envelope with `id` and the body
// `message`, already encoded by one of the functions below).
std::string to_frame(std::uint64_t id, body kind, std::string_view message);

// The bytes of that frame before `message`: the frame is these followed by
// the message. A message sent alike to many peers (a fence's reply) is then
// written once and sent after each peer's own prefix.
struct frame_prefix {
  frame_prefix(std::uint64_t id, body kind, std::size_t message_size);
  std::string_view view() const { return {bytes, size}; }

 private:
  char bytes[4 + 11 + 5 + 5];  // length, id field, body tag, body length
  std::size_t size = 0;
};

// ---- Requests (what a client or tool sends) ---------------------------------

enum class role : std::uint32_t { client = 0, tool = 1 };
struct scoped_info {
  std::uint32_t scope = 0;
  info item;
};

// `commit_hold`: the client offers to hold its commits (ConnectRequest).
std::string connect_request(std::uint32_t protocol_version, role r, const proc_id& proc, std::int32_t pid,
                            const std::string& library_version, const info_list& info, bool commit_hold = false);
std::string finalize_request(const info_list& info);
std::string commit_request(const std::vector<scoped_info>& data);
// `board_wait`, `board_request`: FenceRequest's fields of those names.
std::string fence_request(const std::vector<proc_id>& procs, const info_list& info, bool collect_data,
                          bool board_wait = false, bool board_request = false);
std::string get_request(const proc_id& proc, const std::string& key, const info_list& info);
std::string abort_request(std::int32_t status, const std::string& message, const std::vector<proc_id>& procs);
std::string job_control_request(const std::vector<proc_id>& targets, const info_list& directives);
std::string query_request(const std::vector<query>& queries);
// An Event (a client's PMIx_Notify_event, or the server's event).
std::string event_message(const event& ev);
std::string publish_request(const info_list& info);
// PMIx_Lookup and PMIx_Unpublish.
std::string keys_request(const std::vector<std::string>& keys, const info_list& info);
std::string spawn_request(const info_list& job_info, const std::vector<app>& apps);
std::string connect_procs_request(const std::vector<proc_id>& procs, const info_list& info, bool disconnect);
std::string log_request(const info_list& data, const info_list& directives);
// A HostRequest (pmix.proto's HostCall says what each field carries).
enum class host_call : std::uint32_t {
  allocate = 0,
  monitor = 1,
  get_credential = 2,
  validate_credential = 3,
  iof_pull = 4,
  iof_push = 5,
  fabric = 6,
  iof_deregister = 7,
  session_control = 8,
  resource_block = 9,
};
struct resource_unit {
  std::uint64_t type = 0;
  std::uint64_t count = 0;
};
struct host_request {
  host_call call = host_call::allocate;
  std::int32_t code = 0;
  std::vector<proc_id> procs;
  info_list info;
  info_list directives;
  std::optional<std::string> data;
  std::uint64_t ref = 0;
  std::vector<resource_unit> units;
};
std::string encode(const host_request& r);
// A GroupRequest.
enum class group_op : std::uint32_t { construct = 0, destruct = 1, invite = 2, join = 3, leave = 4 };
struct group_request {
  group_op op = group_op::construct;
  std::string name;
  std::vector<proc_id> procs;
  info_list directives;
  std::optional<proc_id> leader;
  bool accept = false;
};
std::string encode(const group_request& r);

// ---- What the server sends --------------------------------------------------
// Each decoder is false on a malformed message or an unreadable value; then
// `error` (if given) says why.

struct connect_reply {
  pmix_status_t status = 0;
  proc_id server;
  std::string_view job;  // a JobInfo
  std::uint64_t job_shared = 0;  // instead: the JobInfo is shared data of this size
  std::optional<proc_id> assigned;
  bool commit_hold = false;  // the client may hold a commit for its next frame
};
bool decode(std::string_view in, connect_reply& out, std::string* error = nullptr);

struct job_info {
  std::string nspace;
  info_list info;
  std::vector<std::pair<rank_t, info_list>> ranks;
  // decode_lazy: each rank's RankInfo not decoded yet (views into the bytes
  // `raw` keeps: a copy of the message, or the owner decode_lazy was given),
  // instead of `ranks`.
  std::shared_ptr<const void> raw;
  std::vector<std::pair<rank_t, std::string_view>> encoded;
  // decode_lazy of a JobInfo with a rank index (JobInfo.rank_index; the
  // server writes it in rank order, each rank once): the index itself
  // (index_entry) and the message its offsets count in up to the end of
  // the indexed RankInfos, views into the bytes `raw` keeps, instead of
  // `encoded` (left empty). A process of an
  // N-rank job made an N-entry vector of the index at PMIx_Init (issue 40:
  // 48 kB written, and its pages faulted in, in each of 2,048 processes);
  // a lookup now searches the index where it is (index_find).
  std::string_view rank_index;
  std::string_view indexed;
  // JobInfo.local_ranks_by_peers: a local rank without a RankInfo takes its
  // items from PMIX_LOCAL_PEERS and the job's PMIX_HOSTNAME and PMIX_NODEID.
  bool local_ranks_by_peers = false;
  // JobInfo.local_runs: PMIX_LOCAL_PEERS as runs (expand_local_runs).
  std::string local_runs;
  // JobInfo.local_strided_runs: the same as runs of ranks a stride apart
  // (read_local_strided_runs).
  std::string local_strided_runs;
};
// JobInfo.local_runs, read: false (and `out` empty) unless each run is 8
// bytes, has ranks, comes after the one before with a gap and stays within
// valid ranks, and all of them hold at most `max_count`.
struct local_run {
  rank_t first = 0;
  std::uint32_t count = 0;
  std::uint32_t stride = 1;  // first, first + stride, ...
};
bool read_local_runs(std::string_view runs, std::size_t max_count, std::vector<local_run>& out);
// JobInfo.local_strided_runs, read: false (and `out` empty) unless each run
// is 12 bytes, has ranks and a stride of at least 1, starts after the last
// rank of the run before and stays within valid ranks, and all of them hold
// at most `max_count`.
bool read_local_strided_runs(std::string_view runs, std::size_t max_count, std::vector<local_run>& out);
// The ranks runs hold, ascending.
std::vector<rank_t> expand_runs(const std::vector<local_run>& runs);
// read_local_runs, then expand_runs.
bool expand_local_runs(std::string_view runs, std::size_t max_count, std::vector<rank_t>& out);
// A rank index's entries (job_info::rank_index; decode_lazy checked only
// the last one, which ends `indexed`): how many, the k-th (its rank and its
// RankInfo's bytes, or a null view if they are not between the index and
// the end of `indexed`), and the place of `rank` (index_size if it has
// none; found by a binary search, as the server writes the index in rank
// order).
std::size_t index_size(std::string_view index);
std::pair<rank_t, std::string_view> index_entry(std::string_view index, std::string_view indexed, std::size_t k);
std::size_t index_find(std::string_view index, rank_t rank);
// Every rank's RankInfo that decode_lazy kept, in either form, in order.
std::vector<std::pair<rank_t, std::string_view>> encoded_ranks(const job_info& job);
bool decode(std::string_view in, job_info& out, std::string* error = nullptr);
// As decode, but the ranks' items stay encoded (job_info::encoded): a process
// of a job of N ranks reads at its start only the job's own items, and a
// rank's when it is asked for (decode_rank_info), instead of every rank's
// (issue 40: 2,048 processes at once each decoded 2,048 ranks' items). The
// message is checked for form here as decode does, but for the items of
// each rank, which decode_rank_info checks when the rank is read.
bool decode_lazy(std::string_view in, job_info& out, std::string* error = nullptr);
// With a rank index (JobInfo.rank_index, docs/wire-format.md) the
// RankInfos are not read here at all, only the index and the other fields.
// The same without a copy: `owner` keeps the bytes of `in` (the mapping of
// the server's shared copy, or the string itself) as long as the job data
// is held. A copy of an N-rank job's data in each process was O(N) per
// process at PMIx_Init (2,048 processes: 0.8 ms of each one's CPU).
bool decode_lazy(std::string_view in, std::shared_ptr<const void> owner, job_info& out,
                 std::string* error = nullptr);
// The items of one RankInfo that decode_lazy kept (checked for form first,
// as protobuf would parse it).
bool decode_rank_info(std::string_view in, info_list& out, std::string* error = nullptr);
// The items a job's data derives for a rank from the node and proc maps,
// in the order the server writes them: PMIX_HOSTNAME (when the node map
// names its node), PMIX_NODEID, PMIX_LOCAL_RANK and PMIX_NODE_RANK (its
// place in its node's list), PMIX_GLOBAL_RANK, PMIX_APPNUM. A JobInfo holds
// no RankInfo for a rank of the proc map with nothing registered of its own
// that does not run on the server's node: its readers derive these.
info_list derived_rank_items(rank_t rank, const std::string* host, std::uint32_t node, std::uint32_t index);

// A status and an optional payload: StatusReply, FenceReply (`data`: a
// ModexData, empty when nothing was collected), GetReply (`data`: a RankData
// when present; `job`: a JobInfo, empty when absent).
struct status_reply {
  pmix_status_t status = 0;
  std::uint64_t shared = 0;  // FenceReply: the data is shared data of this size
  bool whole_namespace = false;  // FenceReply (protocol/pmix.proto)
  bool has_data = false;
  std::string_view data;
  std::string_view job;
};
bool decode(std::string_view in, body kind, status_reply& out, std::string* error = nullptr);
// How many bytes of shared data a frame's message says came with it (0:
// none), read before the frame is dispatched (client/connection.cpp).
std::uint64_t shared_size(body kind, std::string_view message);

// One rank's committed data: its items are left encoded (an Info each, whose
// structure decode() has checked) until the reader keeps them:
// decode_checked_info() reads one.
struct rank_data {
  proc_id proc;
  std::vector<std::pair<std::uint32_t, std::string_view>> items;  // scope, Info
};
bool decode(std::string_view in, rank_data& out, std::string* error = nullptr);
// Calls `each(const rank_data&)` for every RankData of a ModexData, as it
// reads them (one pass); stops (false) at the first one it cannot read or
// `each` refuses. The ranks before a malformed one have then been handed to
// `each`: the caller fails as a whole (a fence's PMIX_ERR_UNPACK_FAILURE).
template <class F>
bool for_each_rank(std::string_view modex, F&& each, std::string* error = nullptr);

bool decode_info(std::string_view in, info& out, std::string* error = nullptr);
// An Info of a decoded rank_data, whose structure is already checked.
bool decode_checked_info(std::string_view in, info& out, std::string* error = nullptr);
bool decode_value(std::string_view in, value& out, std::string* error = nullptr);

struct info_reply {
  pmix_status_t status = 0;
  info_list info;
  std::string data;  // a credential
};
bool decode(std::string_view in, info_reply& out, std::string* error = nullptr);

bool decode(std::string_view in, event& out, std::string* error = nullptr);

// IofData: output of a process this one pulled.
struct iof_data {
  std::uint64_t ref = 0;
  proc_id source;
  std::uint32_t channel = 0;
  std::string data;
  info_list info;
};
bool decode(std::string_view in, iof_data& out, std::string* error = nullptr);

struct lookup_reply {
  pmix_status_t status = 0;
  std::vector<pdata> data;
};
bool decode(std::string_view in, lookup_reply& out, std::string* error = nullptr);

struct spawn_reply {
  pmix_status_t status = 0;
  std::string nspace;
};
bool decode(std::string_view in, spawn_reply& out, std::string* error = nullptr);

// `jobs`: serialized JobInfo messages (decode each with decode(job_info)).
struct connect_procs_reply {
  pmix_status_t status = 0;
  std::vector<std::string_view> jobs;
};
bool decode(std::string_view in, connect_procs_reply& out, std::string* error = nullptr);

// ---- The server's reading of the two requests of every fence -----------------
//
// A client's commit and fence, read with this codec instead of the generated
// classes: the server's protobuf parse of the pair (an arena each, a message
// per field) was a fifth of its work per rank and fence (issue 40). Each
// reads only what protobuf reads the same way: a well formed Envelope with
// one body, a commit or a fence, in which no field that is not repeated comes
// twice (protobuf merges such occurrences, where this codec keeps the last).
// Anything else, and a value these readers refuse, is false: the server then
// parses the frame with protobuf as it does every other request, so what it
// accepts and refuses, and why, is unchanged (tests/fuzz server_envelope
// checks both readings agree on every input read here).
struct request {
  std::uint64_t id = 0;
  body kind = body::none;
  std::string_view message;
};
bool read_request(std::string_view payload, request& out);
// A commit's items (CommitRequest.data), read from a request's message.
bool read_commit(std::string_view message, std::vector<scoped_info>& out);
struct fence_request_data {
  std::vector<proc_id> procs;
  info_list info;
  bool collect_data = false;
  bool board_wait = false;
  bool board_request = false;
};
bool read_fence(std::string_view message, fence_request_data& out);

// ---- Internals of for_each_rank ---------------------------------------------
namespace detail {
// The next RankData of a ModexData from `pos` on: 1 found, 0 at the end, -1
// malformed. decode(rank_data) reads one and checks it as it goes.
int next_rank(std::string_view modex, std::size_t& pos, std::string_view& rank);
// What a RankData is about, read without checking or copying anything else:
// its process (`nspace` views the bytes) and whether it carries items. False
// if those fields cannot be read.
bool peek_rank(std::string_view rank, std::string_view& nspace, rank_t& number, bool& has_items);
}  // namespace detail

template <class F>
bool for_each_rank(std::string_view modex, F&& each, std::string* error) {
  std::size_t pos = 0;
  std::string_view bytes;
  rank_data r;
  for (;;) {
    const int got = detail::next_rank(modex, pos, bytes);
    if (got == 0) return true;
    if (got < 0) {
      if (error != nullptr) *error = "malformed fence data";
      return false;
    }
    r.items.clear();
    if (!decode(bytes, r, error) || !each(static_cast<const rank_data&>(r))) return false;
  }
}

}  // namespace pmix::protocol
