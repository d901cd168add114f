#include "upcalls.hpp"

#include <pmix.h>
#include <syslog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "host_thread.hpp"
#include "info.hpp"
#include "stdin.hpp"

namespace pmixrun {
namespace {

host_context* ctx = nullptr;

// Connected groups: each a sorted list of (nspace, rank).
using group = std::vector<std::pair<std::string, pmix_rank_t>>;
std::vector<group> groups;
std::size_t connect_count = 0;
std::size_t tool_count = 0;

// Groups the group up-call constructed, by name. Their context IDs count
// from 2^32, apart from the ones a server assigns itself to groups of its
// own clients (1, 2, ...).
struct host_group {
  group members;
  std::size_t context_id = 0;  // 0: none asked
};
std::map<std::string, host_group> host_groups;
std::size_t next_context_id = std::size_t{1} << 32;

// Allocations granted (PMIX_ALLOC_NEW) and not released: their k in
// "pmixrun.<pid>.alloc.<k>"; 0 is the job's own allocation, this node.
std::set<unsigned long long> allocations;
unsigned long long allocation_count = 0;

group make_group(const pmix_proc_t procs[], std::size_t nprocs) {
  group g;
  for (std::size_t k = 0; k < nprocs; ++k)
    g.emplace_back(std::string(procs[k].nspace, strnlen(procs[k].nspace, PMIX_MAX_NSLEN)),
                   procs[k].rank);
  std::sort(g.begin(), g.end());
  g.erase(std::unique(g.begin(), g.end()), g.end());
  return g;
}

void note(const char* fmt, const std::string& a, const std::string& b = {}) {
  if (ctx->verbose) std::fprintf(stderr, fmt, a.c_str(), b.c_str());
}

std::shared_ptr<info_array> copy_info(const pmix_info_t info[], std::size_t ninfo) {
  auto copy = std::make_shared<info_array>();
  copy->add_copies(info, ninfo);
  return copy;
}

std::optional<pmix_data_range_t> range_of(const info_array& info) {
  if (const pmix_info_t* i = find_info(info.data(), info.size(), PMIX_RANGE))
    if (auto v = as_integer(i->value)) return static_cast<pmix_data_range_t>(*v);
  return std::nullopt;
}

uint32_t uid_of(const info_array& info) {
  if (const pmix_info_t* i = find_info(info.data(), info.size(), PMIX_USERID))
    if (auto v = as_integer(i->value)) return static_cast<uint32_t>(*v);
  return static_cast<uint32_t>(::getuid());  // every client is registered with our uid
}

// Writes all of `text` to fd in one go where the system allows.
void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

std::string prefixed(const std::string& source, const char* msg) {
  std::string out;
  const std::string prefix = "[" + source + "] ";
  const char* p = msg;
  do {
    const char* nl = std::strchr(p, '\n');
    const std::size_t len = nl != nullptr ? static_cast<std::size_t>(nl - p) : std::strlen(p);
    out += prefix;
    out.append(p, len);
    out += '\n';
    p = nl != nullptr ? nl + 1 : p + len;
  } while (*p != '\0');
  return out;
}

}  // namespace

pmix_status_t store_publish(datastore& store, const pmix_proc_t& who, const pmix_info_t info[],
                            std::size_t ninfo, bool verbose) {
  info_array copy;
  copy.add_copies(info, ninfo);
  pmix_data_range_t range = range_of(copy).value_or(PMIX_RANGE_SESSION);
  pmix_persistence_t persistence = PMIX_PERSIST_SESSION;
  if (const pmix_info_t* i = find_info(copy.data(), copy.size(), PMIX_PERSISTENCE))
    if (auto v = as_integer(i->value)) persistence = static_cast<pmix_persistence_t>(*v);
  std::vector<datastore::item> items;
  std::string keys;
  for (std::size_t k = 0; k < copy.size(); ++k) {
    const pmix_info_t& i = copy.data()[k];
    // The directives (the library adds the client's uid and gid).
    if (PMIX_CHECK_KEY(&i, PMIX_RANGE) || PMIX_CHECK_KEY(&i, PMIX_PERSISTENCE) ||
        PMIX_CHECK_KEY(&i, PMIX_USERID) || PMIX_CHECK_KEY(&i, PMIX_GRPID) ||
        PMIX_CHECK_KEY(&i, PMIX_TIMEOUT))
      continue;
    items.emplace_back(std::string(i.key, strnlen(i.key, PMIX_MAX_KEYLEN)), &i.value);
    keys += (keys.empty() ? "" : " ") + items.back().first;
  }
  const pmix_status_t rc =
      items.empty() ? PMIX_ERR_BAD_PARAM : store.publish(who, uid_of(copy), range, persistence, items);
  if (verbose)
    std::fprintf(stderr, "pmixrun: %s published %s (range %d, persistence %d): %s\n", to_string(who).c_str(),
                 keys.c_str(), static_cast<int>(range), static_cast<int>(persistence), PMIx_Error_string(rc));
  return rc;
}

void store_lookup(datastore& store, const pmix_proc_t& who, const std::vector<std::string>& keys,
                  const pmix_info_t info[], std::size_t ninfo, bool verbose, pmix_lookup_cbfunc_t cbfunc,
                  void* cbdata) {
  info_array copy;
  copy.add_copies(info, ninfo);
  const bool wait = flag(copy.data(), copy.size(), PMIX_WAIT);
  std::optional<datastore::clock::time_point> deadline;
  if (const pmix_info_t* i = find_info(copy.data(), copy.size(), PMIX_TIMEOUT))
    if (auto v = as_integer(i->value); v && *v > 0) deadline = datastore::clock::now() + std::chrono::seconds(*v);
  if (verbose) {
    std::string list;
    for (const auto& k : keys) list += (list.empty() ? "" : " ") + k;
    std::fprintf(stderr, "pmixrun: %s looks up %s%s\n", to_string(who).c_str(), list.c_str(), wait ? " (wait)" : "");
  }
  store.lookup(who, uid_of(copy), keys, range_of(copy), wait, deadline, cbfunc, cbdata);
}

pmix_status_t store_unpublish(datastore& store, const pmix_proc_t& who, const std::vector<std::string>* keys,
                              const pmix_info_t info[], std::size_t ninfo) {
  info_array copy;
  copy.add_copies(info, ninfo);
  return store.unpublish(who, uid_of(copy), keys, range_of(copy));
}

namespace {

// ---- up-calls -------------------------------------------------------------

pmix_status_t on_connected(const pmix_proc_t* proc, void*, pmix_op_cbfunc_t, void*) {
  const std::string ns = proc->nspace;
  const pmix_rank_t rank = proc->rank;
  post([ns, rank] {
    job* j = ctx->jobs != nullptr ? ctx->jobs->find(ns) : nullptr;
    if (j == nullptr) return;
    ++j->connected;
    if (rank < j->procs.size()) j->procs[rank].connected = true;
  });
  return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t on_finalized(const pmix_proc_t* proc, void*, pmix_op_cbfunc_t, void*) {
  const std::string ns = proc->nspace;
  post([ns] {
    if (job* j = ctx->jobs != nullptr ? ctx->jobs->find(ns) : nullptr) ++j->finalized;
  });
  return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t on_abort(const pmix_proc_t* proc, void*, int status, const char msg[], pmix_proc_t[],
                       size_t, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  const pmix_proc_t who = *proc;
  const std::string text = msg == nullptr ? "" : msg;
  post([who, status, text, cbfunc, cbdata] {
    std::fprintf(stderr, "pmixrun: %s called PMIx_Abort(%d): %s\n", to_string(who).c_str(), status,
                 text.c_str());
    // Let the caller go first, then end every job.
    if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, cbdata);
    if (ctx->jobs != nullptr) ctx->jobs->record_abort(who, status);
  });
  return PMIX_SUCCESS;
}

// Every fence of a one-node job is local: the node's data is all the data.
pmix_status_t on_fence(const pmix_proc_t[], size_t, const pmix_info_t[], size_t, char* data,
                       size_t ndata, pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  post([data, ndata, cbfunc, cbdata] {
    if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, data, ndata, cbdata, nullptr, nullptr);
  });
  return PMIX_SUCCESS;
}

pmix_status_t on_publish(const pmix_proc_t* proc, const pmix_info_t info[], size_t ninfo,
                         pmix_op_cbfunc_t cbfunc, void* cbdata) {
  const pmix_proc_t who = *proc;
  auto copy = copy_info(info, ninfo);
  post([who, copy, cbfunc, cbdata] {
    const pmix_status_t rc = store_publish(*ctx->store, who, copy->data(), copy->size(), ctx->verbose);
    if (cbfunc != nullptr) cbfunc(rc, cbdata);
  });
  return PMIX_SUCCESS;
}

pmix_status_t on_lookup(const pmix_proc_t* proc, char** keys, const pmix_info_t info[],
                        size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void* cbdata) {
  const pmix_proc_t who = *proc;
  auto wanted = copy_argv(keys);
  auto copy = copy_info(info, ninfo);
  post([who, wanted, copy, cbfunc, cbdata] {
    store_lookup(*ctx->store, who, wanted, copy->data(), copy->size(), ctx->verbose, cbfunc, cbdata);
  });
  return PMIX_SUCCESS;
}

pmix_status_t on_unpublish(const pmix_proc_t* proc, char** keys, const pmix_info_t info[],
                           size_t ninfo, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  const pmix_proc_t who = *proc;
  const bool all = keys == nullptr;
  auto wanted = copy_argv(keys);
  auto copy = copy_info(info, ninfo);
  post([who, all, wanted, copy, cbfunc, cbdata] {
    const pmix_status_t rc =
        store_unpublish(*ctx->store, who, all ? nullptr : &wanted, copy->data(), copy->size());
    note("pmixrun: %s unpublished: %s\n", to_string(who), PMIx_Error_string(rc));
    if (cbfunc != nullptr) cbfunc(rc, cbdata);
  });
  return PMIX_SUCCESS;
}

pmix_status_t on_spawn(const pmix_proc_t* proc, const pmix_info_t job_info[], size_t ninfo,
                       const pmix_app_t apps[], size_t napps, pmix_spawn_cbfunc_t cbfunc,
                       void* cbdata) {
  job_spec spec;
  spec.parent = *proc;
  std::string job_wdir;
  if (const pmix_info_t* i = find_info(job_info, ninfo, PMIX_WDIR))
    if (i->value.type == PMIX_STRING && i->value.data.string != nullptr)
      job_wdir = i->value.data.string;
  bool bad = napps == 0 || apps == nullptr;
  for (std::size_t a = 0; !bad && a < napps; ++a) {
    const pmix_app_t& in = apps[a];
    app_spec app;
    app.argv = copy_argv(in.argv);
    app.cmd = in.cmd != nullptr && in.cmd[0] != '\0' ? in.cmd
              : app.argv.empty()                     ? std::string()
                                                     : app.argv[0];
    app.env = copy_argv(in.env);
    if (in.cwd != nullptr && in.cwd[0] != '\0') {
      app.cwd = in.cwd;
    } else if (const pmix_info_t* i = find_info(in.info, in.ninfo, PMIX_WDIR);
               i != nullptr && i->value.type == PMIX_STRING && i->value.data.string != nullptr) {
      app.cwd = i->value.data.string;
    } else {
      app.cwd = job_wdir;
    }
    if (in.maxprocs < 1) bad = true;
    app.nprocs = static_cast<uint32_t>(std::max(in.maxprocs, 1));
    spec.apps.push_back(std::move(app));
  }
  if (bad) return PMIX_ERR_BAD_PARAM;
  post([spec, cbfunc, cbdata]() mutable {
    pmix_nspace_t nspace;
    std::memset(nspace, 0, sizeof nspace);
    const std::string who = to_string(*spec.parent);
    if (ctx->jobs == nullptr || ctx->jobs->terminating()) {
      std::fprintf(stderr, "pmixrun: spawn by %s refused: the job is terminating\n", who.c_str());
      if (cbfunc != nullptr) cbfunc(PMIX_ERR_JOB_CANCELED, nspace, cbdata);
      return;
    }
    const std::string ns = ctx->jobs->next_spawn_nspace();
    pmix_status_t rc = PMIX_SUCCESS;
    std::string error;
    ctx->jobs->start(ns, std::move(spec), true, rc, error);
    if (rc != PMIX_SUCCESS) {
      std::fprintf(stderr, "pmixrun: spawn by %s failed: %s\n", who.c_str(), error.c_str());
      if (cbfunc != nullptr) cbfunc(rc, nspace, cbdata);
      return;
    }
    PMIX_LOAD_NSPACE(nspace, ns.c_str());
    if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, nspace, cbdata);
  });
  return PMIX_SUCCESS;
}

pmix_status_t on_connect(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t[], size_t,
                         pmix_op_cbfunc_t cbfunc, void* cbdata) {
  group g = make_group(procs, nprocs);
  post([g, cbfunc, cbdata] {
    pmix_status_t rc = g.empty() ? PMIX_ERR_BAD_PARAM : PMIX_SUCCESS;
    for (const auto& member : g)
      if (!ctx->known_nspace || !ctx->known_nspace(member.first)) rc = PMIX_ERR_NOT_FOUND;
    if (rc == PMIX_SUCCESS) {
      groups.push_back(g);
      ++connect_count;
    }
    if (ctx->verbose)
      std::fprintf(stderr, "pmixrun: connect of %zu processes: %s\n", g.size(),
                   PMIx_Error_string(rc));
    if (cbfunc != nullptr) cbfunc(rc, cbdata);
  });
  return PMIX_SUCCESS;
}

pmix_status_t on_disconnect(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t[], size_t,
                            pmix_op_cbfunc_t cbfunc, void* cbdata) {
  group g = make_group(procs, nprocs);
  post([g, cbfunc, cbdata] {
    auto it = std::find(groups.begin(), groups.end(), g);
    const bool known = it != groups.end();
    if (known) groups.erase(it);
    if (ctx->verbose)
      std::fprintf(stderr, "pmixrun: disconnect of %zu processes%s\n", g.size(),
                   known ? "" : " (never connected)");
    if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, cbdata);
  });
  return PMIX_SUCCESS;
}

