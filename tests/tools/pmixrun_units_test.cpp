// pmixrun's host logic without a server: the data store's contracts
// (tools/pmixrun/datastore.hpp), up-calls called directly as a library
// would, their tasks run on this thread (connect/disconnect, which a
// one-node PMIx library never makes: OpenPMIx and ours complete them
// locally; log; tool_connected; query without jobs, whose answers with jobs
// cli_test.sh checks; group, which a one-node library does not make either;
// iof_pull and push_stdin without jobs, whose answers with jobs
// pmixrun_requests_test.sh checks), and the output and input forwarders
// (tools/pmixrun/iof.hpp, stdin.hpp) on pipes of the test's.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <pmix.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tools/pmixrun/datastore.hpp"
#include "tools/pmixrun/host_thread.hpp"
#include "tools/pmixrun/info.hpp"
#include "tools/pmixrun/iof.hpp"
#include "tools/pmixrun/stdin.hpp"
#include "tools/pmixrun/upcalls.hpp"

using pmixrun::datastore;
using pmixrun::make_proc;

namespace {

// What a lookup callback received.
struct lookup_result {
  bool called = false;
  pmix_status_t status = PMIX_SUCCESS;
  std::vector<std::pair<std::string, std::string>> found;  // key, "nspace:rank=value"
};

void on_lookup(pmix_status_t status, pmix_pdata_t data[], size_t ndata, void* cbdata) {
  auto* r = static_cast<lookup_result*>(cbdata);
  r->called = true;
  r->status = status;
  for (size_t k = 0; k < ndata; ++k) {
    std::string v = data[k].value.type == PMIX_STRING ? data[k].value.data.string : "?";
    r->found.emplace_back(data[k].key, pmixrun::to_string(data[k].proc) + "=" + v);
  }
}

struct op_result {
  int calls = 0;
  pmix_status_t status = PMIX_SUCCESS;
};

void on_op(pmix_status_t status, void* cbdata) {
  auto* r = static_cast<op_result*>(cbdata);
  ++r->calls;
  r->status = status;
}

pmix_status_t publish(datastore& s, const pmix_proc_t& owner, const char* key, const char* value,
                      pmix_data_range_t range = PMIX_RANGE_SESSION,
                      pmix_persistence_t persistence = PMIX_PERSIST_SESSION, uint32_t uid = 1000) {
  pmix_value_t v;
  PMIX_VALUE_LOAD(&v, value, PMIX_STRING);
  const pmix_status_t rc = s.publish(owner, uid, range, persistence, {{key, &v}});
  PMIX_VALUE_DESTRUCT(&v);
  return rc;
}

lookup_result lookup(datastore& s, const pmix_proc_t& who, std::vector<std::string> keys,
                     bool wait = false, std::optional<pmix_data_range_t> range = std::nullopt,
                     uint32_t uid = 1000) {
  lookup_result r;
  s.lookup(who, uid, std::move(keys), range, wait, std::nullopt, on_lookup, &r);
  return r;
}

const pmix_proc_t a0 = make_proc("a", 0);
const pmix_proc_t a1 = make_proc("a", 1);
const pmix_proc_t b0 = make_proc("b", 0);

}  // namespace

TEST_CASE("datastore: ranges decide who sees an entry, and what is a duplicate") {
  datastore s;
  CHECK(publish(s, a0, "k", "session") == PMIX_SUCCESS);
  CHECK(publish(s, a0, "k", "ns", PMIX_RANGE_NAMESPACE) == PMIX_SUCCESS);
  CHECK(publish(s, a1, "k", "again") == PMIX_ERR_DUPLICATE_KEY);  // same range, seen by all
  CHECK(publish(s, b0, "k", "b-ns", PMIX_RANGE_NAMESPACE) == PMIX_SUCCESS);  // another namespace
  CHECK(publish(s, a1, "k", "a-ns", PMIX_RANGE_NAMESPACE) == PMIX_ERR_DUPLICATE_KEY);
  CHECK(publish(s, a1, "k", "other uid", PMIX_RANGE_SESSION, PMIX_PERSIST_SESSION, 2000) ==
        PMIX_SUCCESS);

  // the narrowest visible range wins
  auto r = lookup(s, a1, {"k"});
  REQUIRE(r.called);
  CHECK(r.status == PMIX_SUCCESS);
  REQUIRE(r.found.size() == 1);
  CHECK(r.found[0].second == "a:0=ns");
  r = lookup(s, b0, {"k"});
  CHECK(r.found.at(0).second == "b:0=b-ns");
  // a lookup range restricts the publishers searched
  r = lookup(s, b0, {"k"}, false, PMIX_RANGE_SESSION);
  CHECK(r.found.at(0).second == "b:0=b-ns");
  r = lookup(s, make_proc("c", 0), {"k"});
  CHECK(r.found.at(0).second == "a:0=session");
  r = lookup(s, make_proc("c", 0), {"k"}, false, PMIX_RANGE_NAMESPACE);
  CHECK(r.status == PMIX_ERR_NOT_FOUND);
  // uids do not mix
  r = lookup(s, make_proc("c", 0), {"k"}, false, std::nullopt, 2000);
  CHECK(r.found.at(0).second == "a:1=other uid");
  r = lookup(s, a0, {"k"}, false, std::nullopt, 3000);
  CHECK(r.status == PMIX_ERR_NOT_FOUND);

  // PROC_LOCAL: the publisher alone
  CHECK(publish(s, a0, "mine", "x", PMIX_RANGE_PROC_LOCAL) == PMIX_SUCCESS);
  CHECK(lookup(s, a0, {"mine"}).status == PMIX_SUCCESS);
  CHECK(lookup(s, a1, {"mine"}).status == PMIX_ERR_NOT_FOUND);

  // a key twice in one publish
  pmix_value_t v;
  PMIX_VALUE_LOAD(&v, "x", PMIX_STRING);
  CHECK(s.publish(a0, 1000, PMIX_RANGE_SESSION, PMIX_PERSIST_SESSION, {{"t", &v}, {"t", &v}}) ==
        PMIX_ERR_DUPLICATE_KEY);
  PMIX_VALUE_DESTRUCT(&v);
  CHECK(lookup(s, a0, {"t"}).status == PMIX_ERR_NOT_FOUND);
}

