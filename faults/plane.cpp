#include "faults/plane.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <cctype>

#include <unistd.h>

namespace pmix::faults {
namespace {

constexpr std::uint32_t any_rank = PMIX_RANK_WILDCARD;

struct action_name {
  action a;
  const char* text;
};
constexpr action_name action_names[] = {
    {action::drop, "drop"},   {action::delay, "delay"},     {action::dup, "dup"},
    {action::reorder, "reorder"}, {action::kill, "kill"},   {action::cut, "cut"},
    {action::fail, "fail"},   {action::timeout, "timeout"}, {action::twice, "twice"},
    {action::late, "late"},
};

bool is_upcall_action(action a) {
  return a == action::fail || a == action::timeout || a == action::twice || a == action::late;
}

// The steps a client's messages name (the peer actor's delivery point).
constexpr const char* message_steps[] = {
    "init", "init_ack", "connect_answer", "commit", "fence", "get", "finalize", "abort", "job_control", "notify",
    "query", "publish", "lookup", "unpublish", "spawn", "connect_procs", "log", "host", "group"};
// The host up-calls (pmix_server_module_t names).
constexpr const char* upcall_steps[] = {
    "client_connected", "client_finalized", "abort", "fence_nb", "direct_modex", "tool_connected",
    "job_control", "query", "notify_event", "publish", "lookup", "unpublish", "spawn", "connect",
    "disconnect", "log", "allocate", "monitor", "get_credential", "validate_credential", "iof_pull",
    "push_stdin", "fabric", "group"};

template <std::size_t N>
bool known(const char* const (&names)[N], const std::string& s) {
  return s == "*" || std::any_of(std::begin(names), std::end(names), [&](const char* n) { return s == n; });
}

std::string alias(const std::string& step) {
  if (step == "fence_contribution") return "fence";
  if (step == "put") return "commit";
  if (step == "dmodex") return "get";
  return step;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\n");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\n") - b + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t b = 0;
  for (;;) {
    const auto e = s.find(sep, b);
    out.push_back(trim(s.substr(b, e == std::string::npos ? std::string::npos : e - b)));
    if (e == std::string::npos) return out;
    b = e + 1;
  }
}

bool number(const std::string& s, long long lo, long long hi, long long& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtoll(s.c_str(), &end, 10);
  return *end == '\0' && out >= lo && out <= hi;
}

std::optional<action> action_of(const std::string& s) {
  for (const auto& n : action_names)
    if (s == n.text) return n.a;
  return std::nullopt;
}

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

bool parse_rule(const std::string& text, plan& out, std::string& error) {
  const auto fields = split(text, ':');
  if (fields[0] == "random") {
    random_spec r;
    for (std::size_t k = 1; k < fields.size(); ++k) {
      const auto eq = fields[k].find('=');
      const auto key = fields[k].substr(0, eq);
      const auto val = eq == std::string::npos ? std::string{} : fields[k].substr(eq + 1);
      if (key == "rate") {
        char* end = nullptr;
        r.rate = std::strtod(val.c_str(), &end);
        if (val.empty() || *end != '\0' || r.rate < 0 || r.rate > 1) {
          error = "random: rate must be a number from 0 to 1";
          return false;
        }
      } else if (key == "kinds") {
        for (const auto& k2 : split(val, ',')) {
          auto a = action_of(k2);
          if (!a) {
            error = "random: unknown kind '" + k2 + "'";
            return false;
          }
          r.kinds.push_back(*a);
        }
      } else {
        error = "random: unknown setting '" + fields[k] + "'";
        return false;
      }
    }
    if (r.kinds.empty())
      r.kinds = {action::delay, action::dup, action::reorder, action::cut, action::kill, action::fail,
                 action::late, action::twice};
    if (out.random) {
      error = "one random part per plan";
      return false;
    }
    out.random = std::move(r);
    return true;
  }
  auto a = action_of(fields[0]);
  if (!a) {
    error = "unknown action '" + fields[0] + "' in '" + text + "'";
    return false;
  }
  rule r;
  r.what = *a;
  std::size_t k = 1;
  if (r.what == action::kill) {
    const std::string who = fields.size() > 1 ? fields[1] : "";
    if (who == "peer") r.who = victim::peer;
    else if (who == "rank") r.who = victim::rank;
    else if (who == "nspace") r.who = victim::nspace;
    else {
      error = "kill names peer, rank or nspace: '" + text + "'";
      return false;
    }
    k = 2;
  } else if (fields.size() > 1 && fields[1].find('=') == std::string::npos) {
    r.step = alias(fields[1]);
    k = 2;
  }
  for (; k < fields.size(); ++k) {
    const auto eq = fields[k].find('=');
    if (eq == std::string::npos) {
      error = "expected name=value, got '" + fields[k] + "' in '" + text + "'";
      return false;
    }
    const auto key = fields[k].substr(0, eq);
    const auto val = fields[k].substr(eq + 1);
    long long v = 0;
    if (key == "rank" && number(val, 0, 0xffffffffll, v)) r.rank = static_cast<std::uint32_t>(v);
    else if (key == "n" && number(val, 1, 1ll << 62, v)) r.n = static_cast<std::uint64_t>(v);
    else if (key == "ms" && number(val, 0, 600000, v)) r.ms = static_cast<int>(v);
    else if (key == "status" && number(val, -100000, 100000, v)) r.status = static_cast<pmix_status_t>(v);
    else if (key == "nspace" && !val.empty()) r.nspace = val;
    else if (key == "at" && r.step.empty()) r.step = alias(val);
    else {
      error = "bad selector '" + fields[k] + "' in '" + text + "'";
      return false;
    }
  }
  if (r.step.empty()) r.step = "*";
  const bool upcall = is_upcall_action(r.what);
  if (upcall ? !known(upcall_steps, r.step) : !known(message_steps, r.step)) {
    error = std::string{"unknown "} + (upcall ? "up-call" : "step") + " '" + r.step + "' in '" + text + "'";
    return false;
  }
  if ((r.what == action::delay || r.what == action::late) && r.ms == 0) r.ms = 10;
  if (r.what == action::timeout && r.ms == 0) r.ms = 100;
  out.rules.push_back(std::move(r));
  return true;
}

}  // namespace