struct log_entry {
  enum channel_t { out, err, syslog_ch, other } channel;
  std::string text;  // for out / err / syslog
  bool required;
  bool usable;  // the value has the type the channel needs
};

void on_log(const pmix_proc_t* client, const pmix_info_t data[], size_t ndata,
            const pmix_info_t directives[], size_t ndirs, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  pmix_proc_t source = *client;
  if (const pmix_info_t* i = find_info(directives, ndirs, PMIX_LOG_SOURCE))
    if (i->value.type == PMIX_PROC && i->value.data.proc != nullptr) source = *i->value.data.proc;
  const bool once = flag(directives, ndirs, PMIX_LOG_ONCE);
  int priority = LOG_ERR;
  if (const pmix_info_t* i = find_info(directives, ndirs, PMIX_LOG_SYSLOG_PRI))
    if (auto v = as_integer(i->value)) priority = static_cast<int>(*v);
  std::vector<log_entry> entries;
  for (std::size_t k = 0; data != nullptr && k < ndata; ++k) {
    const pmix_info_t& i = data[k];
    log_entry e{log_entry::other, {}, PMIX_INFO_IS_REQUIRED(&i) != 0, false};
    if (PMIX_CHECK_KEY(&i, PMIX_LOG_STDOUT)) {
      e.channel = log_entry::out;
    } else if (PMIX_CHECK_KEY(&i, PMIX_LOG_STDERR)) {
      e.channel = log_entry::err;
    } else if (PMIX_CHECK_KEY(&i, PMIX_LOG_SYSLOG) || PMIX_CHECK_KEY(&i, PMIX_LOG_LOCAL_SYSLOG) ||
               PMIX_CHECK_KEY(&i, PMIX_LOG_GLOBAL_SYSLOG)) {
      e.channel = log_entry::syslog_ch;
    }
    if (e.channel != log_entry::other && i.value.type == PMIX_STRING &&
        i.value.data.string != nullptr) {
      e.text = i.value.data.string;
      e.usable = true;
    }
    entries.push_back(std::move(e));
  }
  post([source, once, priority, entries, cbfunc, cbdata] {
    pmix_status_t rc = PMIX_SUCCESS;
    bool logged = false;
    const std::string who = to_string(source);
    for (const auto& e : entries) {
      if (!e.usable) {
        if (e.required) rc = PMIX_ERR_NOT_SUPPORTED;
        continue;
      }
      if (once && logged) continue;
      switch (e.channel) {
        case log_entry::out:
          std::fflush(stdout);
          write_all(STDOUT_FILENO, prefixed(who, e.text.c_str()));
          break;
        case log_entry::err:
          std::fflush(stderr);
          write_all(STDERR_FILENO, prefixed(who, e.text.c_str()));
          break;
        case log_entry::syslog_ch:
          ::syslog(priority, "[%s] %s", who.c_str(), e.text.c_str());
          break;
        case log_entry::other:
          break;
      }
      logged = true;
    }
    if (cbfunc != nullptr) cbfunc(rc, cbdata);
  });
}