TEST_CASE("datastore: partial lookups, waits for every key, timeouts, first read") {
  datastore s;
  CHECK(publish(s, a0, "x", "1") == PMIX_SUCCESS);
  auto r = lookup(s, a1, {"x", "y"});
  CHECK(r.status == PMIX_SUCCESS);
  CHECK(r.found.size() == 1);

  lookup_result held;
  s.lookup(a1, 1000, {"x", "y"}, std::nullopt, true, std::nullopt, on_lookup, &held);
  CHECK_FALSE(held.called);  // y is missing: held
  lookup_result timed;
  const auto t0 = datastore::clock::now();
  s.lookup(a1, 1000, {"z"}, std::nullopt, true, t0 + std::chrono::seconds(1), on_lookup, &timed);
  CHECK(s.waiting() == 2);
  REQUIRE(s.next_deadline().has_value());
  s.expire(t0);
  CHECK_FALSE(timed.called);
  s.expire(t0 + std::chrono::seconds(2));
  CHECK(timed.called);
  CHECK(timed.status == PMIX_ERR_TIMEOUT);

  CHECK(publish(s, b0, "y", "2", PMIX_RANGE_SESSION, PMIX_PERSIST_FIRST_READ) == PMIX_SUCCESS);
  REQUIRE(held.called);
  CHECK(held.status == PMIX_SUCCESS);
  CHECK(held.found.size() == 2);
  CHECK(s.waiting() == 0);
  // the first read took y
  CHECK(lookup(s, a1, {"y"}).status == PMIX_ERR_NOT_FOUND);

  // a FIRST_READ entry goes to the first of two waiting lookups only
  lookup_result w1, w2;
  s.lookup(a0, 1000, {"once"}, std::nullopt, true, std::nullopt, on_lookup, &w1);
  s.lookup(a1, 1000, {"once"}, std::nullopt, true, std::nullopt, on_lookup, &w2);
  CHECK(publish(s, b0, "once", "o", PMIX_RANGE_SESSION, PMIX_PERSIST_FIRST_READ) == PMIX_SUCCESS);
  CHECK(w1.called);
  CHECK_FALSE(w2.called);
  // its requester ends: the held lookup fails
  s.proc_ended(a1);
  CHECK(w2.called);
  CHECK(w2.status == PMIX_ERR_NOT_FOUND);

  lookup_result last;
  s.lookup(a0, 1000, {"never"}, std::nullopt, true, std::nullopt, on_lookup, &last);
  s.cancel_all(PMIX_ERR_NOT_FOUND);
  CHECK(last.called);
}

TEST_CASE("datastore: persistence and unpublish") {
  datastore s;
  CHECK(publish(s, a0, "proc", "p", PMIX_RANGE_SESSION, PMIX_PERSIST_PROC) == PMIX_SUCCESS);
  CHECK(publish(s, a0, "app", "a", PMIX_RANGE_SESSION, PMIX_PERSIST_APP) == PMIX_SUCCESS);
  CHECK(publish(s, a0, "indef", "i", PMIX_RANGE_SESSION, PMIX_PERSIST_INDEF) == PMIX_SUCCESS);
  CHECK(publish(s, a0, "sess", "s") == PMIX_SUCCESS);
  s.proc_ended(a1);
  CHECK(lookup(s, b0, {"proc"}).status == PMIX_SUCCESS);
  s.proc_ended(a0);
  CHECK(lookup(s, b0, {"proc"}).status == PMIX_ERR_NOT_FOUND);
  CHECK(lookup(s, b0, {"app"}).status == PMIX_SUCCESS);
  s.job_ended("b");
  CHECK(lookup(s, b0, {"app"}).status == PMIX_SUCCESS);
  s.job_ended("a");
  CHECK(lookup(s, b0, {"app"}).status == PMIX_ERR_NOT_FOUND);
  CHECK(lookup(s, b0, {"indef", "sess"}).found.size() == 2);

  // only one's own entries, of the given range if any
  std::vector<std::string> keys{"sess"};
  CHECK(s.unpublish(a1, 1000, &keys, std::nullopt) == PMIX_ERR_NOT_FOUND);
  CHECK(s.unpublish(a0, 1000, &keys, PMIX_RANGE_NAMESPACE) == PMIX_ERR_NOT_FOUND);
  CHECK(s.unpublish(a0, 1000, &keys, std::nullopt) == PMIX_SUCCESS);
  CHECK(lookup(s, b0, {"sess"}).status == PMIX_ERR_NOT_FOUND);
  CHECK(publish(s, a0, "sess", "s2") == PMIX_SUCCESS);  // gone, so no duplicate
  CHECK(s.unpublish(a0, 1000, nullptr, std::nullopt) == PMIX_SUCCESS);
  CHECK(s.entries() == 0);
}

