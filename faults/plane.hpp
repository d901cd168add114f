// The fault plane (issue 18): seeded, replayable faults at the server's
// actor boundaries, off unless a plan is given (PMIX_CXX_FAULTS, or the
// server-init attribute "pmix.cxx.faults"). docs/fault-injection.md has the
// plan language, where each fault point sits, and what replays exactly.
//
// The runtime owns at most one plane (server_context::faults, null when
// off): every point asks `if (ctx->faults)` first, so a server without a
// plan pays one predictable branch and allocates nothing.
//
// Thread-safe: points are reached from the loop thread and, for host
// answers, from host threads; one mutex, taken only when a plane exists.
#pragma once

#include <pmix_common.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace pmix::faults {

enum class action : std::uint8_t {
  none,
  drop,     // a client's message is lost (a request: its connection breaks)
  delay,    // handled `ms` later
  dup,      // handled twice
  reorder,  // handled after the connection's next message
  kill,     // the `victim` actor ends abnormally, mid-step
  cut,      // the client's socket is shut, mid-step
  fail,     // a host up-call answers `status`
  timeout,  // a host up-call answers PMIX_ERR_TIMEOUT after `ms`
  twice,    // a host up-call answers twice
  late,     // a host up-call answers `ms` late
};

enum class victim : std::uint8_t { peer, rank, nspace };

const char* name(action a);

// One rule of a plan: `action:step[:selector...]`.
struct rule {
  action what = action::none;
  std::string step;              // a protocol step or up-call name; "*" any
  std::optional<std::uint32_t> rank;
  std::string nspace;            // empty: any
  std::uint64_t n = 0;           // the n-th matching occurrence in each namespace only (0: every)
  int ms = 0;                    // delay / late / timeout
  pmix_status_t status = PMIX_ERROR;  // fail
  victim who = victim::peer;     // kill
};

// A random plan: at each point, with probability `rate`, one of `kinds`
// (decided from the seed, the step, the namespace, the rank and that
// (step, namespace, rank)'s occurrence count, so it is the same whatever
// order points come in). The namespace enters as its stable name
// (plane::stable_name): a launcher that puts its pid in the name gets the
// same decisions run after run.
struct random_spec {
  double rate = 0;
  std::vector<action> kinds;  // of the message kinds (drop, delay, dup, reorder, cut, kill)
};

struct plan {
  std::vector<rule> rules;
  std::optional<random_spec> random;
};

// The plan language (docs/fault-injection.md). False and `error` on a bad plan.
bool parse(const std::string& text, plan& out, std::string& error);
std::string format(const rule& r);
std::string format(const plan& p);

// Where a point sits. Client messages are seen by the peer actor as they
// are delivered to it (step = the request's type: init, commit, fence, get,
// finalize, ...); `init_ack` after the connect reply is written; up-calls
// by their pmix_server_module_t name.
enum class point_kind : std::uint8_t { message, upcall };

struct decision {
  action what = action::none;
  int ms = 0;
  pmix_status_t status = PMIX_SUCCESS;
  victim who = victim::peer;
  explicit operator bool() const { return what != action::none; }
};

// Which actions a point can carry out (a bit per action): most points
// all; a point after a step's reply only cut and kill.
constexpr std::uint32_t bit(action a) { return 1u << static_cast<unsigned>(a); }
constexpr std::uint32_t every_action = ~0u;
constexpr std::uint32_t after_step = bit(action::cut) | bit(action::kill);

class plane {
 public:
  plane(plan p, std::uint64_t seed);
  ~plane();  // joins the timer thread; answers not given yet are dropped
  plane(const plane&) = delete;
  plane& operator=(const plane&) = delete;

  // Parses `text` (empty: no plane).
  static std::shared_ptr<plane> make(const std::string& text, std::uint64_t seed, std::string& error);

  // The decision at one point (recorded in the trace when not none).
  decision at(point_kind kind, const char* step, const std::string& nspace, std::uint32_t rank,
             std::uint32_t allowed = every_action);
  // `nspace` with every number equal to this process's id written `{pid}`
  // ("pmixrun.4242.tool.0" -> "pmixrun.{pid}.tool.0" in pmixrun 4242):
  // what occurrences are counted by, what the random draw mixes in and
  // what the trace names, so they are the same from run to run. A rule's
  // `nspace=` matches either form.
  std::string stable_name(const std::string& nspace) const;
  // Disarmed (the plan's faults stop; the ledger goes on): for a check
  // that the server still serves a new client.
  void disarm();

  // The answer ledger: every request a client sends must be answered
  // exactly once while its connection is open. `request` when a request
  // is delivered, `answer` when a reply with its id is written, `closed`
  // when the connection ends (whatever was pending is then answered by the
  // end of the stream).
  void request(std::uint64_t conn, std::uint64_t id);
  void answer(std::uint64_t conn, std::uint64_t id);
  void closed(std::uint64_t conn);

  // Runs `f` on the plane's timer thread after `ms` (late and timed-out
  // host answers). Dropped when the plane goes.
  void after(int ms, std::function<void()> f);
  // Stops the timer thread (finalize): answers not given yet are dropped.
  void stop();

  struct report {
    std::string plan;               // the plan as given
    std::uint64_t seed = 0;
    std::vector<std::string> trace;  // the decisions, in order (explicit rules)
    std::uint64_t trace_hash = 0;   // over the trace in order
    std::uint64_t set_hash = 0;     // over the decisions in any order
    std::vector<std::string> violations;  // of the answer ledger
    std::size_t pending = 0;        // requests unanswered on open connections
  };
  report snapshot() const;

 private:
  plan plan_;
  std::string text_;
  std::uint64_t seed_;
  mutable std::mutex mutex_;
  bool armed_ = true;
  std::map<std::pair<std::size_t, std::string>, std::uint64_t> matches_;  // per (rule, stable namespace)
  std::string pid_;  // this process's id, in decimal
  std::map<std::tuple<std::string, std::string, std::uint32_t>, std::uint64_t> occurrences_;  // (step, stable namespace, rank)
  std::vector<std::string> trace_;
  std::uint64_t trace_hash_;
  std::uint64_t set_hash_ = 0;
  std::map<std::pair<std::uint64_t, std::uint64_t>, int> pending_;
  std::vector<std::string> violations_;

  void record(const std::string& entry);

  // The timer thread, started by the first `after`.
  std::mutex timer_mutex_;
  std::condition_variable timer_cv_;
  std::multimap<std::chrono::steady_clock::time_point, std::function<void()>> timers_;
  std::thread timer_;
  bool timer_stop_ = false;
  void run_timers();

};

// A 64-bit FNV-1a hash (the trace hashes).
std::uint64_t fnv1a(const std::string& s, std::uint64_t h = 1469598103934665603ull);

}  // namespace pmix::faults