// A tool gets the identity it proposes, else one of its own.
void on_tool_connected(pmix_info_t info[], size_t ninfo, pmix_tool_connection_cbfunc_t cbfunc,
                       void* cbdata) {
  std::string nspace;
  pmix_rank_t rank = 0;
  if (const pmix_info_t* i = find_info(info, ninfo, PMIX_TOOL_NSPACE))
    if (i->value.type == PMIX_STRING && i->value.data.string != nullptr)
      nspace = i->value.data.string;
  if (const pmix_info_t* i = find_info(info, ninfo, PMIX_TOOL_RANK))
    if (auto v = as_integer(i->value); v && *v >= 0 && *v < PMIX_RANK_VALID)
      rank = static_cast<pmix_rank_t>(*v);
  post([nspace, rank, cbfunc, cbdata] {
    const std::string name = !nspace.empty() ? nspace
                                             : "pmixrun-server." + std::to_string(::getpid()) +
                                                   ".tool." + std::to_string(tool_count++);
    pmix_proc_t proc = make_proc(name, rank);
    note("pmixrun: a tool connected as %s%s\n", to_string(proc));
    if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, &proc, cbdata);
  });
}

// ---- IOF, allocation, groups ----------------------------------------------

// A process of a job pmixrun runs (started, not ended): a rank of it, or
// PMIX_RANK_WILDCARD.
const job* running_job_of(const pmix_proc_t& p) {
  if (ctx->jobs == nullptr) return nullptr;
  const job* j = ctx->jobs->find(std::string(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN)));
  if (j == nullptr || j->finished || j->launch_failed) return nullptr;
  if (p.rank != PMIX_RANK_WILDCARD && p.rank >= j->size) return nullptr;
  return j;
}