namespace {

// The up-calls post tasks to the "host thread": this one, with the wake-up
// signal blocked so that post()'s pthread_kill only leaves it pending.
struct host_fixture {
  host_fixture() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    pmixrun::set_host_thread(pthread_self(), SIGUSR2);
    ctx.store = &store;
    ctx.known_nspace = [](const std::string& ns) { return ns == "a" || ns == "b"; };
    module = pmixrun::host_module(ctx);
  }
  ~host_fixture() {
    pmixrun::run_posted();
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    timespec zero{0, 0};
    while (sigtimedwait(&set, nullptr, &zero) > 0) {
    }
  }
  datastore store;
  pmixrun::host_context ctx;
  pmix_server_module_t module;
};

}  // namespace

TEST_CASE("up-calls: connect records groups, disconnect forgets them") {
  host_fixture h;
  const pmix_proc_t ab[2] = {make_proc("b", PMIX_RANK_WILDCARD),
                             make_proc("a", PMIX_RANK_WILDCARD)};
  const pmix_proc_t ba[2] = {ab[1], ab[0]};
  const std::size_t before = pmixrun::connected_groups();
  op_result r;
  CHECK(h.module.connect(ab, 2, nullptr, 0, on_op, &r) == PMIX_SUCCESS);
  CHECK(r.calls == 0);  // never from inside the up-call
  pmixrun::run_posted();
  CHECK(r.calls == 1);
  CHECK(r.status == PMIX_SUCCESS);
  CHECK(pmixrun::connected_groups() == before + 1);

  // the same set in another order is the same group
  r = {};
  CHECK(h.module.disconnect(ba, 2, nullptr, 0, on_op, &r) == PMIX_SUCCESS);
  pmixrun::run_posted();
  CHECK(r.status == PMIX_SUCCESS);
  CHECK(pmixrun::connected_groups() == before);
  // a group never connected: acknowledged (as ORTE does)
  r = {};
  CHECK(h.module.disconnect(ab, 2, nullptr, 0, on_op, &r) == PMIX_SUCCESS);
  pmixrun::run_posted();
  CHECK(r.calls == 1);
  CHECK(r.status == PMIX_SUCCESS);
  // a namespace nobody registered
  const pmix_proc_t ghost[2] = {make_proc("a", 0), make_proc("ghost", 0)};
  r = {};
  CHECK(h.module.connect(ghost, 2, nullptr, 0, on_op, &r) == PMIX_SUCCESS);
  pmixrun::run_posted();
  CHECK(r.status == PMIX_ERR_NOT_FOUND);
  CHECK(pmixrun::connected_groups() == before);
}

TEST_CASE(
    "up-calls: log writes stdout/stderr with the source, refuses what is required and missing") {
  host_fixture h;
  std::fflush(stdout);
  char path[] = "/tmp/pmixrun_units.XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  const int saved = dup(STDOUT_FILENO);
  dup2(fd, STDOUT_FILENO);

  pmix_info_t data[2];
  PMIX_INFO_LOAD(&data[0], PMIX_LOG_STDOUT, "two\nlines", PMIX_STRING);
  PMIX_INFO_LOAD(&data[1], PMIX_LOG_EMAIL, "x@example.invalid", PMIX_STRING);  // ignored
  pmix_info_t source;
  const pmix_proc_t b3 = make_proc("b", 3);
  PMIX_INFO_LOAD(&source, PMIX_LOG_SOURCE, &b3, PMIX_PROC);
  op_result r;
  const pmix_proc_t caller = make_proc("a", 1);
  h.module.log(&caller, data, 2, nullptr, 0, on_op, &r);
  pmixrun::run_posted();
  CHECK(r.calls == 1);
  CHECK(r.status == PMIX_SUCCESS);
  h.module.log(&caller, data, 1, &source, 1, on_op, &r);
  pmixrun::run_posted();
  PMIX_INFO_REQUIRED(&data[1]);
  h.module.log(&caller, &data[1], 1, nullptr, 0, on_op, &r);
  pmixrun::run_posted();
  CHECK(r.calls == 3);
  CHECK(r.status == PMIX_ERR_NOT_SUPPORTED);

  dup2(saved, STDOUT_FILENO);
  close(saved);
  std::string text;
  char buf[256];
  lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  close(fd);
  unlink(path);
  CHECK(text == "[a:1] two\n[a:1] lines\n[b:3] two\n[b:3] lines\n");
  for (auto& i : data) PMIX_INFO_DESTRUCT(&i);
  PMIX_INFO_DESTRUCT(&source);
}

