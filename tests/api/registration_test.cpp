// PMIx_server_register_nspace's fast path (server/registration.hpp), which
// writes the host's PMIX_PROC_DATA arrays straight into wire form, gives the
// same result as the value path (convert::from_c, then the layout encoding
// each item): the same client blob (what collect_job_info hands to a peer
// server, too), the same per-rank items, the same refusals, for plain and
// unusual registrations.
#include "server/registration.hpp"

#include <doctest/doctest.h>
#include <pmix.h>

#include <cstring>
#include <string>
#include <vector>

#include "actors/job_layout.hpp"
#include "api/convert.hpp"

using pmix::actors::encoded_registration;
using pmix::actors::job_layout;

namespace {

// The host's info array, built with the C API's own loaders and freed with it.
struct c_infos {
  std::vector<pmix_info_t> v;
  ~c_infos() {
    for (auto& i : v) PMIx_Value_destruct(&i.value);
  }
  template <class T>
  c_infos& add(const char* key, const T* data, pmix_data_type_t t, pmix_info_directives_t flags = 0) {
    v.emplace_back();
    PMIx_Info_load(&v.back(), key, data, t);
    v.back().flags = flags;
    return *this;
  }
  c_infos& str(const char* key, const char* s) { return add(key, s, PMIX_STRING); }
  // A PMIX_PROC_DATA entry holding `items` (copied; `items` keeps its own).
  c_infos& proc_data(c_infos& items, pmix_info_directives_t flags = 0) {
    pmix_data_array_t a;
    a.type = PMIX_INFO;
    a.size = items.v.size();
    a.array = items.v.data();
    return add(PMIX_PROC_DATA, &a, PMIX_DATA_ARRAY, flags);
  }
};

struct outcome {
  pmix_status_t rc = PMIX_SUCCESS;
  std::string blob, error;
  std::vector<pmix::info_list> per_rank;
};

outcome finish(pmix_status_t rc, encoded_registration& reg, int nlocal) {
  outcome o;
  o.rc = rc;
  if (rc != PMIX_SUCCESS) return o;
  job_layout l;
  o.rc = pmix::actors::compute_layout(reg, nlocal, "node0", l, o.error);
  if (o.rc != PMIX_SUCCESS) return o;
  for (pmix_rank_t r = 0; r < 40; ++r) o.per_rank.push_back(l.rank_info(r));
  o.blob = pmix::actors::serialize_job_info("job", l, "node0");
  return o;
}

outcome fast(const c_infos& in, int nlocal) {
  encoded_registration reg;
  const auto rc = pmix::registration::from_c(in.v.data(), in.v.size(), reg);
  return finish(rc, reg, nlocal);
}

outcome by_values(const c_infos& in, int nlocal) {
  pmix::info_list list;
  const auto rc = pmix::convert::from_c(in.v.data(), in.v.size(), list);
  encoded_registration reg{std::move(list)};
  return finish(rc, reg, nlocal);
}

bool same_items(const pmix::info_list& a, const pmix::info_list& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (a[k].key != b[k].key || a[k].flags != b[k].flags || a[k].val.type != b[k].val.type) return false;
  return true;
}

void check_same(const c_infos& in, int nlocal) {
  const auto a = fast(in, nlocal), b = by_values(in, nlocal);
  CHECK(a.rc == b.rc);
  CHECK(a.error == b.error);
  CHECK(a.blob == b.blob);
  REQUIRE(a.per_rank.size() == b.per_rank.size());
  for (std::size_t r = 0; r < a.per_rank.size(); ++r) CHECK_MESSAGE(same_items(a.per_rank[r], b.per_rank[r]), "rank ", r);
}

// Rank r's items as a resource manager registers them.
void rank_items(c_infos& items, pmix_rank_t r) {
  const std::uint16_t lr = static_cast<std::uint16_t>(r % 8);
  const std::uint32_t node = r / 8;
  const std::string host = "node" + std::to_string(node);
  items.add(PMIX_RANK, &r, PMIX_PROC_RANK).add(PMIX_LOCAL_RANK, &lr, PMIX_UINT16).add(PMIX_NODE_RANK, &lr, PMIX_UINT16);
  items.add(PMIX_NODEID, &node, PMIX_UINT32).str(PMIX_HOSTNAME, host.c_str());
}

}  // namespace

TEST_CASE("[register] a resource manager's registration: same bytes both ways, and the fast path is taken") {
  c_infos in;
  const std::uint32_t size = 32;
  in.add(PMIX_JOB_SIZE, &size, PMIX_UINT32).str(PMIX_NODE_MAP, "node0,node1,node2,node3");
  std::vector<c_infos> items(size);
  for (pmix_rank_t r = 0; r < size; ++r) {
    rank_items(items[r], r);
    in.proc_data(items[r]);
    if (r == 10) in.str(PMIX_PROC_MAP, "0-7;8-15;16-23;24-31");  // job info between the ranks
  }
  check_same(in, 8);
  encoded_registration reg;
  REQUIRE(pmix::registration::from_c(in.v.data(), in.v.size(), reg) == PMIX_SUCCESS);
  CHECK(reg.ranks.size() == size);      // written straight, not kept as values
  CHECK(reg.job.size() == 3);           // the job-level info only
  CHECK(!reg.rank_bytes.empty());
  CHECK(reg.ranks[3].given != 0);       // the host gave PMIX_HOSTNAME etc. itself
}

