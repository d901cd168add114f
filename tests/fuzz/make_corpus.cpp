// Writes the fuzz targets' seed corpora (tests/fuzz/corpus/<target>/) from
// what the library itself writes: the client's request encoders, the
// server's job data (compute_layout + serialize_job_info) and fence data,
// PMIx_Data_pack, and the node/proc map generators. Small on purpose: a few
// inputs per message kind and value kind.
//
//   bazel run //tests/fuzz:make_corpus -- $PWD/tests/fuzz/corpus
#include <pmix.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "actors/job_layout.hpp"
#include "api/data_pack.hpp"
#include "common/regex/regex.hpp"
#include "common/value.hpp"
#include "protocol/codec.hpp"
#include "protocol/direct.hpp"
#include "protocol/framing.hpp"
#include "protocol/messages.hpp"

using namespace pmix;

namespace {

std::string root;
std::size_t files = 0, bytes = 0;

void write(const std::string& target, const std::string& name, const std::string& data) {
  const std::string dir = root + "/" + target;
  ::mkdir(root.c_str(), 0755);
  ::mkdir(dir.c_str(), 0755);
  std::ofstream out(dir + "/" + name, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  ++files;
  bytes += data.size();
}

value info_value(std::string key, value v, std::uint32_t flags = 0) {
  return value{PMIX_INFO, std::make_shared<const info>(info{std::move(key), std::move(v), flags})};
}

// One value of every kind the wire carries, with a few edge cases.
std::vector<value> sample_values() {
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  proc_info_value pi;
  pi.proc = proc_id{"job-7", 3};
  pi.hostname = "node001";
  pi.executable = "/bin/a.out";
  pi.pid = 4242;
  pi.exit_code = -9;
  pi.state = 4;
  auto inner = value::array(array_value{PMIX_UINT32, {value::unsigned_(PMIX_UINT32, 0), value::unsigned_(PMIX_UINT32, 9)}});
  auto infos = value::array(array_value{
      PMIX_INFO, {info_value(PMIX_RANK, value::unsigned_(PMIX_PROC_RANK, 5)), info_value("k", inner, PMIX_INFO_REQD)}});
  return {
      value{},
      value::boolean(true),
      value::integer(PMIX_INT32, -1),
      value::integer(PMIX_INT64, std::numeric_limits<std::int64_t>::min()),
      value::integer(PMIX_STATUS, PMIX_ERR_NOT_FOUND),
      value::unsigned_(PMIX_UINT8, 200),
      value::unsigned_(PMIX_UINT64, std::numeric_limits<std::uint64_t>::max()),
      value::unsigned_(PMIX_PROC_RANK, rank_wildcard),
      value::unsigned_(PMIX_DATA_RANGE, PMIX_RANGE_NAMESPACE),
      value::real(PMIX_DOUBLE, -2.5),
      value::real(PMIX_FLOAT, 0.5),
      value::string("hello"),
      value::bytes(PMIX_BYTE_OBJECT, all),
      value{PMIX_STRING, std::monostate{}},  // a NULL string
      value::bytes(PMIX_PROC_NSPACE, "job-7"),
      value::bytes(PMIX_REGEX, "pmix[n[1-4]]"),
      value::proc(proc_id{"job-7", 12}),
      value{PMIX_TIMEVAL, timeval_value{1700000000, 999999}},
      value{PMIX_ENVAR, std::make_shared<const envar_value>(envar_value{"PATH", "/usr/bin", ':'})},
      value{PMIX_PROC_INFO, std::make_shared<const proc_info_value>(pi)},
      inner,
      infos,
      value::array(array_value{PMIX_VALUE, {value{}, inner, value::string("s")}}),
      value::array(array_value{PMIX_DATA_ARRAY, {inner, value::array(array_value{PMIX_BOOL, {value::boolean(false)}})}}),
      value::array(array_value{PMIX_PROC, {value::proc(proc_id{"a", 0}), value::proc(proc_id{"b", 1})}}),
      value::array(array_value{PMIX_STRING, {value::string("x"), value::string("")}}),
  };
}

info_list sample_infos() {
  info_list out;
  int k = 0;
  for (auto& v : sample_values()) out.push_back(info{"key." + std::to_string(k++), std::move(v), 0});
  out.push_back(info{PMIX_COLLECT_DATA, value::boolean(true), PMIX_INFO_REQD});
  return out;
}

// ---- framing -----------------------------------------------------------------

void framing() {
  const std::string connect =
      protocol::connect_request(1, protocol::role::client, proc_id{"job-7", 0}, 4242, "pmix-cxx", {});
  const std::string fence = protocol::fence_request({proc_id{"job-7", rank_wildcard}}, {}, true);
  std::string stream;
  stream += protocol::to_frame(1, protocol::body::connect, connect);
  stream += protocol::to_frame(2, protocol::body::fence, fence);
  stream += protocol::to_frame(0, protocol::body::commit, protocol::commit_request({}));
  // [limits][chunking] + stream: 1 MiB then 64 MiB, raised after the first frame.
  write("framing", "connect_fence_commit", std::string{"\x7e\x05", 2} + stream);
  write("framing", "small_limit_bytewise", std::string{"\x03\x00", 2} + stream);
  write("framing", "whole_reads", std::string{"\x47\x80", 2} + stream);
  std::string empty_frames;
  protocol::append_frame(empty_frames, "");
  protocol::append_frame(empty_frames, "x");
  write("framing", "empty_frames", std::string{"\x02\x01", 2} + empty_frames);
  write("framing", "oversized_header", std::string{"\x05\x03\x7f\xff\xff\xff", 6} + "abc");
}

// ---- server_envelope -----------------------------------------------------------

std::string envelope(protocol::body kind, const std::string& message) {
  std::string frame = protocol::to_frame(7, kind, message);
  return frame.substr(protocol::frame_header_size);
}

void server_envelope() {
  const auto infos = sample_infos();
  const proc_id me{"job-7", 1};
  write("server_envelope", "connect",
        envelope(protocol::body::connect, protocol::connect_request(1, protocol::role::tool, me, 99, "v", infos)));
  std::vector<protocol::scoped_info> committed;
  std::uint32_t scope = PMIX_LOCAL;
  for (const auto& i : infos) committed.push_back({scope++ % 4 + 1, i});
  write("server_envelope", "commit", envelope(protocol::body::commit, protocol::commit_request(committed)));
  write("server_envelope", "fence",
        envelope(protocol::body::fence, protocol::fence_request({me, proc_id{"job-7", rank_wildcard}}, infos, true)));
  write("server_envelope", "get", envelope(protocol::body::get, protocol::get_request(me, "key.1", infos)));
  write("server_envelope", "abort", envelope(protocol::body::abort, protocol::abort_request(-7, "boom", {me})));
  write("server_envelope", "finalize", envelope(protocol::body::finalize, protocol::finalize_request({})));
  write("server_envelope", "job_control",
        envelope(protocol::body::job_control, protocol::job_control_request({me}, infos)));
  write("server_envelope", "query",
        envelope(protocol::body::query, protocol::query_request({query{{"a", "b"}, infos}, query{{"c"}, {}}})));
  event ev{PMIX_ERR_PROC_ABORTED, me, PMIX_RANGE_CUSTOM,
           {info{PMIX_EVENT_CUSTOM_RANGE, value::array(array_value{PMIX_PROC, {value::proc(me)}}), 0}}};
  write("server_envelope", "notify", envelope(protocol::body::notify, protocol::event_message(ev)));
  write("server_envelope", "publish", envelope(protocol::body::publish, protocol::publish_request(infos)));
  write("server_envelope", "lookup", envelope(protocol::body::lookup, protocol::keys_request({"k1", "k2"}, infos)));
  write("server_envelope", "unpublish", envelope(protocol::body::unpublish, protocol::keys_request({}, {})));
  app a;
  a.cmd = "/bin/true";
  a.argv = {"true", "-x"};
  a.env = {"A=1"};
  a.cwd = "/tmp";
  a.maxprocs = 2;
  a.info = {infos[2], infos[11]};
  write("server_envelope", "spawn", envelope(protocol::body::spawn, protocol::spawn_request(infos, {a, a})));
  write("server_envelope", "connect_procs",
        envelope(protocol::body::connect_procs, protocol::connect_procs_request({me}, infos, false)));
  write("server_envelope", "log", envelope(protocol::body::log, protocol::log_request(infos, infos)));
}

// ---- client_reply ----------------------------------------------------------------

// The job data a client receives, from the server's own code: a 2-node job
// of 4 ranks registered with maps, local peers and per-rank data.
std::string job_blob(const std::string& nspace) {
  info_list reg{
      {PMIX_NODE_MAP, value::string(regex::generate_node_map("node01,node02").value()), 0},
      {PMIX_PROC_MAP, value::string(regex::generate_proc_map("0,1;2,3").value()), 0},
      {PMIX_JOB_SIZE, value::unsigned_(PMIX_UINT32, 4), 0},
      {"custom.job.key", value::string("job-level"), 0},
  };
  for (rank_t r = 0; r < 4; ++r)
    reg.push_back({PMIX_PROC_DATA,
                   value::array(array_value{PMIX_INFO,
                                            {info_value(PMIX_RANK, value::unsigned_(PMIX_PROC_RANK, r)),
                                             info_value(PMIX_LOCALITY_STRING, value::string("SK0:L3-0"))}}),
                   0});
  actors::job_layout layout;
  std::string error;
  if (actors::compute_layout(reg, 2, "node01", layout, error) != PMIX_SUCCESS) {
    std::fprintf(stderr, "compute_layout: %s\n", error.c_str());
    std::exit(1);
  }
  return actors::serialize_job_info(nspace, std::move(layout), "node01");
}

// A rank's committed data as the server serves it (peer_state::rank_blob).
std::string rank_blob(const proc_id& p, const info_list& items) {
  wire::RankData data;
  protocol::to_wire(p, data.mutable_proc());
  std::uint32_t scope = 1;
  for (const auto& i : items) {
    auto* s = data.add_data();
    s->set_scope(scope++ % 4);
    protocol::to_wire(i, s->mutable_info());
  }
  return data.SerializeAsString();
}

void client_reply() {
  const auto infos = sample_infos();
  wire::Envelope connect;
  connect.set_id(1);
  auto* cr = connect.mutable_connect_reply();
  cr->set_status(PMIX_SUCCESS);
  protocol::to_wire(proc_id{"server", 0}, cr->mutable_server());
  cr->set_job(job_blob("job-7"));
  protocol::to_wire(proc_id{"job-7", 1}, cr->mutable_assigned());
  const std::string hello = protocol::to_frame(connect);
  write("client_reply", "connect", hello);

  // A collecting fence: every rank's data, concatenated as the server does.
  std::string modex;
  for (rank_t r = 0; r < 4; ++r)
    protocol::append_length_delimited(modex, 1, rank_blob(proc_id{"job-7", r}, {infos[r], infos[r + 10]}));
  const std::string fence = protocol::to_frame(2, protocol::body::fence_reply, protocol::fence_reply(PMIX_SUCCESS, modex));
  write("client_reply", "connect_fence", hello + fence);

  wire::Envelope get;
  get.set_id(3);
  get.mutable_get_reply()->set_status(PMIX_SUCCESS);
  get.mutable_get_reply()->mutable_data()->ParseFromString(rank_blob(proc_id{"job-7", 2}, infos));
  get.mutable_get_reply()->set_job(job_blob("job-9"));
  write("client_reply", "connect_get", hello + protocol::to_frame(get));

  wire::Envelope info;
  info.set_id(4);
  info.mutable_info_reply()->set_status(PMIX_SUCCESS);
  protocol::to_wire(infos, info.mutable_info_reply()->mutable_info());
  const event ev{PMIX_ERR_PROC_ABORTED, proc_id{"job-7", 3}, PMIX_RANGE_NAMESPACE, infos};
  const std::string event_frame = protocol::to_frame(0, protocol::body::event, protocol::event_message(ev));
  write("client_reply", "connect_info_event", hello + protocol::to_frame(info) + event_frame);

  wire::Envelope lookup;
  lookup.set_id(5);
  lookup.mutable_lookup_reply()->set_status(PMIX_SUCCESS);
  for (std::size_t k = 0; k < 4; ++k)
    protocol::to_wire(pdata{proc_id{"job-7", 0}, infos[k * 5].key, infos[k * 5].val}, lookup.mutable_lookup_reply()->add_data());
  wire::Envelope spawn;
  spawn.set_id(6);
  spawn.mutable_spawn_reply()->set_status(PMIX_SUCCESS);
  spawn.mutable_spawn_reply()->set_nspace("job-9");
  std::string jobs;
  protocol::append_length_delimited(jobs, 2, job_blob("job-9"));
  const std::string procs_reply = protocol::to_frame(
      7, protocol::body::connect_procs_reply, protocol::connect_procs_reply_body(PMIX_SUCCESS, jobs));
  wire::Envelope status;
  status.set_id(8);
  status.mutable_status_reply()->set_status(PMIX_ERR_NOT_SUPPORTED);
  write("client_reply", "connect_lookup_spawn_connect",
        hello + protocol::to_frame(lookup) + protocol::to_frame(spawn) + procs_reply + protocol::to_frame(status));
}

// ---- data_unpack -------------------------------------------------------------------

void data_unpack() {
  // [type][max][flags] + records, as PMIx_Data_pack writes them.
  auto with_prefix = [](data_type t, int max, int flags, const std::string& records) {
    return std::string{static_cast<char>(t), static_cast<char>(max - 1), static_cast<char>(flags)} + records;
  };
  const auto values = sample_values();
  write("data_unpack", "all_values", with_prefix(PMIX_VALUE, 4, 1, pack::records(values)));
  for (std::size_t k = 0; k < values.size(); ++k) {
    const auto t = values[k].type;
    // A record of each type, unpacked as that type, twice in a row.
    write("data_unpack", "type_" + std::to_string(t) + "_" + std::to_string(k),
          with_prefix(t, 2, 0, pack::records({values[k], values[k]})));
  }
  // Through the C API: strings and ranks packed from C arrays.
  pmix_data_buffer_t b;
  PMIX_DATA_BUFFER_CONSTRUCT(&b);
  char* strings[] = {const_cast<char*>("alpha"), const_cast<char*>("beta")};
  PMIx_Data_pack(nullptr, &b, strings, 2, PMIX_STRING);
  pmix_rank_t ranks[] = {0, 7, PMIX_RANK_WILDCARD};
  PMIx_Data_pack(nullptr, &b, ranks, 3, PMIX_PROC_RANK);
  write("data_unpack", "c_strings_ranks", with_prefix(PMIX_STRING, 2, 0, std::string{b.base_ptr, b.bytes_used}));
  PMIX_DATA_BUFFER_DESTRUCT(&b);
  // PMIx_server_collect_job_info's layout: a namespace, then a byte object
  // of a PMIX_SIZE count and that many PMIX_INFO records.
  std::vector<value> payload{value::unsigned_(PMIX_SIZE, 3)};
  payload.push_back(info_value(PMIX_JOB_SIZE, value::unsigned_(PMIX_UINT32, 4)));
  payload.push_back(info_value(PMIX_NODE_MAP, value::string("pmix[node[2:1-2]]")));
  payload.push_back(info_value(
      PMIX_PROC_DATA, value::array(array_value{PMIX_INFO,
                                               {info_value(PMIX_RANK, value::unsigned_(PMIX_PROC_RANK, 0)),
                                                info_value(PMIX_HOSTNAME, value::string("node01"))}})));
  write("data_unpack", "collect_job_info",
        with_prefix(PMIX_STRING, 1, 1,
                    pack::records({value::string("job-7"), value::bytes(PMIX_BYTE_OBJECT, pack::records(payload))})));
}

// ---- regex ----------------------------------------------------------------------------

void regex_corpus() {
  // [flags] node map \0 proc map \0 local peers; flags 0x01: build the layout.
  struct sample {
    const char* name;
    unsigned flags;
    std::string nodes, procs, peers;
  };
  const std::vector<sample> samples{
      {"raw_lists", 0x31, "node01,node02,node03,node10,login,c1-n007,c1-n008", "0,1,2,3;4-7;8,10,12;13;14;15;16", ""},
      {"doc_examples", 0x11, "n9,n10,n11", "0-3;4-7;8-11", "4,5,6,7"},
      {"compact", 0x13, regex::generate_node_map("r1n1-ib,r1n2-ib,a[1],b c").value(),
       regex::generate_proc_map("0;;1;2").value(), ""},
      {"cyclic", 0x59, regex::generate_node_map("n1,n2,n3,n4").value(), "pmix[0-12/4*4+1]", ""},
      {"descending", 0x01, "pmix[n[3-1,1]]", "pmix[9-7*4-3]", "pmix[*1]"},
      {"padded", 0x15, "pmix[node[3:7-12],x%2Cy]", "pmix[0-3*2+4]", ""},
      {"empty", 0x01, "", "pmix[]", ""},
      {"single_host", 0x41, "", "0-3", "0,1,2,3"},
  };
  for (const auto& s : samples) {
    std::string input(1, static_cast<char>(s.flags));
    input += s.nodes;
    input += '\0';
    input += s.procs;
    if (!s.peers.empty()) {
      input += '\0';
      input += s.peers;
    }
    write("regex", s.name, input);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  root = argv[1];
  framing();
  server_envelope();
  client_reply();
  data_unpack();
  regex_corpus();
  std::printf("%zu files, %zu bytes in %s\n", files, bytes, root.c_str());
  return 0;
}
