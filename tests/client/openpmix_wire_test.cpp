// The client's side of OpenPMIx's protocol (client/openpmix_wire.hpp),
// checked against bytes OpenPMIx 4.2.2 itself wrote and read: its client's
// requests and its servers' answers (mpirun 4.1.4, Slurm 22.05, a host of
// its own), captured between Debian's libraries and kept as the seeds of the
// openpmix_client fuzz target (tests/fuzz/corpus/openpmix_client: a byte
// saying what follows, then the payload).
#include <doctest/doctest.h>
#include <pmix_common.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include "client/openpmix_wire.hpp"
#include "client/store.hpp"

using namespace pmix;
namespace wire = pmix::client::openpmix_wire;
using openpmix::buffer_type;

namespace {

std::string seed(const std::string& name) {
  std::ifstream in("tests/fuzz/corpus/openpmix_client/" + name, std::ios::binary);
  REQUIRE(in);
  std::string all{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  REQUIRE(all.size() > 1);
  return all.substr(1);
}

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string text(const value* v) { return v != nullptr && v->as_string() != nullptr ? *v->as_string() : "<none>"; }
std::uint64_t number(const value* v) { return v != nullptr ? v->as_uint().value_or(999) : 999; }

protocol::job_info job_of(const std::string& payload, const proc_id& self) {
  openpmix::reader r{payload, buffer_type::non_desc};
  std::string nspace, error;
  REQUIRE(r.string(nspace));
  protocol::job_info job;
  REQUIRE_MESSAGE(wire::read_job(r, nspace, proc_id{nspace, self.rank}, "vm", job, error), error);
  return job;
}

}  // namespace

TEST_SUITE("OpenPMIx's protocol, the client's side") {
  TEST_CASE("[issue 36] the handshake is a 4.2.2 client's, announcing the hash store") {
    // Captured: "native", a credential of 8 bytes (uid, gid in host order),
    // a client (0), testns rank 1, 4.2.2rc2, v41, NON_DESC, hash, one more
    // byte. We announce 4.2.2.
    std::string expected = std::string{"native\0", 7} + std::string{"\0\0\0\x08", 4};
    const std::uint32_t uid = ::geteuid(), gid = ::getegid();
    expected.append(reinterpret_cast<const char*>(&uid), 4).append(reinterpret_cast<const char*>(&gid), 4);
    expected += std::string{"\0testns\0\0\0\0\x01", 12} + std::string{"4.2.2\0v41\0\x01hash\0\0", 17};
    CHECK(hex(wire::handshake("native", buffer_type::non_desc, false, proc_id{"testns", 1}, {})) == hex(expected));
    CHECK(wire::security_module("none,native") == "none");
    CHECK(wire::security_module("munge,native") == "native");
    CHECK(wire::security_module(nullptr) == "native");
    CHECK(wire::buffer_from_env("PMIX_BFROP_BUFFER_FULLY_DESC") == buffer_type::fully_desc);
    CHECK(wire::buffer_from_env("PMIX_BFROP_BUFFER_NON_DESC") == buffer_type::non_desc);
    proc_id server;
    REQUIRE(wire::server_of("pmix-server.4704;tcp4://127.0.0.1:34505", server));
    CHECK(server == proc_id{"pmix-server", 4704});
    CHECK(wire::major_of("4.2.2rc2") == 4);
    CHECK(wire::major_of("v5.0.11") == 5);
  }

  TEST_CASE("[issue 36] requests byte for byte as OpenPMIx's client writes them: commit, fence, get") {
    const std::vector<protocol::scoped_info> puts{
        {PMIX_GLOBAL, info{"kglob", value::string("glob-0"), 0}},
        {PMIX_LOCAL, info{"kloc", value::unsigned_(PMIX_UINT32, 1000), 0}},
        {PMIX_REMOTE, info{"krem", value::unsigned_(PMIX_UINT64, 2000), 0}},
    };
    std::string commit, key;
    REQUIRE(wire::commit(buffer_type::non_desc, puts, commit, key));
    CHECK(hex(commit) ==
          "0202" "0201" "02011b" "020c6b676c6f6200030e676c6f622d3000" "020a6b6c6f63000ee807"
          "0202" "02011b" "020c6b676c6f6200030e676c6f622d3000" "020a6b72656d000fd00f");
    const auto fence = wire::fence(buffer_type::non_desc, {proc_id{"testns", rank_wildcard}},
                                   {info{PMIX_COLLECT_DATA, value::boolean(true), 0}});
    CHECK(hex(fence) == "0203" "0201" "020e746573746e7300feffffff0f" "0201" "021a706d69782e636f6c6c656374" "0000" "0101");
    CHECK(hex(wire::get(buffer_type::non_desc, proc_id{"1446182913", 1}, {}, "kglob")) ==
          "0204" "02163134343631383239313300" "0201" "0200" "020c6b676c6f6200");
    // Codes of an events registration go in one pack.
    CHECK(hex(wire::register_events(buffer_type::non_desc, {-145})) == "020d" "0201" "02a102" "0200");
  }

  TEST_CASE("[issue 36] mpirun's job data: job keys, the session's and this node's arrays flattened, each rank's blob") {
    const auto job = job_of(seed("job_mpirun"), proc_id{"", 0});
    client::store s;
    const std::string ns = job.nspace;
    CHECK(ns == "1446182913");
    CHECK(job.ranks.size() == 2);
    s.load_job(protocol::job_info{job});
    CHECK(number(s.job_value(ns, PMIX_JOB_SIZE)) == 2);
    CHECK(number(s.job_value(ns, PMIX_UNIV_SIZE)) == 2);     // from pmix.ssn.arr
    CHECK(text(s.job_value(ns, PMIX_LOCAL_PEERS)) == "0,1");  // from this node's pmix.node.arr
    CHECK(number(s.job_value(ns, PMIX_LOCAL_SIZE)) == 2);
    CHECK(text(s.job_value(ns, PMIX_NODE_LIST)) == "vm");
    CHECK(s.local_ranks(ns).size() == 2);
    CHECK(text(s.rank_value(proc_id{ns, 1}, PMIX_HOSTNAME)) == "vm");
    CHECK(number(s.rank_value(proc_id{ns, 1}, PMIX_LOCAL_RANK)) == 1);
    CHECK(number(s.rank_value(proc_id{ns, 0}, PMIX_GLOBAL_RANK)) == 0);
  }

  TEST_CASE("[issue 36] Slurm's job data: its integer types (INT appnum, UINT32 ranks) and 7 kB of topology") {
    const auto job = job_of(seed("job_slurm"), proc_id{"", 1});
    client::store s;
    const std::string ns = job.nspace;
    CHECK(ns == "slurm.pmix.1.0");
    s.load_job(protocol::job_info{job});
    CHECK(number(s.job_value(ns, PMIX_JOB_SIZE)) == 2);
    CHECK(text(s.job_value(ns, PMIX_TMPDIR)) == "/tmp");  // in the session array
    CHECK(number(s.rank_value(proc_id{ns, 1}, PMIX_APPNUM)) == 0);
    CHECK(number(s.rank_value(proc_id{ns, 1}, PMIX_GLOBAL_RANK)) == 1);
    CHECK(text(s.job_value(ns, "pmix.ltopo")).size() > 5000);
  }

  TEST_CASE("[issue 36] an event, output, and a get's answer with another namespace's job data") {
    event ev;
    std::string error;
    REQUIRE_MESSAGE(wire::read_event(seed("event_live"), buffer_type::non_desc, ev, error), error);
    CHECK(ev.status == -145);
    CHECK(ev.source == proc_id{"UNDEF", rank_undef});
    CHECK(ev.range == PMIX_RANGE_SESSION);
    REQUIRE(ev.info.size() == 1);
    CHECK(text(&ev.info[0].val) == "live-event");
    protocol::iof_data out;
    REQUIRE_MESSAGE(wire::read_output(seed("output"), buffer_type::non_desc, out, error), error);
    CHECK(out.source == proc_id{"testns", 3});
    CHECK(out.channel == PMIX_FWD_STDOUT_CHANNEL);
    CHECK(out.ref == 1);
    CHECK(out.data == "iof-data\n");
    // otherns:0's kglob, served by the host's direct modex: first the
    // namespace's job data (the wildcard), then the rank's.
    const auto reply = seed("get_reply_0");
    openpmix::reader r{reply, buffer_type::non_desc};
    std::int32_t status = -1;
    REQUIRE(r.status(status));
    CHECK(status == PMIX_SUCCESS);
    std::vector<std::pair<proc_id, info_list>> data;
    REQUIRE_MESSAGE(wire::read_data(r, 7, data, error), error);
    REQUIRE(data.size() == 2);
    CHECK(data[0].first == proc_id{"otherns", rank_wildcard});
    CHECK(data[1].first == proc_id{"otherns", 0});
    REQUIRE(find(data[1].second, "kglob") != nullptr);
    CHECK(text(&find(data[1].second, "kglob")->val) == "glob-0");
  }

  TEST_CASE("[issue 36] what does not read fails with a reason, and reads nothing past the end") {
    auto job = seed("job_mpirun");
    for (std::size_t cut : {job.size() - 1, job.size() / 2, std::size_t{20}}) {
      openpmix::reader r{std::string_view{job}.substr(0, cut), buffer_type::non_desc};
      std::string nspace, error;
      protocol::job_info out;
      REQUIRE(r.string(nspace));
      CHECK_FALSE(wire::read_job(r, nspace, proc_id{nspace, 0}, "vm", out, error));
      CHECK_FALSE(error.empty());
    }
    event ev;
    std::string error;
    CHECK_FALSE(wire::read_event(std::string{"\x02\x0c\x02", 3}, buffer_type::non_desc, ev, error));
    CHECK_FALSE(error.empty());
  }
}
