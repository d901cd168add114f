#include "upcalls.hpp"

#include <pmix.h>
#include <syslog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "host_thread.hpp"
#include "info.hpp"

namespace pmixrun {
namespace {

host_context* ctx = nullptr;

// Connected groups: each a sorted list of (nspace, rank).
using group = std::vector<std::pair<std::string, pmix_rank_t>>;
std::vector<group> groups;
std::size_t connect_count = 0;

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

// ---- up-calls -------------------------------------------------------------

pmix_status_t on_connected(const pmix_proc_t* proc, void*, pmix_op_cbfunc_t, void*) {
  const std::string ns = proc->nspace;
  post([ns] {
    if (job* j = ctx->jobs != nullptr ? ctx->jobs->find(ns) : nullptr) ++j->connected;
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
    pmix_data_range_t range = range_of(*copy).value_or(PMIX_RANGE_SESSION);
    pmix_persistence_t persistence = PMIX_PERSIST_SESSION;
    if (const pmix_info_t* i = find_info(copy->data(), copy->size(), PMIX_PERSISTENCE))
      if (auto v = as_integer(i->value)) persistence = static_cast<pmix_persistence_t>(*v);
    std::vector<datastore::item> items;
    std::string keys;
    for (std::size_t k = 0; k < copy->size(); ++k) {
      const pmix_info_t& i = copy->data()[k];
      // The directives (the library adds the client's uid and gid).
      if (PMIX_CHECK_KEY(&i, PMIX_RANGE) || PMIX_CHECK_KEY(&i, PMIX_PERSISTENCE) ||
          PMIX_CHECK_KEY(&i, PMIX_USERID) || PMIX_CHECK_KEY(&i, PMIX_GRPID) ||
          PMIX_CHECK_KEY(&i, PMIX_TIMEOUT))
        continue;
      items.emplace_back(std::string(i.key, strnlen(i.key, PMIX_MAX_KEYLEN)), &i.value);
      keys += (keys.empty() ? "" : " ") + items.back().first;
    }
    const pmix_status_t rc =
        items.empty() ? PMIX_ERR_BAD_PARAM
                      : ctx->store->publish(who, uid_of(*copy), range, persistence, items);
    if (ctx->verbose)
      std::fprintf(stderr, "pmixrun: %s published %s (range %d, persistence %d): %s\n",
                   to_string(who).c_str(), keys.c_str(), static_cast<int>(range),
                   static_cast<int>(persistence), PMIx_Error_string(rc));
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
    const bool wait = flag(copy->data(), copy->size(), PMIX_WAIT);
    std::optional<datastore::clock::time_point> deadline;
    if (const pmix_info_t* i = find_info(copy->data(), copy->size(), PMIX_TIMEOUT))
      if (auto v = as_integer(i->value); v && *v > 0)
        deadline = datastore::clock::now() + std::chrono::seconds(*v);
    if (ctx->verbose) {
      std::string list;
      for (const auto& k : wanted) list += (list.empty() ? "" : " ") + k;
      std::fprintf(stderr, "pmixrun: %s looks up %s%s\n", to_string(who).c_str(), list.c_str(),
                   wait ? " (wait)" : "");
    }
    ctx->store->lookup(who, uid_of(*copy), wanted, range_of(*copy), wait, deadline, cbfunc, cbdata);
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
        ctx->store->unpublish(who, uid_of(*copy), all ? nullptr : &wanted, range_of(*copy));
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
  return module;
}

std::size_t connected_groups() { return groups.size(); }
std::size_t connects() { return connect_count; }

}  // namespace pmixrun