namespace {

struct tool_result {
  int calls = 0;
  pmix_status_t status = PMIX_ERROR;
  std::string proc;
};

void on_tool(pmix_status_t status, pmix_proc_t* proc, void* cbdata) {
  auto* r = static_cast<tool_result*>(cbdata);
  ++r->calls;
  r->status = status;
  r->proc = proc != nullptr ? pmixrun::to_string(*proc) : "";
}

struct query_result {
  int calls = 0;
  pmix_status_t status = PMIX_ERROR;
  std::vector<std::pair<std::string, std::string>> found;  // key, string value or type
};

void on_query_done(pmix_status_t status, pmix_info_t* info, size_t ninfo, void* cbdata,
                   pmix_release_cbfunc_t release, void* release_data) {
  auto* r = static_cast<query_result*>(cbdata);
  ++r->calls;
  r->status = status;
  for (size_t k = 0; k < ninfo; ++k)
    r->found.emplace_back(info[k].key,
                          info[k].value.type == PMIX_STRING
                              ? std::string(info[k].value.data.string)
                              : std::string(PMIx_Data_type_string(info[k].value.type)));
  if (release != nullptr) release(release_data);
}

}  // namespace

TEST_CASE("up-calls: a tool gets the identity it proposes, else one of pmixrun's own") {
  host_fixture h;
  REQUIRE(static_cast<bool>(h.module.tool_connected));
  tool_result r;
  h.module.tool_connected(nullptr, 0, on_tool, &r);
  CHECK(r.calls == 0);  // never from inside the up-call
  pmixrun::run_posted();
  CHECK(r.calls == 1);
  CHECK(r.status == PMIX_SUCCESS);
  const std::string prefix = "pmixrun-server." + std::to_string(getpid()) + ".tool.";
  CHECK(r.proc.compare(0, prefix.size(), prefix) == 0);
  CHECK(r.proc.substr(r.proc.size() - 2) == ":0");
  tool_result second;
  h.module.tool_connected(nullptr, 0, on_tool, &second);
  pmixrun::run_posted();
  CHECK(second.proc != r.proc);

  pmix_info_t proposed[2];
  PMIX_INFO_LOAD(&proposed[0], PMIX_TOOL_NSPACE, "mytool", PMIX_STRING);
  const pmix_rank_t rank = 5;
  PMIX_INFO_LOAD(&proposed[1], PMIX_TOOL_RANK, &rank, PMIX_PROC_RANK);
  tool_result named;
  h.module.tool_connected(proposed, 2, on_tool, &named);
  pmixrun::run_posted();
  CHECK(named.status == PMIX_SUCCESS);
  CHECK(named.proc == "mytool:5");
  for (auto& i : proposed) PMIX_INFO_DESTRUCT(&i);
}

TEST_CASE("up-calls: a query without jobs lists none; unknown keys are not found") {
  host_fixture h;  // no launcher: no jobs
  REQUIRE(static_cast<bool>(h.module.query));
  char ns_key[] = PMIX_QUERY_NAMESPACES;
  char unknown_key[] = "pmix.no.such.key";
  char* both[] = {ns_key, unknown_key, nullptr};
  pmix_query_t q;
  PMIX_QUERY_CONSTRUCT(&q);
  q.keys = both;
  pmix_proc_t tool = make_proc("tool", 0);
  query_result r;
  CHECK(h.module.query(&tool, &q, 1, on_query_done, &r) == PMIX_SUCCESS);
  CHECK(r.calls == 0);
  pmixrun::run_posted();
  CHECK(r.calls == 1);
  CHECK(r.status == PMIX_ERR_PARTIAL_SUCCESS);
  REQUIRE(r.found.size() == 1);
  CHECK(r.found[0].first == PMIX_QUERY_NAMESPACES);
  CHECK(r.found[0].second.empty());

  char* unknown_only[] = {unknown_key, nullptr};
  q.keys = unknown_only;
  query_result none;
  h.module.query(&tool, &q, 1, on_query_done, &none);
  pmixrun::run_posted();
  CHECK(none.status == PMIX_ERR_NOT_FOUND);
  CHECK(none.found.empty());

  // The process table and job size name a job: none here.
  char table_key[] = PMIX_QUERY_PROC_TABLE;
  char* table[] = {table_key, nullptr};
  q.keys = table;
  pmix_info_t ns;
  PMIX_INFO_LOAD(&ns, PMIX_NSPACE, "nosuchjob", PMIX_STRING);
  q.qualifiers = &ns;
  q.nqual = 1;
  query_result no_job;
  h.module.query(&tool, &q, 1, on_query_done, &no_job);
  pmixrun::run_posted();
  CHECK(no_job.status == PMIX_ERR_NOT_FOUND);
  PMIX_INFO_DESTRUCT(&ns);
  q.keys = nullptr;
  q.qualifiers = nullptr;
}

