// pmixsim: a large node in one process (docs/simulator.md).
//
//   pmixsim --scenario NAME[,NAME...] --clients N [--nodes K] [--rounds R]
//           [--seed S] [--csv FILE] [--plot FILE] [--sweep N1,N2,...]
//           [--faults PLAN [--shrink]] [--stuck-s S]
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tools/pmixsim/driver.hpp"

namespace pmixsim {
namespace {

void usage(std::FILE* f) {
  std::fputs(
      "usage: pmixsim --scenario NAME[,NAME...] [--clients N (100)] [--nodes K] [--rounds R] [--seed S]\n"
      "               [--csv FILE] [--plot FILE] [--sweep N1,N2,...] [--gets G] [--crash-percent P]\n"
      "               [--faults PLAN] (the fault plane, docs/fault-injection.md; seeded by --seed)\n"
      "               [--shrink] (a failing run under --faults: rerun to a minimal plan)\n"
      "               [--stuck-s S] (fail when no step was done for S seconds; 30)\n"
      "               [--spread] (each node's clients in its server's process; the default\n"
      "               when this process cannot hold every client's descriptor)\n"
      "scenarios: startup fence cycle tools crash dereg mixed (docs/simulator.md)\n",
      f);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in{s};
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

bool number(const char* text, std::uint64_t& out) {
  if (text == nullptr || *text == '\0') return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtoull(text, &end, 10);
  return *end == '\0' && errno == 0;
}

// The injected misbehaviours the tests use to show that a broken server is
// caught (PMIXSIM_INJECT): dup-fence-reply delivers client 0's fence
// replies twice.
struct injected : fault_hooks {
  std::string what;
  int deliver(std::uint32_t c, std::uint8_t kind) override {
    if (what == "dup-fence-reply" && c == 0 && kind == 15) return 2;
    return 1;
  }
};

double percentile(std::vector<std::uint32_t> v, double q) {
  if (v.empty()) return 0;
  const auto k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

void summary(const result& r) {
  std::printf("pmixsim: %u clients on %u node(s), scenario %s, seed %" PRIu64 "\n", r.clients, r.nodes,
              r.names.c_str(), r.seed);
  std::printf("  wall time        %.3f s (%.1f us per client)\n", r.wall_s,
              r.wall_s * 1e6 / std::max<std::uint32_t>(1, r.clients));
  std::printf("  clients          %s\n", r.spread ? "beside each node's server, in its process (--spread)"
                                                  : "in this process");
  std::printf("  operations       %" PRIu64 " (%.0f per second)\n", r.ops, r.wall_s > 0 ? r.ops / r.wall_s : 0.0);
  std::printf("  received         %.1f MB by the clients (%.1f kB per client)\n", r.bytes_in / 1e6,
              r.bytes_in / 1e3 / std::max<std::uint32_t>(1, r.clients));
  std::printf("  mapped           %.1f MB of shared data (the servers wrote each once)\n", r.bytes_shared / 1e6);
  std::printf("  %-14s %10s %10s %10s\n", "operation", "count", "p50 us", "p99 us");
  for (int k = 0; k < op_count; ++k) {
    const auto& v = r.latency_us[k];
    if (v.empty()) continue;
    std::printf("  %-14s %10zu %10.0f %10.0f\n", op_name(static_cast<op>(k)), v.size(), percentile(v, 0.5),
                percentile(v, 0.99));
  }
  std::printf("  server memory    %.0f bytes per connected client (heap, all nodes)\n", r.memory_per_client);
  for (std::uint32_t n = 0; n < r.connected.size() && n < r.baseline.size(); ++n)
    std::printf("    node %u: heap %+.1f MB, RssAnon %+.1f MB once connected (%u clients, %.0f bytes each)\n", n,
                (r.connected[n].heap - r.baseline[n].heap) / 1e6,
                (r.connected[n].rss_kb - r.baseline[n].rss_kb) / 1e3,
                n < r.counted_per_node.size() ? r.counted_per_node[n] : 0,
                n < r.counted_per_node.size() && r.counted_per_node[n] > 0
                    ? static_cast<double>(r.connected[n].heap - r.baseline[n].heap) / r.counted_per_node[n]
                    : 0.0);
  if (!r.fault_report.empty()) {
    std::printf("  faults           %" PRIu64 " injected, %" PRIu64 " clients gave up (an error or a closed connection)\n",
                r.injected, r.broken);
    for (const auto& line : r.fault_report) std::printf("    %s\n", line.c_str());
    // Its steps may not fail: an ok run means it was served.
    if (r.ok()) std::printf("  after faults     a new job served: one process per node, planes disarmed\n");
  }
  for (const auto& f : r.failures) std::printf("  FAILED: %s\n", f.c_str());
}

std::string last_line(const result& r) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "pmixsim: scenario=%s clients=%u nodes=%u seed=%" PRIu64 " wall_s=%.3f trace=%016" PRIx64 " ",
                r.names.c_str(), r.clients, r.nodes, r.seed, r.wall_s, r.trace);
  return buf + (r.ok() ? std::string{"ok"} : "FAILED: " + r.failures.front());
}

// A word as a shell reads it back.
std::string quoted(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,/:@%") ==
                           std::string::npos)
    return word;
  std::string out = "'";
  for (char ch : word) out += ch == '\'' ? std::string{"'\\''"} : std::string(1, ch);
  return out + "'";
}

std::string command_line(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& a : args) out += (out.empty() ? "" : " ") + quoted(a);
  return out;
}