const char* name(action a) {
  for (const auto& n : action_names)
    if (n.a == a) return n.text;
  return "none";
}

std::uint64_t fnv1a(const std::string& s, std::uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

bool parse(const std::string& text, plan& out, std::string& error) {
  out = plan{};
  for (const auto& part : split(text, ';')) {
    if (part.empty()) continue;
    if (!parse_rule(part, out, error)) return false;
  }
  if (out.rules.empty() && !out.random) {
    error = "the plan has no rule";
    return false;
  }
  return true;
}

std::string format(const rule& r) {
  std::string s = name(r.what);
  if (r.what == action::kill) {
    s += r.who == victim::peer ? ":peer" : r.who == victim::rank ? ":rank" : ":nspace";
    s += ":at=" + r.step;
  } else {
    s += ":" + r.step;
  }
  if (r.rank && *r.rank != any_rank) s += ":rank=" + std::to_string(*r.rank);
  if (!r.nspace.empty()) s += ":nspace=" + r.nspace;
  if (r.n != 0) s += ":n=" + std::to_string(r.n);
  if (r.what == action::delay || r.what == action::late || r.what == action::timeout)
    s += ":ms=" + std::to_string(r.ms);
  if (r.what == action::fail) s += ":status=" + std::to_string(r.status);
  return s;
}

std::string format(const plan& p) {
  std::string s;
  for (const auto& r : p.rules) s += (s.empty() ? "" : "; ") + format(r);
  if (p.random) {
    std::string kinds;
    for (auto a : p.random->kinds) kinds += (kinds.empty() ? "" : ",") + std::string{name(a)};
    char rate[32];
    std::snprintf(rate, sizeof rate, "%g", p.random->rate);
    s += (s.empty() ? "" : "; ") + std::string{"random:rate="} + rate + ":kinds=" + kinds;
  }
  return s;
}

plane::plane(plan p, std::uint64_t seed)
    : plan_(std::move(p)), text_(format(plan_)), seed_(seed),
      pid_(std::to_string(::getpid())), trace_hash_(fnv1a(std::to_string(seed))) {}

std::string plane::stable_name(const std::string& nspace) const {
  std::string out;
  out.reserve(nspace.size());
  for (std::size_t k = 0; k < nspace.size();) {
    if (!std::isdigit(static_cast<unsigned char>(nspace[k]))) {
      out += nspace[k++];
      continue;
    }
    std::size_t e = k;
    while (e < nspace.size() && std::isdigit(static_cast<unsigned char>(nspace[e]))) ++e;
    const auto run = nspace.substr(k, e - k);
    out += run == pid_ ? "{pid}" : run;
    k = e;
  }
  return out;
}

plane::~plane() { stop(); }

std::shared_ptr<plane> plane::make(const std::string& text, std::uint64_t seed, std::string& error) {
  if (trim(text).empty()) return nullptr;
  plan p;
  if (!parse(text, p, error)) return nullptr;
  return std::make_shared<plane>(std::move(p), seed);
}

void plane::disarm() {
  std::lock_guard<std::mutex> guard{mutex_};
  armed_ = false;
}

decision plane::at(point_kind kind, const char* step, const std::string& nspace, std::uint32_t rank,
                   std::uint32_t allowed) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (!armed_) return {};
  const auto stable = stable_name(nspace);
  const std::uint64_t occurrence = ++occurrences_[{step, stable, rank}];
  const rule* chosen = nullptr;
  for (std::size_t k = 0; k < plan_.rules.size(); ++k) {
    const auto& r = plan_.rules[k];
    if (is_upcall_action(r.what) != (kind == point_kind::upcall) || !(allowed & bit(r.what))) continue;
    if (r.step != "*" && r.step != step) continue;
    if (r.rank && *r.rank != rank) continue;
    if (!r.nspace.empty() && r.nspace != nspace && r.nspace != stable) continue;
    const auto seen = ++matches_[{k, stable}];
    if (chosen == nullptr && (r.n == 0 || r.n == seen)) chosen = &r;
  }
  rule drawn;
  if (chosen == nullptr && plan_.random && plan_.random->rate > 0) {
    // The same (seed, step, namespace, rank, occurrence) draws the same
    // fault, whatever order the points come in.
    std::uint64_t h = mix(seed_ ^ mix(fnv1a(step) ^ mix(fnv1a(stable) ^ mix(rank ^ (occurrence << 32)))));
    const double u = static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);
    std::vector<action> kinds;
    for (auto a : plan_.random->kinds)
      if (is_upcall_action(a) == (kind == point_kind::upcall) && (allowed & bit(a))) kinds.push_back(a);
    if (u < plan_.random->rate && !kinds.empty()) {
      h = mix(h);
      drawn.what = kinds[h % kinds.size()];
      drawn.ms = 1 + static_cast<int>((h >> 16) % 50);
      drawn.status = PMIX_ERROR;
      drawn.who = victim::peer;
      chosen = &drawn;
    }
  }
  if (chosen == nullptr) return {};
  // The trace holds each decision as the explicit rule that replays it.
  rule entry = *chosen;
  entry.step = step;
  entry.rank = rank;
  entry.nspace = stable;
  entry.n = occurrence;
  record(format(entry));
  return decision{chosen->what, chosen->ms, chosen->status, chosen->who};
}