TEST_CASE("up-calls: publish and lookup through the module, directives separated from data") {
  host_fixture h;
  pmix_info_t info[3];
  PMIX_INFO_LOAD(&info[0], "svc", "port-1", PMIX_STRING);
  int range = PMIX_RANGE_NAMESPACE;  // Open MPI passes ranges as PMIX_INT
  PMIX_INFO_LOAD(&info[1], PMIX_RANGE, &range, PMIX_INT);
  uint32_t uid = 1234;
  PMIX_INFO_LOAD(&info[2], PMIX_USERID, &uid, PMIX_UINT32);
  op_result r;
  CHECK(h.module.publish(&a0, info, 3, on_op, &r) == PMIX_SUCCESS);
  pmixrun::run_posted();
  CHECK(r.status == PMIX_SUCCESS);
  CHECK(h.store.entries() == 1);

  char* keys[] = {const_cast<char*>("svc"), nullptr};
  lookup_result same, other;
  CHECK(h.module.lookup(&a1, keys, &info[2], 1, on_lookup, &same) == PMIX_SUCCESS);
  CHECK(h.module.lookup(&b0, keys, &info[2], 1, on_lookup, &other) == PMIX_SUCCESS);
  pmixrun::run_posted();
  CHECK(same.status == PMIX_SUCCESS);
  CHECK(same.found.at(0).second == "a:0=port-1");
  CHECK(other.status == PMIX_ERR_NOT_FOUND);

  r = {};
  CHECK(h.module.unpublish(&a0, nullptr, &info[2], 1, on_op, &r) == PMIX_SUCCESS);
  pmixrun::run_posted();
  CHECK(r.status == PMIX_SUCCESS);
  CHECK(h.store.entries() == 0);
  for (auto& i : info) PMIX_INFO_DESTRUCT(&i);
}

// ---- output forwarding ---------------------------------------------------------------------

namespace {

// A pipe; both ends closed at the end.
struct test_pipe {
  int fd[2] = {-1, -1};
  test_pipe() { REQUIRE(::pipe2(fd, O_CLOEXEC) == 0); }
  ~test_pipe() { close_write(), close_read(); }
  test_pipe(const test_pipe&) = delete;
  test_pipe& operator=(const test_pipe&) = delete;
  int take_read() { return std::exchange(fd[0], -1); }
  void write(const std::string& s) {
    REQUIRE(::write(fd[1], s.data(), s.size()) == ssize_t(s.size()));
  }
  void close_write() {
    if (fd[1] >= 0) ::close(std::exchange(fd[1], -1));
  }
  void close_read() {
    if (fd[0] >= 0) ::close(std::exchange(fd[0], -1));
  }
  // What the pipe holds now.
  std::string drain() {
    std::string out;
    char buf[65536];
    for (;;) {
      pollfd p{fd[0], POLLIN, 0};
      if (::poll(&p, 1, 0) <= 0 || (p.revents & POLLIN) == 0) return out;
      const ssize_t n = ::read(fd[0], buf, sizeof buf);
      if (n <= 0) return out;
      out.append(buf, static_cast<std::size_t>(n));
    }
  }
};

// Turns of a main loop, until `done` or 200 turns of at most 10 ms.
void turn(pmixrun::output_forwarder& iof, const std::function<bool()>& done) {
  for (int k = 0; k < 200 && !done(); ++k) {
    std::vector<pollfd> fds;
    iof.poll_set(fds);
    if (::poll(fds.data(), fds.size(), 10) > 0) iof.handle(fds.data(), fds.size());
  }
}

struct forwarder_fixture {
  test_pipe out, err;  // pmixrun's stdout and stderr
  std::vector<std::string> closed;
  pmixrun::output_forwarder::settings settings(bool tag) {
    pmixrun::output_forwarder::settings s;
    s.tag = tag;
    s.deliver = false;  // no server here
    s.out_fd = out.fd[1];
    s.err_fd = err.fd[1];
    s.closed = [this](const pmix_proc_t& p) { closed.push_back(pmixrun::to_string(p)); };
    return s;
  }
};

}  // namespace

TEST_CASE("iof: whole lines, tags, and a last line without a newline at the end") {
  forwarder_fixture f;
  pmixrun::output_forwarder iof(f.settings(true));
  test_pipe a_out, a_err, b_out, b_err;
  iof.add(make_proc("a", 0), 1, a_out.take_read(), a_err.take_read());
  iof.add(make_proc("a.1", 3), 2, b_out.take_read(), b_err.take_read());
  std::string got;
  a_out.write("hel");
  b_out.write("x\ny\n");
  b_err.write("e\n");
  turn(iof, [&] { return (got += f.out.drain()).size() >= 30; });
  CHECK(got == "[2,3]<stdout>:x\n[2,3]<stdout>:y\n");  // a's partial line waits
  CHECK(f.err.drain() == "[2,3]<stderr>:e\n");
  a_out.write("lo\nwor");
  got.clear();
  turn(iof, [&] { return (got += f.out.drain()).size() >= 20; });
  CHECK(got == "[1,0]<stdout>:hello\n");
  a_out.close_write();
  a_err.close_write();
  got.clear();
  turn(iof, [&] { return !f.closed.empty(); });
  CHECK(f.out.drain() == "[1,0]<stdout>:wor\n");  // tagged and given its newline
  CHECK(f.closed == std::vector<std::string>{"a:0"});
  CHECK(iof.open());
  b_out.close_write();
  b_err.close_write();
  turn(iof, [&] { return !iof.open(); });
  CHECK(f.closed == std::vector<std::string>{"a:0", "a.1:3"});
  CHECK(iof.bytes_read() == 15);
}