// `args` (argv without --shrink) with the fault plan replaced.
std::vector<std::string> with_plan(std::vector<std::string> args, const std::string& plan) {
  for (std::size_t k = 0; k + 1 < args.size(); ++k)
    if (args[k] == "--faults") args[k + 1] = plan;
  return args;
}

std::string joined(const std::vector<std::string>& rules) {
  std::string out;
  for (const auto& r : rules) out += (out.empty() ? "" : "; ") + r;
  return out;
}

// Runs this program again with `args` (its output discarded); its exit status
// (-1 if it could not run or was killed).
int rerun(const std::vector<std::string>& args) {
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, 1), ::dup2(null, 2);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv("/proc/self/exe", argv.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// --shrink: the decisions the failing runs' planes made, each an explicit
// rule; a rule is dropped when the run still fails without it (as pmixrun
// --shrink does). Prints each step and the minimal plan.
void shrink(const std::vector<std::string>& args, const std::vector<result>& runs) {
  std::vector<std::string> rules;
  for (const auto& r : runs) {
    if (r.ok()) continue;
    for (const auto& line : r.fault_report) {
      const auto at = line.find(": injected ");
      if (at == std::string::npos) continue;
      const auto rule = line.substr(at + 11);
      if (std::find(rules.begin(), rules.end(), rule) == rules.end()) rules.push_back(rule);
    }
  }
  if (rules.empty()) {
    std::printf("pmixsim: shrink: no fault was injected: nothing to shrink\n");
    return;
  }
  if (rerun(with_plan(args, joined(rules))) != 1) {
    std::printf("pmixsim: shrink: the injected decisions as explicit rules do not fail again: '%s'\n",
                joined(rules).c_str());
    return;
  }
  for (std::size_t k = 0; k < rules.size() && rules.size() > 1;) {
    auto fewer = rules;
    fewer.erase(fewer.begin() + static_cast<std::ptrdiff_t>(k));
    if (rerun(with_plan(args, joined(fewer))) == 1) {
      std::printf("pmixsim: shrink: still failing without %s\n", rules[k].c_str());
      std::fflush(stdout);
      rules = std::move(fewer);
    } else {
      ++k;
    }
  }
  std::printf("pmixsim: faults: minimal plan: '%s'\n", joined(rules).c_str());
  std::printf("pmixsim: faults: replay: %s\n", command_line(with_plan(args, joined(rules))).c_str());
}

bool write_csv(const std::string& file, const std::vector<result>& runs) {
  std::ofstream out{file};
  out << "scenario,clients,nodes,seed,wall_s,ops,ops_per_s,memory_per_client_bytes";
  for (int k = 0; k < op_count; ++k)
    out << ',' << op_name(static_cast<op>(k)) << "_p50_us," << op_name(static_cast<op>(k)) << "_p99_us";
  out << ",trace,ok\n";
  for (const auto& r : runs) {
    char trace[32];
    std::snprintf(trace, sizeof trace, "%016" PRIx64, r.trace);
    out << '"' << r.names << "\"," << r.clients << ',' << r.nodes << ',' << r.seed << ',' << r.wall_s << ',' << r.ops
        << ',' << (r.wall_s > 0 ? r.ops / r.wall_s : 0) << ',' << static_cast<long long>(r.memory_per_client);
    for (int k = 0; k < op_count; ++k)
      out << ',' << percentile(r.latency_us[k], 0.5) << ',' << percentile(r.latency_us[k], 0.99);
    out << ',' << trace << ',' << (r.ok() ? 1 : 0) << '\n';
  }
  return static_cast<bool>(out);
}

// Cost against N: wall time, and wall time per client, one point per run.
bool write_plot(const std::string& file, const std::vector<result>& runs) {
  const double w = 640, h = 400, left = 70, right = 70, top = 40, bottom = 50;
  double max_n = 1, max_s = 1e-6, max_per = 1e-9;
  for (const auto& r : runs) {
    max_n = std::max(max_n, static_cast<double>(r.clients));
    max_s = std::max(max_s, r.wall_s);
    max_per = std::max(max_per, 1e6 * r.wall_s / r.clients);
  }
  auto x = [&](double n) { return left + (w - left - right) * n / max_n; };
  auto y = [&](double v, double max) { return h - bottom - (h - top - bottom) * v / (max * 1.1); };
  std::ofstream out{file};
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  out << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out << "<text x=\"" << w / 2 << "\" y=\"20\" text-anchor=\"middle\">pmixsim " << (runs.empty() ? "" : runs[0].names)
      << ": cost against N (" << (runs.empty() ? 1 : runs[0].nodes) << " node(s))</text>\n";
  out << "<line x1=\"" << left << "\" y1=\"" << h - bottom << "\" x2=\"" << w - right << "\" y2=\"" << h - bottom
      << "\" stroke=\"black\"/>\n<line x1=\"" << left << "\" y1=\"" << top << "\" x2=\"" << left << "\" y2=\""
      << h - bottom << "\" stroke=\"black\"/>\n";
  out << "<text x=\"" << w / 2 << "\" y=\"" << h - 12 << "\" text-anchor=\"middle\">clients (N)</text>\n";
  out << "<text x=\"15\" y=\"" << h / 2 << "\" fill=\"steelblue\" transform=\"rotate(-90 15 " << h / 2
      << ")\" text-anchor=\"middle\">wall time (s)</text>\n";
  out << "<text x=\"" << w - 15 << "\" y=\"" << h / 2 << "\" fill=\"darkorange\" transform=\"rotate(90 " << w - 15
      << " " << h / 2 << ")\" text-anchor=\"middle\">wall time per client (us)</text>\n";
  for (int k = 0; k <= 4; ++k) {
    const double n = max_n * k / 4;
    out << "<text x=\"" << x(n) << "\" y=\"" << h - bottom + 16 << "\" text-anchor=\"middle\">"
        << static_cast<long>(n) << "</text>\n";
    const double s = max_s * 1.1 * k / 4, per = max_per * 1.1 * k / 4;
    char a[32], b[32];
    std::snprintf(a, sizeof a, "%.3g", s);
    std::snprintf(b, sizeof b, "%.3g", per);
    out << "<text x=\"" << left - 6 << "\" y=\"" << y(s, max_s) + 4 << "\" text-anchor=\"end\" fill=\"steelblue\">"
        << a << "</text>\n";
    out << "<text x=\"" << w - right + 6 << "\" y=\"" << y(per, max_per) + 4 << "\" fill=\"darkorange\">" << b
        << "</text>\n";
  }
  std::string wall, per;
  for (const auto& r : runs) {
    wall += std::to_string(x(r.clients)) + "," + std::to_string(y(r.wall_s, max_s)) + " ";
    per += std::to_string(x(r.clients)) + "," + std::to_string(y(1e6 * r.wall_s / r.clients, max_per)) + " ";
  }
  out << "<polyline fill=\"none\" stroke=\"steelblue\" stroke-width=\"2\" points=\"" << wall << "\"/>\n";
  out << "<polyline fill=\"none\" stroke=\"darkorange\" stroke-width=\"2\" stroke-dasharray=\"5,3\" points=\"" << per
      << "\"/>\n";
  for (const auto& r : runs)
    out << "<circle cx=\"" << x(r.clients) << "\" cy=\"" << y(r.wall_s, max_s) << "\" r=\"3\" fill=\"steelblue\"/>\n";
  out << "</svg>\n";
  return static_cast<bool>(out);
}

int main_(int argc, char** argv) {
  options o;
  std::string scenarios;
  std::vector<std::string> args{argv[0]};  // the command line, but --shrink (to replay)
  for (int k = 1; k < argc; ++k)
    if (std::strcmp(argv[k], "--shrink") != 0) args.push_back(argv[k]);
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    const char* v = k + 1 < argc ? argv[k + 1] : nullptr;
    std::uint64_t n = 0;
    auto want_number = [&](const char* name) {
      if (!number(v, n)) {
        std::fprintf(stderr, "pmixsim: %s needs a number\n", name);
        std::exit(2);
      }
      ++k;
    };
    if (a == "--scenario" && v != nullptr) {
      scenarios = v, ++k;
    } else if (a == "--clients") {
      want_number("--clients"), o.clients = static_cast<std::uint32_t>(n);
    } else if (a == "--nodes") {
      want_number("--nodes"), o.nodes = static_cast<std::uint32_t>(n);
    } else if (a == "--rounds") {
      want_number("--rounds"), o.rounds = static_cast<std::uint32_t>(n);
    } else if (a == "--seed") {
      want_number("--seed"), o.seed = n;
    } else if (a == "--gets") {
      want_number("--gets"), o.gets = static_cast<std::uint32_t>(std::min<std::uint64_t>(n, 255));
    } else if (a == "--crash-percent") {
      want_number("--crash-percent"), o.crash_percent = static_cast<std::uint32_t>(std::min<std::uint64_t>(n, 100));
    } else if (a == "--csv" && v != nullptr) {
      o.csv = v, ++k;
    } else if (a == "--plot" && v != nullptr) {
      o.plot = v, ++k;
    } else if (a == "--faults" && v != nullptr) {
      o.faults = v, ++k;
    } else if (a == "--shrink") {
      o.shrink = true;
    } else if (a == "--spread") {
      o.spread = true;
    } else if (a == "--stuck-s") {
      want_number("--stuck-s");
      if (n == 0 || n > 3600) {
        std::fprintf(stderr, "pmixsim: --stuck-s takes 1 to 3600 seconds\n");
        return 2;
      }
      o.stuck_s = static_cast<std::uint32_t>(n);
    } else if (a == "--sweep" && v != nullptr) {
      for (const auto& s : split(v)) {
        if (!number(s.c_str(), n) || n == 0) {
          std::fprintf(stderr, "pmixsim: --sweep takes client counts, such as 1000,2000,5000\n");
          return 2;
        }
        o.sweep.push_back(static_cast<std::uint32_t>(n));
      }
      ++k;
    } else if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "pmixsim: unknown or incomplete argument '%s'\n", a.c_str());
      usage(stderr);
      return 2;
    }
  }
  o.scenarios = split(scenarios);
  if (const char* inject = std::getenv("PMIXSIM_INJECT")) o.inject = inject;
  o.progress = ::isatty(2) != 0;
  injected hooks;
  hooks.what = o.inject;

  std::vector<std::uint32_t> sizes = o.sweep.empty() ? std::vector<std::uint32_t>{o.clients} : o.sweep;
  std::vector<result> runs;
  bool ok = true;
  for (auto n : sizes) {
    options one = o;
    one.clients = n;
    plan p;
    std::string error;
    if (!build_plan(one, p, error)) {
      std::fprintf(stderr, "pmixsim: %s\n", error.c_str());
      usage(stderr);
      return 2;
    }
    runs.push_back(run(p, hooks));
    summary(runs.back());
    std::fflush(stdout);
    ok = ok && runs.back().ok();
  }
  if (!o.csv.empty() && !write_csv(o.csv, runs)) {
    std::fprintf(stderr, "pmixsim: cannot write %s\n", o.csv.c_str());
    ok = false;
  }
  if (!o.plot.empty() && !write_plot(o.plot, runs)) {
    std::fprintf(stderr, "pmixsim: cannot write %s\n", o.plot.c_str());
    ok = false;
  }
  if (!ok && !o.faults.empty()) {
    // The one command that replays the failing run (docs/fault-injection.md).
    std::printf("pmixsim: faults: replay: %s\n", command_line(args).c_str());
    std::fflush(stdout);
    if (o.shrink) shrink(args, runs);
  }
  if (o.shrink && o.faults.empty()) std::printf("pmixsim: --shrink needs --faults: ignored\n");
  if (runs.size() > 1) {
    // Linearity of the sweep: cost per client at the largest N against the smallest.
    const auto& a = runs.front();
    const auto& b = runs.back();
    std::printf("pmixsim: sweep: %u clients cost %.2fx %u clients (%.2fx the clients)\n", b.clients,
                b.wall_s / std::max(a.wall_s, 1e-9), a.clients, static_cast<double>(b.clients) / a.clients);
  }
  for (const auto& r : runs) std::printf("%s\n", last_line(r).c_str());
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace pmixsim

int main(int argc, char** argv) { return pmixsim::main_(argc, argv); }