TEST_CASE("[register] unusual items: every kind of value, flags, long keys, a rank twice, a signed rank") {
  c_infos in;
  c_infos a, b, c;
  const pmix_rank_t r0 = 0;
  const int r1 = 1;  // a rank as PMIX_INT is accepted
  pmix_byte_object_t bo{const_cast<char*>("b\0y"), 3};
  std::uint32_t nums[3] = {0, 7, 4000000000u};
  pmix_data_array_t arr{PMIX_UINT32, 3, nums};
  pmix_envar_t env{const_cast<char*>("PATH"), const_cast<char*>("/bin"), ':'};
  pmix_proc_t proc;
  PMIX_LOAD_PROCID(&proc, "other.job", 4);
  const double d = -0.5;
  const bool t = true, f = false;
  const std::int64_t neg = -42;
  char long_key[PMIX_MAX_KEYLEN + 1];
  std::memset(long_key, 'k', PMIX_MAX_KEYLEN);
  long_key[PMIX_MAX_KEYLEN] = '\0';
  a.add(PMIX_RANK, &r0, PMIX_PROC_RANK).add("app.bytes", &bo, PMIX_BYTE_OBJECT, PMIX_INFO_REQD);
  a.add("app.array", &arr, PMIX_DATA_ARRAY).add("app.env", &env, PMIX_ENVAR).add("app.proc", &proc, PMIX_PROC);
  a.add("app.d", &d, PMIX_DOUBLE).add("app.t", &t, PMIX_BOOL).add("app.f", &f, PMIX_BOOL).add("app.neg", &neg, PMIX_INT64);
  a.str(long_key, "").str(PMIX_GLOBAL_RANK, "given");
  b.add(PMIX_RANK, &r1, PMIX_INT).str(PMIX_APPNUM, "x");
  c.add(PMIX_RANK, &r0, PMIX_PROC_RANK).str("app.second", "adds to rank 0");
  in.proc_data(a, PMIX_INFO_REQD).proc_data(b).str("job.key", "v").proc_data(c);
  check_same(in, 2);
  encoded_registration reg;
  REQUIRE(pmix::registration::from_c(in.v.data(), in.v.size(), reg) == PMIX_SUCCESS);
  CHECK(reg.ranks.size() == 3);
}

TEST_CASE("[register] a PMIX_PROC_DATA of another form: all by values, refused the same way") {
  SUBCASE("not led by PMIX_RANK") {
    c_infos in, good, bad;
    rank_items(good, 0);
    bad.str(PMIX_HOSTNAME, "h");
    in.proc_data(good).proc_data(bad);
    check_same(in, 1);
    encoded_registration reg;
    REQUIRE(pmix::registration::from_c(in.v.data(), in.v.size(), reg) == PMIX_SUCCESS);
    CHECK(reg.ranks.empty());  // nothing taken the fast way
    CHECK(fast(in, 1).rc == PMIX_ERR_BAD_PARAM);
  }
  SUBCASE("the wildcard rank") {
    c_infos in, bad;
    const pmix_rank_t w = PMIX_RANK_WILDCARD;
    bad.add(PMIX_RANK, &w, PMIX_PROC_RANK);
    in.proc_data(bad);
    check_same(in, 1);
    CHECK(fast(in, 1).rc == PMIX_ERR_BAD_PARAM);
  }
  SUBCASE("not an array") {
    c_infos in;
    in.str(PMIX_PROC_DATA, "rank 1");
    check_same(in, 1);
  }
  SUBCASE("an empty array") {
    c_infos in, none;
    in.proc_data(none);
    check_same(in, 1);
    CHECK(fast(in, 1).rc == PMIX_ERR_BAD_PARAM);
  }
}

TEST_CASE("[register] an item that cannot be copied fails the call as the value path does") {
  c_infos in, items;
  rank_items(items, 0);
  in.proc_data(items);
  // A PMIX_PROC_DATA item of a type the library cannot copy (a query).
  pmix_query_t q;
  std::memset(&q, 0, sizeof q);
  auto* arr = in.v.back().value.data.darray;
  auto* its = static_cast<pmix_info_t*>(arr->array);
  PMIx_Value_destruct(&its[4].value);
  its[4].value.type = PMIX_QUERY;
  its[4].value.data.ptr = &q;
  const auto a = fast(in, 1), b = by_values(in, 1);
  CHECK(a.rc != PMIX_SUCCESS);
  CHECK(a.rc == b.rc);
  its[4].value.type = PMIX_UNDEF;  // not ours to free
  its[4].value.data.ptr = nullptr;
}

TEST_CASE("[register] a NULL array with entries is a bad parameter") {
  encoded_registration reg;
  CHECK(pmix::registration::from_c(nullptr, 3, reg) == PMIX_ERR_BAD_PARAM);
  CHECK(pmix::registration::from_c(nullptr, 0, reg) == PMIX_SUCCESS);
}