// A tool's or a process's PMIx_IOF_pull: pmixrun hands every line of every
// process to the server (iof.hpp), so it only has to agree, for processes
// of its running jobs.
pmix_status_t on_iof_pull(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t directives[],
                          size_t ndirs, pmix_iof_channel_t channels, pmix_op_cbfunc_t cbfunc,
                          void* cbdata) {
  if (procs == nullptr || nprocs == 0) return PMIX_ERR_BAD_PARAM;
  std::vector<pmix_proc_t> wanted(procs, procs + nprocs);
  const bool stop = flag(directives, ndirs, PMIX_IOF_STOP);
  post([wanted, stop, channels, cbfunc, cbdata] {
    pmix_status_t rc = PMIX_SUCCESS;
    std::string who;
    for (const auto& p : wanted) {
      who += (who.empty() ? "" : " ") + to_string(p);
      if (!stop && running_job_of(p) == nullptr) rc = PMIX_ERR_NOT_FOUND;
    }
    // pmixrun forwards stdout and stderr only.
    if (rc == PMIX_SUCCESS && !stop &&
        (channels & (PMIX_FWD_STDOUT_CHANNEL | PMIX_FWD_STDERR_CHANNEL)) == 0)
      rc = PMIX_ERR_NOT_SUPPORTED;
    if (ctx->verbose)
      std::fprintf(stderr, "pmixrun: output of %s %s: %s\n", who.c_str(),
                   stop ? "no longer pulled" : "pulled", PMIx_Error_string(rc));
    if (cbfunc != nullptr) cbfunc(rc, cbdata);
  });
  return PMIX_SUCCESS;
}

// PMIx_IOF_push: the bytes go into the targets' stdin pipes (stdin.hpp); no
// bytes, an empty payload or PMIX_IOF_COMPLETE end their input.
pmix_status_t on_push_stdin(const pmix_proc_t* source, const pmix_proc_t targets[],
                            size_t ntargets, const pmix_info_t directives[], size_t ndirs,
                            const pmix_byte_object_t* bo, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  if (targets == nullptr || ntargets == 0) return PMIX_ERR_BAD_PARAM;
  std::vector<pmix_proc_t> wanted(targets, targets + ntargets);
  const pmix_proc_t from = source != nullptr ? *source : make_proc("", PMIX_RANK_UNDEF);
  std::string bytes;
  if (bo != nullptr && bo->bytes != nullptr) bytes.assign(bo->bytes, bo->size);
  const bool end = bytes.empty() || flag(directives, ndirs, PMIX_IOF_COMPLETE);
  post([from, wanted, bytes, end, cbfunc, cbdata] {
    auto answer = [cbfunc, cbdata](pmix_status_t rc) {
      if (cbfunc != nullptr) cbfunc(rc, cbdata);
    };
    if (ctx->input == nullptr) return answer(PMIX_ERR_NOT_SUPPORTED);
    // Each target once; a wildcard is every rank of its job whose input is
    // still open, a named rank must be open.
    std::vector<pmix_proc_t> to;
    auto add = [&to](const pmix_proc_t& p) {
      for (const auto& q : to)
        if (same_proc(p, q)) return;
      to.push_back(p);
    };
    pmix_status_t rc = PMIX_SUCCESS;
    for (const auto& p : wanted) {
      const job* j = running_job_of(p);
      if (j == nullptr) {
        rc = PMIX_ERR_NOT_FOUND;
        break;
      }
      if (p.rank != PMIX_RANK_WILDCARD) {
        if (!ctx->input->open(p)) rc = PMIX_ERR_IOF_COMPLETE;
        add(p);
        continue;
      }
      for (uint32_t r = 0; r < j->size; ++r) {
        const pmix_proc_t one = make_proc(j->nspace, r);
        if (ctx->input->open(one)) add(one);
      }
    }
    if (rc == PMIX_SUCCESS && to.empty()) rc = PMIX_ERR_IOF_COMPLETE;
    if (ctx->verbose)
      std::fprintf(stderr, "pmixrun: %s pushes %zu bytes%s to %zu processes: %s\n",
                   to_string(from).c_str(), bytes.size(), end ? " and the end of input" : "",
                   to.size(), PMIx_Error_string(rc));
    if (rc != PMIX_SUCCESS) return answer(rc);
    ctx->input->push(to, bytes, end, answer);
  });
  return PMIX_SUCCESS;
}

