// The event handler registry and chain (server/events.hpp) and the range rules
// (common/event.hpp), without processes: the chain's steps are queued and
// run one by one here, so every order is checked exactly.
#include <doctest/doctest.h>
#include <pmix_common.h>

#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "server/events.hpp"
#include "common/event.hpp"
#include "common/progress.hpp"

using namespace pmix;
using namespace pmix::api::events;

namespace {

// What handlers saw: "<id>:<status>:<prior results>".
std::vector<std::string> calls;
// What each handler answers (by id; default PMIX_SUCCESS).
std::map<std::size_t, pmix_status_t> answers;
bool in_library = false;

void record(size_t id, pmix_status_t status, const pmix_proc_t*, pmix_info_t[], size_t,
            pmix_info_t*, size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc, void* cbdata) {
  calls.push_back(std::to_string(id) + ":" + std::to_string(status) + ":" + std::to_string(nresults));
  in_library = progress::in_library_thread();
  static pmix_info_t result;
  PMIX_INFO_LOAD(&result, "seen", &id, PMIX_SIZE);
  const auto it = answers.find(id);
  cbfunc(it == answers.end() ? PMIX_SUCCESS : it->second, &result, 1, nullptr, nullptr, cbdata);
}

info_list flags(std::initializer_list<const char*> keys) {
  info_list out;
  for (const char* k : keys) out.push_back({k, value::boolean(true), 0});
  return out;
}

std::size_t add(registry& r, std::vector<pmix_status_t> codes, info_list directives = {}) {
  std::size_t id = 0;
  std::string error;
  REQUIRE(r.add(std::move(codes), directives, record, id, error) == PMIX_SUCCESS);
  return id;
}

std::vector<std::size_t> order(const registry& r, pmix_status_t status, info_list info = {}) {
  std::vector<std::size_t> ids;
  for (const auto& h : r.chain_for(event{status, {"ns", 0}, PMIX_RANGE_LOCAL, std::move(info)}))
    ids.push_back(h.id);
  return ids;
}

}  // namespace