void plane::record(const std::string& entry) {
  trace_.push_back(entry);
  trace_hash_ = fnv1a(entry, mix(trace_hash_));
  set_hash_ += mix(fnv1a(entry));
}

void plane::request(std::uint64_t conn, std::uint64_t id) {
  std::lock_guard<std::mutex> guard{mutex_};
  ++pending_[{conn, id}];
}

void plane::answer(std::uint64_t conn, std::uint64_t id) {
  std::lock_guard<std::mutex> guard{mutex_};
  auto it = pending_.find({conn, id});
  if (it == pending_.end()) {
    if (violations_.size() < 100)
      violations_.push_back("connection " + std::to_string(conn) + ": request " + std::to_string(id) +
                            " answered more often than asked");
    return;
  }
  if (--it->second == 0) pending_.erase(it);
}

void plane::closed(std::uint64_t conn) {
  std::lock_guard<std::mutex> guard{mutex_};
  pending_.erase(pending_.lower_bound({conn, 0}), pending_.lower_bound({conn + 1, 0}));
}

void plane::after(int ms, std::function<void()> f) {
  std::lock_guard<std::mutex> guard{timer_mutex_};
  if (timer_stop_) return;
  if (!timer_.joinable()) timer_ = std::thread([this] { run_timers(); });
  timers_.emplace(std::chrono::steady_clock::now() + std::chrono::milliseconds(ms), std::move(f));
  timer_cv_.notify_one();
}

void plane::run_timers() {
  std::unique_lock<std::mutex> lock{timer_mutex_};
  while (!timer_stop_) {
    if (timers_.empty()) {
      timer_cv_.wait(lock);
      continue;
    }
    const auto when = timers_.begin()->first;
    if (std::chrono::steady_clock::now() < when) {
      timer_cv_.wait_until(lock, when);
      continue;
    }
    auto f = std::move(timers_.begin()->second);
    timers_.erase(timers_.begin());
    lock.unlock();
    f();
    lock.lock();
  }
}

void plane::stop() {
  decltype(timers_) dropped;
  {
    std::lock_guard<std::mutex> guard{timer_mutex_};
    timer_stop_ = true;
    timer_cv_.notify_all();
  }
  if (timer_.joinable()) {
    if (timer_.get_id() == std::this_thread::get_id()) timer_.detach();  // its last answer held the plane
    else timer_.join();
  }
  std::lock_guard<std::mutex> guard{timer_mutex_};
  dropped.swap(timers_);
}

plane::report plane::snapshot() const {
  std::lock_guard<std::mutex> guard{mutex_};
  report r;
  r.plan = text_;
  r.seed = seed_;
  r.trace = trace_;
  r.trace_hash = trace_hash_;
  r.set_hash = set_hash_;
  r.violations = violations_;
  r.pending = pending_.size();
  return r;
}

}  // namespace pmix::faults