TEST_CASE("iof: untagged bytes pass unchanged; a long line goes in pieces") {
  forwarder_fixture f;
  auto s = f.settings(false);
  s.line_max = 8;
  pmixrun::output_forwarder iof(s);
  test_pipe o, e;
  iof.add(make_proc("a", 0), 1, o.take_read(), e.take_read());
  const std::string bytes("\0\1\2\377no newline in 16", 20);
  o.write(bytes);
  std::string got;
  turn(iof, [&] { return (got += f.out.drain()).size() >= bytes.size(); });
  CHECK(got == bytes);
  o.write("tail");
  o.close_write();
  e.close_write();
  got.clear();
  turn(iof, [&] { return !iof.open(); });
  CHECK(f.out.drain() == "tail");
}

TEST_CASE("iof: a full destination stops the reading; nothing is lost") {
  forwarder_fixture f;
  auto s = f.settings(false);
  s.backlog_max = 100000;
  pmixrun::output_forwarder iof(s);
  test_pipe o, e;
  iof.add(make_proc("a", 0), 1, o.take_read(), e.take_read());
  ::fcntl(o.fd[1], F_SETFL, O_NONBLOCK);
  std::string sent;
  for (int k = 0; sent.size() < 1000000; ++k) {  // as much as the source pipe takes each turn
    const std::string line = "line " + std::to_string(k) + "\n";
    if (::write(o.fd[1], line.data(), line.size()) != ssize_t(line.size())) {
      std::vector<pollfd> fds;
      iof.poll_set(fds);
      if (fds.at(0).fd < 0) break;  // paused: the destination pipe is full and 100000 bytes wait
      if (::poll(fds.data(), fds.size(), 10) > 0) iof.handle(fds.data(), fds.size());
      continue;
    }
    sent += line;
  }
  CHECK(sent.size() < 1000000);  // it did stop
  o.close_write();
  e.close_write();
  std::string got;
  turn(iof, [&] {
    got += f.out.drain();
    return !iof.open() && got.size() == sent.size();
  });
  iof.flush();
  got += f.out.drain();
  CHECK(got.size() == sent.size());
  CHECK(got == sent);
}

TEST_CASE("iof: a destination that is gone closes the pipes that feed it") {
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);  // as pmixrun: EPIPE, not SIGPIPE
  forwarder_fixture f;
  pmixrun::output_forwarder iof(f.settings(false));
  test_pipe o, e;
  iof.add(make_proc("a", 0), 1, o.take_read(), e.take_read());
  f.out.close_read();
  o.write("to nobody\n");
  turn(iof, [&] {
    errno = 0;
    return ::write(o.fd[1], "x", 1) < 0 && errno == EPIPE;
  });
  CHECK(errno == EPIPE);  // the writer learns it
  e.write("stderr still works\n");
  std::string got;
  turn(iof, [&] { return (got += f.err.drain()).size() >= 19; });
  CHECK(got == "stderr still works\n");
  CHECK(f.closed.empty());
  e.close_write();
  turn(iof, [&] { return !iof.open(); });
  CHECK(f.closed == std::vector<std::string>{"a:0"});
}

// ---- input forwarding ----------------------------------------------------------------------

namespace {

// Turns of a main loop for the input forwarder, until `done` or 200 turns of at most 10 ms.
void turn(pmixrun::stdin_forwarder& input, const std::function<bool()>& done) {
  for (int k = 0; k < 200 && !done(); ++k) {
    std::vector<pollfd> fds;
    input.poll_set(fds);
    if (fds.empty()) {
      ::poll(nullptr, 0, 10);
      continue;
    }
    if (::poll(fds.data(), fds.size(), 10) > 0) input.handle(fds.data(), fds.size());
  }
}

// Everything a pipe gives until its end (its writer closed), waiting at most 2 s.
std::string read_to_end(int fd) {
  std::string out;
  char buf[65536];
  for (int k = 0; k < 200; ++k) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 10) <= 0) continue;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out + "<no end>";
}

struct push_result {
  int calls = 0;
  pmix_status_t status = PMIX_ERROR;
  pmixrun::stdin_forwarder::done_fn fn() {
    return [this](pmix_status_t st) {
      ++calls;
      status = st;
    };
  }
};

}  // namespace

TEST_CASE("stdin: pushes reach the pipe in order; an end closes it once written; then it is closed") {
  pmixrun::stdin_forwarder input(pmixrun::stdin_forwarder::settings{});
  test_pipe a0_in, a1_in;
  input.add(a0, std::exchange(a0_in.fd[1], -1), false);
  input.add(a1, std::exchange(a1_in.fd[1], -1), false);
  CHECK(input.open(a0));
  CHECK(input.open(a1));
  CHECK(!input.open(b0));  // never added
  push_result first, both, end;
  input.push({a0}, "one\n", false, first.fn());
  CHECK(first.calls == 1);  // the pipe took it at once
  CHECK(first.status == PMIX_SUCCESS);
  input.push({a0, a1}, "two\n", false, both.fn());
  CHECK(both.calls == 1);
  input.push({a0}, "", true, end.fn());
  CHECK(end.calls == 1);
  CHECK(end.status == PMIX_SUCCESS);
  CHECK(!input.open(a0));
  CHECK(input.open(a1));
  CHECK(read_to_end(a0_in.fd[0]) == "one\ntwo\n");  // and the end of input
  CHECK(a1_in.drain() == "two\n");
  CHECK(input.bytes_pushed() == 8);
  CHECK(input.bytes_written() == 12);
}