std::string this_host();

// Whether `name` is this node: its host name, the host name up to its first
// dot, or "localhost".
bool is_this_node(const std::string& name) {
  const std::string host = this_host();
  return name == host || name == host.substr(0, host.find('.')) || name == "localhost";
}

std::string allocation_id(unsigned long long k) {
  return "pmixrun." + std::to_string(::getpid()) + ".alloc." + std::to_string(k);
}

// The k of an allocation ID of this pmixrun that is held, or nothing.
std::optional<unsigned long long> held_allocation(const std::string& id) {
  const std::string prefix = allocation_id(0).substr(0, allocation_id(0).size() - 1);
  if (id.compare(0, prefix.size(), prefix) != 0 || id.size() == prefix.size()) return std::nullopt;
  char* end = nullptr;
  const unsigned long long k = std::strtoull(id.c_str() + prefix.size(), &end, 10);
  if (*end != '\0' || (k != 0 && allocations.count(k) == 0)) return std::nullopt;
  return k;
}

struct info_results {
  info_array items;
};

void release_info_results(void* cbdata) { delete static_cast<info_results*>(cbdata); }

// What a one-node launcher can grant: this node, with its CPUs, for as long
// as pmixrun runs (upcalls.hpp, README "Allocation").
pmix_status_t answer_allocation(pmix_alloc_directive_t directive, const info_array& data,
                                info_array& out) {
  const pmix_info_t* info = data.data();
  const std::size_t n = data.size();
  std::optional<std::string> id;
  if (const pmix_info_t* i = find_info(info, n, PMIX_ALLOC_ID)) {
    if (i->value.type != PMIX_STRING || i->value.data.string == nullptr) return PMIX_ERR_BAD_PARAM;
    id = i->value.data.string;
  }
  if (directive == PMIX_ALLOC_RELEASE) {
    // The node stays until the jobs end; a grant is forgotten.
    if (!id) return PMIX_SUCCESS;
    const auto k = held_allocation(*id);
    if (!k) return PMIX_ERR_NOT_FOUND;
    allocations.erase(*k);
    return PMIX_SUCCESS;
  }
  if (directive != PMIX_ALLOC_NEW && directive != PMIX_ALLOC_EXTEND &&
      directive != PMIX_ALLOC_REAQUIRE)
    return PMIX_ERR_NOT_SUPPORTED;
  // NEW gets an allocation of its own (the same node); EXTEND and
  // REAQUIRE name one held (without an ID: the job's own).
  unsigned long long k = 0;
  if (directive != PMIX_ALLOC_NEW && id) {
    const auto held = held_allocation(*id);
    if (!held) return PMIX_ERR_NOT_FOUND;
    k = *held;
  }
  for (std::size_t x = 0; x < n; ++x) {
    const pmix_info_t& i = info[x];
    if (PMIX_CHECK_KEY(&i, PMIX_ALLOC_NUM_NODES)) {
      const auto v = as_integer(i.value);
      if (!v || *v < 0) return PMIX_ERR_BAD_PARAM;
      if (*v > 1) return PMIX_ERR_OUT_OF_RESOURCE;
    } else if (PMIX_CHECK_KEY(&i, PMIX_ALLOC_NUM_CPUS)) {
      const auto v = as_integer(i.value);
      if (!v || *v < 0) return PMIX_ERR_BAD_PARAM;
      if (*v > static_cast<long long>(ctx->cpus)) return PMIX_ERR_OUT_OF_RESOURCE;
    } else if (PMIX_CHECK_KEY(&i, PMIX_ALLOC_NODE_LIST)) {
      if (i.value.type != PMIX_STRING || i.value.data.string == nullptr) return PMIX_ERR_BAD_PARAM;
      const std::string list = i.value.data.string;
      std::size_t start = 0;
      for (;;) {
        const auto comma = list.find(',', start);
        const std::string node = list.substr(start, comma == std::string::npos ? comma : comma - start);
        if (!node.empty() && !is_this_node(node)) return PMIX_ERR_OUT_OF_RESOURCE;
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else if (PMIX_CHECK_KEY(&i, PMIX_ALLOC_TIME)) {
      const auto v = as_integer(i.value);
      if (!v || *v < 0) return PMIX_ERR_BAD_PARAM;
      if (ctx->deadline && std::chrono::steady_clock::now() + std::chrono::seconds(*v) > *ctx->deadline)
        return PMIX_ERR_OUT_OF_RESOURCE;
    } else if (PMIX_CHECK_KEY(&i, PMIX_ALLOC_ID) || PMIX_CHECK_KEY(&i, PMIX_ALLOC_REQ_ID) ||
               PMIX_CHECK_KEY(&i, PMIX_USERID) || PMIX_CHECK_KEY(&i, PMIX_GRPID)) {
      continue;
    } else if (PMIX_INFO_IS_REQUIRED(&i)) {
      return PMIX_ERR_NOT_SUPPORTED;  // memory, fabric, ...: nothing pmixrun hands out
    }
  }
  if (directive == PMIX_ALLOC_NEW) {
    k = ++allocation_count;
    allocations.insert(k);
  }
  out.add_string(PMIX_ALLOC_ID, allocation_id(k));
  if (const pmix_info_t* i = find_info(info, n, PMIX_ALLOC_REQ_ID))
    if (i->value.type == PMIX_STRING && i->value.data.string != nullptr)
      out.add_string(PMIX_ALLOC_REQ_ID, i->value.data.string);
  const uint64_t nodes = 1;
  const uint64_t cpus = ctx->cpus;
  out.add(PMIX_ALLOC_NUM_NODES, &nodes, PMIX_UINT64);
  out.add_string(PMIX_ALLOC_NODE_LIST, this_host());
  out.add(PMIX_ALLOC_NUM_CPUS, &cpus, PMIX_UINT64);
  if (const pmix_info_t* i = find_info(info, n, PMIX_ALLOC_TIME)) {
    out.add_u32(PMIX_ALLOC_TIME, static_cast<uint32_t>(*as_integer(i->value)));
  } else if (ctx->deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::seconds>(
                          *ctx->deadline - std::chrono::steady_clock::now())
                          .count();
    out.add_u32(PMIX_ALLOC_TIME, static_cast<uint32_t>(std::max<long long>(left, 0)));
  }
  return PMIX_SUCCESS;
}

pmix_status_t on_allocate(const pmix_proc_t* client, pmix_alloc_directive_t directive,
                          const pmix_info_t data[], size_t ndata, pmix_info_cbfunc_t cbfunc,
                          void* cbdata) {
  const pmix_proc_t who = client != nullptr ? *client : make_proc("", PMIX_RANK_UNDEF);
  auto copy = copy_info(data, ndata);
  post([who, directive, copy, cbfunc, cbdata] {
    auto* results = new info_results;
    const pmix_status_t rc = answer_allocation(directive, *copy, results->items);
    if (ctx->verbose)
      std::fprintf(stderr, "pmixrun: %s asks allocation directive %d: %s\n", to_string(who).c_str(),
                   static_cast<int>(directive), PMIx_Error_string(rc));
    if (cbfunc == nullptr) {
      delete results;
      return;
    }
    cbfunc(rc, results->items.data(), results->items.size(), cbdata, release_info_results, results);
  });
  return PMIX_SUCCESS;
}

// A group whose members the server does not all serve. One node: the
// members must be processes of pmixrun's jobs.
pmix_status_t on_group(pmix_group_operation_t op, char grp[], const pmix_proc_t procs[],
                       size_t nprocs, const pmix_info_t directives[], size_t ndirs,
                       pmix_info_cbfunc_t cbfunc, void* cbdata) {
  if (grp == nullptr || grp[0] == '\0') return PMIX_ERR_BAD_PARAM;
  const std::string name(grp, strnlen(grp, PMIX_MAX_NSLEN));
  group members = make_group(procs, nprocs);
  const bool want_id = flag(directives, ndirs, PMIX_GROUP_ASSIGN_CONTEXT_ID);
  bool unsupported = false;
  for (std::size_t k = 0; directives != nullptr && k < ndirs; ++k)
    if (PMIX_INFO_IS_REQUIRED(&directives[k]) &&
        !PMIX_CHECK_KEY(&directives[k], PMIX_GROUP_ASSIGN_CONTEXT_ID) &&
        !PMIX_CHECK_KEY(&directives[k], PMIX_GROUP_LOCAL_ONLY))
      unsupported = true;
  post([op, name, members, want_id, unsupported, cbfunc, cbdata] {
    auto* results = new info_results;
    pmix_status_t rc = PMIX_SUCCESS;
    if (op == PMIX_GROUP_CONSTRUCT) {
      if (members.empty()) rc = PMIX_ERR_BAD_PARAM;
      for (const auto& m : members)
        if (!ctx->known_nspace || !ctx->known_nspace(m.first)) rc = PMIX_ERR_NOT_FOUND;
      if (rc == PMIX_SUCCESS && unsupported) rc = PMIX_ERR_NOT_SUPPORTED;
      if (rc == PMIX_SUCCESS && host_groups.count(name) != 0) rc = PMIX_ERR_EXISTS;
      if (rc == PMIX_SUCCESS) {
        const std::size_t id = want_id ? next_context_id++ : 0;
        host_groups[name] = host_group{members, id};
        if (want_id) results->items.add(PMIX_GROUP_CONTEXT_ID, &id, PMIX_SIZE);
      }
    } else if (op == PMIX_GROUP_DESTRUCT) {
      host_groups.erase(name);  // one never constructed here too: nothing to undo
    } else {
      rc = PMIX_ERR_NOT_SUPPORTED;
    }
    if (ctx->verbose)
      std::fprintf(stderr, "pmixrun: group %s %s of %zu processes: %s\n", name.c_str(),
                   op == PMIX_GROUP_CONSTRUCT ? "construct" : "destruct", members.size(),
                   PMIx_Error_string(rc));
    if (cbfunc == nullptr) {
      delete results;
      return;
    }
    cbfunc(rc, results->items.data(), results->items.size(), cbdata, release_info_results, results);
  });
  return PMIX_SUCCESS;
}

// ---- queries ----------------------------------------------------------------

// A process's state as a query reports it.
pmix_proc_state_t state_of(const process& p) {
  if (p.pid <= 0) return PMIX_PROC_STATE_UNDEF;
  if (!p.ended) return PMIX_PROC_STATE_RUNNING;
  if (WIFSIGNALED(p.status)) return PMIX_PROC_STATE_ABORTED_BY_SIG;
  return WEXITSTATUS(p.status) == 0 ? PMIX_PROC_STATE_TERMINATED : PMIX_PROC_STATE_TERM_NON_ZERO;
}

int exit_code_of(const process& p) {
  if (!p.ended) return 0;
  return WIFSIGNALED(p.status) ? 128 + WTERMSIG(p.status) : WEXITSTATUS(p.status);
}

std::string this_host() {
  char name[256] = {0};
  ::gethostname(name, sizeof name - 1);
  return name;
}

// The jobs that have not ended (deregistered).
std::vector<const job*> live_jobs() {
  std::vector<const job*> out;
  if (ctx->jobs == nullptr) return out;
  for (const auto& j : ctx->jobs->jobs())
    if (!j->finished && !j->launch_failed) out.push_back(j.get());
  return out;
}

// PMIX_QUERY_PROC_TABLE of one job: a PMIX_DATA_ARRAY of PMIX_PROC_INFO.
void add_proc_table(info_array& out, const char* key, const job& j) {
  pmix_data_array_t* darray = nullptr;
  PMIX_DATA_ARRAY_CREATE(darray, j.procs.size(), PMIX_PROC_INFO);
  auto* table = static_cast<pmix_proc_info_t*>(darray->array);
  const std::string host = this_host();
  for (std::size_t r = 0; r < j.procs.size(); ++r) {
    const auto& p = j.procs[r];
    pmix_proc_info_t& pi = table[r];
    PMIX_LOAD_PROCID(&pi.proc, j.nspace.c_str(), static_cast<pmix_rank_t>(r));
    pi.hostname = ::strdup(host.c_str());
    const auto& app = j.spec.apps[j.app_of(static_cast<uint32_t>(r))];
    pi.executable_name = ::strdup(app.cmd.c_str());
    pi.pid = p.pid;
    pi.exit_code = exit_code_of(p);
    pi.state = state_of(p);
  }
  out.add(key, darray, PMIX_DATA_ARRAY);
  PMIX_DATA_ARRAY_FREE(darray);
}

std::string command_line(const job& j) {
  std::string line;
  for (const auto& app : j.spec.apps) {
    if (!line.empty()) line += " : ";
    const auto& argv = app.argv.empty() ? std::vector<std::string>{app.cmd} : app.argv;
    for (std::size_t k = 0; k < argv.size(); ++k) line += (k == 0 ? "" : " ") + argv[k];
  }
  return line;
}

// Answers one key of a query; false when pmixrun does not know it.
bool answer(const std::string& key, const pmix_query_t& q, info_array& out) {
  const pmix_info_t* ns_qual = find_info(q.qualifiers, q.nqual, PMIX_NSPACE);
  std::string wanted;
  if (ns_qual != nullptr && ns_qual->value.type == PMIX_STRING &&
      ns_qual->value.data.string != nullptr)
    wanted = ns_qual->value.data.string;
  const auto jobs = live_jobs();
  if (key == PMIX_QUERY_NAMESPACES) {
    std::string list;
    for (const job* j : jobs) list += (list.empty() ? "" : ",") + j->nspace;
    out.add_string(PMIX_QUERY_NAMESPACES, list);
    return true;
  }
  if (key == PMIX_QUERY_PROC_TABLE || key == PMIX_QUERY_LOCAL_PROC_TABLE) {
    // One node: the local table is the whole table. The namespace is required.
    for (const job* j : jobs)
      if (j->nspace == wanted) {
        add_proc_table(out, key.c_str(), *j);
        return true;
      }
    return false;
  }
  if (key == PMIX_QUERY_NAMESPACE_INFO) {
    // An array with, per job (or the one named), its namespace, size and
    // command line.
    info_array all;
    for (const job* j : jobs) {
      if (!wanted.empty() && j->nspace != wanted) continue;
      info_array one;
      one.add_string(PMIX_NSPACE, j->nspace);
      one.add_u32(PMIX_JOB_SIZE, j->size);
      one.add_string(PMIX_CMD_LINE, command_line(*j));
      all.add_array(PMIX_QUERY_NAMESPACE_INFO, one);
    }
    if (all.size() == 0) return false;
    pmix_data_array_t* darray = nullptr;
    PMIX_DATA_ARRAY_CREATE(darray, all.size(), PMIX_INFO);
    auto* items = static_cast<pmix_info_t*>(darray->array);
    for (std::size_t k = 0; k < all.size(); ++k) PMIX_INFO_XFER(&items[k], &all.data()[k]);
    out.add(PMIX_QUERY_NAMESPACE_INFO, darray, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(darray);
    return true;
  }
  if (key == PMIX_JOB_SIZE) {
    for (const job* j : jobs)
      if (j->nspace == wanted) {
        out.add_u32(PMIX_JOB_SIZE, j->size);
        return true;
      }
    return false;
  }
  return false;
}

struct query_results {
  info_array items;
};

void release_results(void* cbdata) { delete static_cast<query_results*>(cbdata); }

// A copy of the queries, for the host thread.
struct query_copy {
  std::vector<std::vector<std::string>> keys;
  std::vector<std::shared_ptr<info_array>> qualifiers;
};

pmix_status_t on_query(pmix_proc_t* proc, pmix_query_t* queries, size_t nqueries,
                       pmix_info_cbfunc_t cbfunc, void* cbdata) {
  if (queries == nullptr || nqueries == 0) return PMIX_ERR_BAD_PARAM;
  auto copy = std::make_shared<query_copy>();
  for (std::size_t k = 0; k < nqueries; ++k) {
    copy->keys.push_back(copy_argv(queries[k].keys));
    copy->qualifiers.push_back(copy_info(queries[k].qualifiers, queries[k].nqual));
  }
  const pmix_proc_t who = proc != nullptr ? *proc : make_proc("", PMIX_RANK_UNDEF);
  post([who, copy, cbfunc, cbdata] {
    auto* results = new query_results;
    std::size_t asked = 0, known = 0;
    for (std::size_t k = 0; k < copy->keys.size(); ++k) {
      pmix_query_t q;
      PMIX_QUERY_CONSTRUCT(&q);
      q.qualifiers = copy->qualifiers[k]->data();
      q.nqual = copy->qualifiers[k]->size();
      for (const auto& key : copy->keys[k]) {
        ++asked;
        if (answer(key, q, results->items)) ++known;
      }
    }
    const pmix_status_t rc = known == 0      ? PMIX_ERR_NOT_FOUND
                             : known < asked ? PMIX_ERR_PARTIAL_SUCCESS
                                             : PMIX_SUCCESS;
    note("pmixrun: %s queried: %s\n", to_string(who), PMIx_Error_string(rc));
    if (cbfunc == nullptr) {
      delete results;
      return;
    }
    cbfunc(rc, results->items.data(), results->items.size(), cbdata, release_results, results);
  });
  return PMIX_SUCCESS;
}

}  // namespace

pmix_server_module_t host_module(host_context& c) {
  ctx = &c;
  ::openlog("pmixrun", LOG_PID, LOG_USER);
  pmix_server_module_t module;
  std::memset(&module, 0, sizeof module);
  module.client_connected = on_connected;
  module.client_finalized = on_finalized;
  module.abort = on_abort;
  module.fence_nb = on_fence;
  module.publish = on_publish;
  module.lookup = on_lookup;
  module.unpublish = on_unpublish;
  module.spawn = on_spawn;
  module.connect = on_connect;
  module.disconnect = on_disconnect;
  module.log = on_log;
  module.query = on_query;
  module.tool_connected = on_tool_connected;
  module.iof_pull = on_iof_pull;
  module.push_stdin = on_push_stdin;
  module.allocate = on_allocate;
  module.group = on_group;
  return module;
}

pmix_status_t register_attributes() {
  struct registration {
    const char* function;
    std::vector<const char*> attrs;
  };
  // What the up-calls above read (PMIx_Register_attributes takes attribute
  // names). Functions whose up-call reads nothing (fence, abort, connect,
  // disconnect) are not registered: OpenPMIx 4.2.2's server crashes
  // answering a host-level query when a function has an empty list.
  const registration table[] = {
      {"PMIx_Query_info",
       {"PMIX_QUERY_NAMESPACES", "PMIX_QUERY_NAMESPACE_INFO", "PMIX_QUERY_PROC_TABLE",
        "PMIX_QUERY_LOCAL_PROC_TABLE", "PMIX_JOB_SIZE", "PMIX_NSPACE"}},
      {"PMIx_Publish", {"PMIX_RANGE", "PMIX_PERSISTENCE", "PMIX_USERID"}},
      {"PMIx_Lookup", {"PMIX_RANGE", "PMIX_WAIT", "PMIX_TIMEOUT", "PMIX_USERID"}},
      {"PMIx_Unpublish", {"PMIX_RANGE", "PMIX_USERID"}},
      {"PMIx_Spawn", {"PMIX_WDIR"}},
      {"PMIx_tool_init", {"PMIX_TOOL_NSPACE", "PMIX_TOOL_RANK"}},
      {"PMIx_Log",
       {"PMIX_LOG_STDOUT", "PMIX_LOG_STDERR", "PMIX_LOG_SYSLOG", "PMIX_LOG_LOCAL_SYSLOG",
        "PMIX_LOG_GLOBAL_SYSLOG", "PMIX_LOG_SYSLOG_PRI", "PMIX_LOG_SOURCE", "PMIX_LOG_ONCE"}},
      {"PMIx_IOF_pull", {"PMIX_IOF_STOP"}},
      {"PMIx_IOF_push", {"PMIX_IOF_COMPLETE"}},
      {"PMIx_Allocation_request",
       {"PMIX_ALLOC_ID", "PMIX_ALLOC_REQ_ID", "PMIX_ALLOC_NUM_NODES", "PMIX_ALLOC_NODE_LIST",
        "PMIX_ALLOC_NUM_CPUS", "PMIX_ALLOC_TIME"}},
      {"PMIx_Group_construct", {"PMIX_GROUP_ASSIGN_CONTEXT_ID", "PMIX_GROUP_LOCAL_ONLY"}},
  };
  for (const auto& r : table) {
    std::vector<char*> attrs;
    for (const char* a : r.attrs) attrs.push_back(const_cast<char*>(a));
    attrs.push_back(nullptr);
    const pmix_status_t rc = PMIx_Register_attributes(const_cast<char*>(r.function), attrs.data());
    if (rc != PMIX_SUCCESS) return rc;
  }
  return PMIX_SUCCESS;
}

std::size_t connected_groups() { return groups.size(); }
std::size_t constructed_groups() { return host_groups.size(); }

void groups_job_ended(const std::string& nspace) {
  for (auto it = host_groups.begin(); it != host_groups.end();)
    it = std::any_of(it->second.members.begin(), it->second.members.end(),
                     [&](const std::pair<std::string, pmix_rank_t>& m) { return m.first == nspace; })
             ? host_groups.erase(it)
             : std::next(it);
}
std::size_t connects() { return connect_count; }

}  // namespace pmixrun