TEST_SUITE("event handler chain") {
  TEST_CASE("categories: first, single-code, multi-code, default, last") {
    registry r;
    const auto dflt = add(r, {});
    const auto multi = add(r, {1, 2});
    const auto single = add(r, {1});
    const auto last = add(r, {}, flags({PMIX_EVENT_HDLR_LAST}));
    const auto first = add(r, {1}, flags({PMIX_EVENT_HDLR_FIRST}));
    CHECK(order(r, 1) == std::vector<std::size_t>{first, single, multi, dflt, last});
    CHECK(order(r, 2) == std::vector<std::size_t>{multi, dflt, last});
    CHECK(order(r, 3) == std::vector<std::size_t>{dflt, last});
    // PMIX_EVENT_NON_DEFAULT: no default handler, the last one included.
    CHECK(order(r, 1, flags({PMIX_EVENT_NON_DEFAULT})) == std::vector<std::size_t>{first, single, multi});
  }

  TEST_CASE("placement inside a category") {
    registry r;
    auto named = [](const char* name, info_list more = {}) {
      more.push_back({PMIX_EVENT_HDLR_NAME, value::string(name), 0});
      return more;
    };
    const auto a = add(r, {7}, named("a"));
    const auto b = add(r, {7}, named("b"));
    const auto pre = add(r, {7}, named("pre", flags({PMIX_EVENT_HDLR_PREPEND})));
    const auto lastcat = add(r, {7}, flags({PMIX_EVENT_HDLR_LAST_IN_CATEGORY}));
    const auto firstcat = add(r, {7}, flags({PMIX_EVENT_HDLR_FIRST_IN_CATEGORY}));
    const auto before_b = add(r, {7}, {{PMIX_EVENT_HDLR_BEFORE, value::string("b"), 0}});
    const auto after_a = add(r, {7}, {{PMIX_EVENT_HDLR_AFTER, value::string("a"), 0}});
    const auto tail = add(r, {7}, flags({PMIX_EVENT_HDLR_APPEND}));
    CHECK(order(r, 7) == std::vector<std::size_t>{firstcat, pre, a, after_a, before_b, b, tail, lastcat});
  }

  TEST_CASE("unique places are refused twice, an unknown neighbour is not found, ids are never reused") {
    registry r;
    std::size_t id = 0;
    std::string error;
    add(r, {}, flags({PMIX_EVENT_HDLR_FIRST}));
    CHECK(r.add({}, flags({PMIX_EVENT_HDLR_FIRST}), record, id, error) == PMIX_ERR_EVENT_REGISTRATION);
    CHECK(error.find("first") != std::string::npos);
    add(r, {3}, flags({PMIX_EVENT_HDLR_FIRST_IN_CATEGORY}));
    CHECK(r.add({3}, flags({PMIX_EVENT_HDLR_FIRST_IN_CATEGORY}), record, id, error) ==
          PMIX_ERR_EVENT_REGISTRATION);
    add(r, {3, 4}, flags({PMIX_EVENT_HDLR_FIRST_IN_CATEGORY}));  // another category: allowed
    CHECK(r.add({3}, {{PMIX_EVENT_HDLR_BEFORE, value::string("ghost"), 0}}, record, id, error) ==
          PMIX_ERR_NOT_FOUND);
    const auto x = add(r, {5});
    CHECK(r.remove(x));
    CHECK_FALSE(r.remove(x));
    CHECK(add(r, {5}) > x);
    r.clear();
    CHECK(r.empty());
  }

  TEST_CASE("a chain runs step by step on the poster, passes results on, and stops at ACTION_COMPLETE") {
    auto& r = handlers();
    r.clear();
    calls.clear();
    answers.clear();
    const auto h1 = add(r, {9});
    const auto h2 = add(r, {9, 10});
    const auto h3 = add(r, {});
    std::deque<std::function<void()>> queue;
    task_poster post = [&](std::function<void()> t) { queue.push_back(std::move(t)); };
    auto drain = [&] {
      while (!queue.empty()) {
        auto t = std::move(queue.front());
        queue.pop_front();
        t();
      }
    };
    deliver(event{9, {"ns", 1}, PMIX_RANGE_LOCAL, {}}, post);
    CHECK(calls.empty());  // nothing runs on the caller's thread
    REQUIRE(queue.size() == 1);
    queue.front()();
    queue.pop_front();
    CHECK(calls == std::vector<std::string>{std::to_string(h1) + ":9:0"});
    CHECK(in_library);  // handlers run as library code (spec 002)
    drain();
    CHECK(calls == std::vector<std::string>{std::to_string(h1) + ":9:0", std::to_string(h2) + ":9:1",
                                            std::to_string(h3) + ":9:2"});
    calls.clear();
    answers[h2] = PMIX_EVENT_ACTION_COMPLETE;
    deliver(event{9, {"ns", 1}, PMIX_RANGE_LOCAL, {}}, post);
    drain();
    CHECK(calls == std::vector<std::string>{std::to_string(h1) + ":9:0", std::to_string(h2) + ":9:1"});
    calls.clear();
    deliver(event{11, {"ns", 1}, PMIX_RANGE_LOCAL, flags({PMIX_EVENT_NON_DEFAULT})}, post);
    CHECK(queue.empty());  // nobody wants it: nothing is posted
    r.clear();
  }

  TEST_CASE("ranges as the notifier sees them") {
    const proc_id me{"job", 1};
    auto ev = [](pmix_data_range_t range, info_list info = {}) {
      return event{5, {"job", 1}, range, std::move(info)};
    };
    for (auto range : {PMIX_RANGE_PROC_LOCAL, PMIX_RANGE_LOCAL, PMIX_RANGE_SESSION, PMIX_RANGE_GLOBAL,
                       PMIX_RANGE_UNDEF})
      CHECK(reaches(ev(range), me, me));
    CHECK_FALSE(reaches(ev(PMIX_RANGE_RM), me, me));
    CHECK(reaches(ev(PMIX_RANGE_NAMESPACE), me, me));
    CHECK_FALSE(reaches(ev(PMIX_RANGE_NAMESPACE), me, proc_id{"other", 1}));
    array_value procs{PMIX_PROC, {value::proc({"job", 2}), value::proc({"tool", rank_wildcard})}};
    const info_list custom{{PMIX_EVENT_CUSTOM_RANGE, value::array(procs), 0}};
    CHECK(custom_range(custom).size() == 2);
    CHECK_FALSE(reaches(ev(PMIX_RANGE_CUSTOM, custom), me, me));
    CHECK(reaches(ev(PMIX_RANGE_CUSTOM, custom), me, proc_id{"job", 2}));
    CHECK(reaches(ev(PMIX_RANGE_CUSTOM, custom), me, proc_id{"tool", 17}));
    const info_list one{{PMIX_EVENT_CUSTOM_RANGE, value::proc({"job", 1}), 0}};
    CHECK(reaches(ev(PMIX_RANGE_CUSTOM, one), me, me));
    CHECK(for_default_handlers(ev(PMIX_RANGE_LOCAL)));
    CHECK_FALSE(for_default_handlers(ev(PMIX_RANGE_LOCAL, {{PMIX_EVENT_NON_DEFAULT, value::boolean(true), 0}})));
  }
}