TEST_CASE("stdin: a push larger than the pipe waits for the reader; its callback comes when written") {
  pmixrun::stdin_forwarder input(pmixrun::stdin_forwarder::settings{});
  test_pipe in;
  input.add(a0, std::exchange(in.fd[1], -1), false);
  std::string big;
  for (int k = 0; big.size() < 300000; ++k) big += "line " + std::to_string(k) + "\n";
  push_result r;
  input.push({a0}, big, true, r.fn());
  CHECK(r.calls == 0);  // the pipe holds 64 KiB: the rest waits
  std::string got;
  turn(input, [&] {
    got += in.drain();
    return r.calls > 0;
  });
  got += read_to_end(in.fd[0]);
  CHECK(r.calls == 1);
  CHECK(r.status == PMIX_SUCCESS);
  CHECK(got == big);
}

TEST_CASE("stdin: a reader that is gone or a process that ended fails what waits for it") {
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);  // as pmixrun: EPIPE, not SIGPIPE
  pmixrun::stdin_forwarder input(pmixrun::stdin_forwarder::settings{});
  test_pipe gone, full;
  input.add(a0, std::exchange(gone.fd[1], -1), false);
  input.add(a1, std::exchange(full.fd[1], -1), false);
  gone.close_read();
  push_result r;
  input.push({a0}, "to nobody\n", false, r.fn());
  CHECK(r.calls == 1);
  CHECK(r.status == PMIX_ERR_IOF_FAILURE);
  CHECK(!input.open(a0));
  // Two targets, one of which ends before its bytes are written: the push fails.
  test_pipe other;
  input.add(b0, std::exchange(other.fd[1], -1), false);
  push_result two;
  input.push({a1, b0}, std::string(200000, 'x'), false, two.fn());
  CHECK(two.calls == 0);
  input.process_ended(a1);
  CHECK(!input.open(a1));
  CHECK(two.calls == 0);  // b0 has not taken its bytes yet
  turn(input, [&] {
    other.drain();
    return two.calls > 0;
  });
  CHECK(two.calls == 1);
  CHECK(two.status == PMIX_ERR_IOF_FAILURE);
  // The end of the run answers what still waits.
  push_result last;
  input.push({b0}, std::string(200000, 'y'), false, last.fn());
  CHECK(last.calls == 0);
  input.close_all(PMIX_ERR_IOF_FAILURE);
  CHECK(last.calls == 1);
  CHECK(last.status == PMIX_ERR_IOF_FAILURE);
  CHECK(!input.open(b0));
}

TEST_CASE("stdin: pmixrun's stdin goes to the processes that take it, and its end ends theirs") {
  test_pipe source;
  pmixrun::stdin_forwarder::settings s;
  s.source_fd = source.fd[0];
  pmixrun::stdin_forwarder input(s);
  test_pipe a0_in, a1_in, b0_in;
  input.add(a0, std::exchange(a0_in.fd[1], -1), true);
  input.add(a1, std::exchange(a1_in.fd[1], -1), true);
  input.add(b0, std::exchange(b0_in.fd[1], -1), false);
  source.write("typed\n");
  std::string got0, got1;
  turn(input, [&] {
    got0 += a0_in.drain();
    got1 += a1_in.drain();
    return got0.size() >= 6 && got1.size() >= 6;
  });
  CHECK(got0 == "typed\n");
  CHECK(got1 == "typed\n");
  CHECK(b0_in.drain().empty());
  push_result r;
  input.push({a1}, "pushed\n", false, r.fn());  // mixed in after what came before
  source.write("more\n");
  source.close_write();
  turn(input, [&] { return !input.open(a0) && !input.open(a1); });
  CHECK(read_to_end(a0_in.fd[0]) == "more\n");
  CHECK(read_to_end(a1_in.fd[0]) == "pushed\nmore\n");
  CHECK(input.open(b0));  // its input is only what is pushed
  CHECK(input.bytes_read() == 11);
}

TEST_CASE("up-calls: group construct answers pmixrun's context IDs for its jobs; destruct forgets") {
  host_fixture h;
  struct group_result {
    int calls = 0;
    pmix_status_t status = PMIX_ERROR;
    std::optional<std::size_t> context_id;
  };
  auto on_group = [](pmix_status_t status, pmix_info_t* info, size_t ninfo, void* cbdata,
                     pmix_release_cbfunc_t release, void* release_data) {
    auto* r = static_cast<group_result*>(cbdata);
    ++r->calls;
    r->status = status;
    r->context_id.reset();
    if (const pmix_info_t* i = pmixrun::find_info(info, ninfo, PMIX_GROUP_CONTEXT_ID))
      r->context_id = i->value.data.size;
    if (release != nullptr) release(release_data);
  };
  const pmix_proc_t members[2] = {make_proc("a", PMIX_RANK_WILDCARD), b0};
  pmix_info_t assign;
  const bool yes = true;
  PMIX_INFO_LOAD(&assign, PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
  const std::size_t before = pmixrun::constructed_groups();
  char one[] = "one", two[] = "two", plain[] = "plain", ghosts[] = "ghosts";
  group_result r1, r2, again, without, ghost, destruct;
  CHECK(h.module.group(PMIX_GROUP_CONSTRUCT, one, members, 2, &assign, 1, on_group, &r1) ==
        PMIX_SUCCESS);
  CHECK(r1.calls == 0);  // never from inside the up-call
  h.module.group(PMIX_GROUP_CONSTRUCT, two, members, 2, &assign, 1, on_group, &r2);
  h.module.group(PMIX_GROUP_CONSTRUCT, one, members, 2, &assign, 1, on_group, &again);
  h.module.group(PMIX_GROUP_CONSTRUCT, plain, members, 2, nullptr, 0, on_group, &without);
  const pmix_proc_t with_ghost[2] = {a0, make_proc("ghost", 0)};
  h.module.group(PMIX_GROUP_CONSTRUCT, ghosts, with_ghost, 2, &assign, 1, on_group, &ghost);
  pmixrun::run_posted();
  CHECK(r1.status == PMIX_SUCCESS);
  REQUIRE(r1.context_id.has_value());
  CHECK(*r1.context_id >= (std::size_t{1} << 32));  // apart from the server's own 1, 2, ...
  CHECK(r2.status == PMIX_SUCCESS);
  REQUIRE(r2.context_id.has_value());
  CHECK(*r2.context_id == *r1.context_id + 1);
  CHECK(again.status == PMIX_ERR_EXISTS);
  CHECK(without.status == PMIX_SUCCESS);
  CHECK(!without.context_id.has_value());
  CHECK(ghost.status == PMIX_ERR_NOT_FOUND);
  CHECK(pmixrun::constructed_groups() == before + 3);
  h.module.group(PMIX_GROUP_DESTRUCT, one, members, 2, nullptr, 0, on_group, &destruct);
  pmixrun::run_posted();
  CHECK(destruct.status == PMIX_SUCCESS);
  CHECK(pmixrun::constructed_groups() == before + 2);
  destruct = {};
  h.module.group(PMIX_GROUP_DESTRUCT, one, members, 2, nullptr, 0, on_group, &destruct);
  pmixrun::run_posted();
  CHECK(destruct.calls == 1);
  CHECK(destruct.status == PMIX_SUCCESS);  // one never constructed (any more): nothing to undo
  // A required directive pmixrun does not honour.
  pmix_info_t notify;
  PMIX_INFO_LOAD(&notify, PMIX_GROUP_NOTIFY_TERMINATION, &yes, PMIX_BOOL);
  PMIX_INFO_REQUIRED(&notify);
  group_result refused;
  char three[] = "three";
  h.module.group(PMIX_GROUP_CONSTRUCT, three, members, 2, &notify, 1, on_group, &refused);
  pmixrun::run_posted();
  CHECK(refused.status == PMIX_ERR_NOT_SUPPORTED);
  group_result done;
  h.module.group(PMIX_GROUP_DESTRUCT, two, members, 2, nullptr, 0, on_group, &done);
  pmixrun::run_posted();
  CHECK(done.status == PMIX_SUCCESS);
  CHECK(pmixrun::constructed_groups() == before + 1);
  // A job of its members ends: the group goes, and its name is free again.
  pmixrun::groups_job_ended("b");
  CHECK(pmixrun::constructed_groups() == before);
  group_result renewed;
  h.module.group(PMIX_GROUP_CONSTRUCT, plain, members, 2, nullptr, 0, on_group, &renewed);
  pmixrun::run_posted();
  CHECK(renewed.status == PMIX_SUCCESS);
  pmixrun::groups_job_ended("a");
  CHECK(pmixrun::constructed_groups() == before);
  PMIX_INFO_DESTRUCT(&assign);
  PMIX_INFO_DESTRUCT(&notify);
}

TEST_CASE("up-calls: without a launcher or input, pulls are not found and pushes not supported") {
  host_fixture h;
  op_result pull, push;
  CHECK(h.module.iof_pull(&a0, 1, nullptr, 0, PMIX_FWD_STDOUT_CHANNEL, on_op, &pull) == PMIX_SUCCESS);
  pmix_byte_object_t bo{const_cast<char*>("x"), 1};
  CHECK(h.module.push_stdin(&a1, &a0, 1, nullptr, 0, &bo, on_op, &push) == PMIX_SUCCESS);
  pmixrun::run_posted();
  CHECK(pull.calls == 1);
  CHECK(pull.status == PMIX_ERR_NOT_FOUND);
  CHECK(push.calls == 1);
  CHECK(push.status == PMIX_ERR_NOT_SUPPORTED);
  CHECK(h.module.iof_pull(nullptr, 0, nullptr, 0, PMIX_FWD_STDOUT_CHANNEL, on_op, &pull) ==
        PMIX_ERR_BAD_PARAM);
}
