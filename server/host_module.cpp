#include "server/host_module.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "api/convert.hpp"
#include "common/module_copy.hpp"
#include "common/progress.hpp"
#include "faults/plane.hpp"

namespace pmix::host {
namespace {

// The fault plane at a host up-call (docs/fault-injection.md): the host is
// asked as usual, and its answer is replaced (fail), given twice, given
// late, or replaced by PMIX_ERR_TIMEOUT after a while (timeout). Late
// answers wait on the plane's timer thread; those still waiting at
// finalize are dropped with the plane.
template <class... A>
void inject(faults::plane& plane, const char* upcall, const proc_id& who,
            std::function<void(pmix_status_t, A...)>& done) {
  const auto d = plane.at(faults::point_kind::upcall, upcall, who.nspace, who.rank);
  if (!d) return;
  auto real = std::move(done);
  auto* timer = &plane;  // the plane outlives every up-call (it stops at finalize)
  switch (d.what) {
    case faults::action::fail:
      done = [real, status = d.status](pmix_status_t, A...) { real(status, A{}...); };
      return;
    case faults::action::twice:
      done = [real](pmix_status_t st, A... a) {
        real(st, a...);
        real(st, a...);
      };
      return;
    case faults::action::late:
      done = [real, timer, ms = d.ms](pmix_status_t st, A... a) {
        timer->after(ms, [real, st, a...] { real(st, a...); });
      };
      return;
    case faults::action::timeout:
      done = [real, timer, ms = d.ms](pmix_status_t, A...) {
        timer->after(ms, [real] { real(PMIX_ERR_TIMEOUT, A{}...); });
      };
      return;
    default:
      done = std::move(real);
      return;
  }
}

proc_id group_of(const std::vector<proc_id>& procs) {
  return proc_id{procs.empty() ? std::string{} : procs.front().nspace, PMIX_RANK_WILDCARD};
}

// Everything one up-call hands the host, kept alive until its callback.
struct upcall {
  explicit upcall(done_fn d) : done(std::move(d)) {}
  done_fn done;
  pmix_proc_t proc{};
  std::unique_ptr<convert::info_array> info;
  std::unique_ptr<convert::proc_array> procs;
  std::unique_ptr<convert::string_array> keys;
  std::string text;  // abort message / fence data / stdin bytes
  pmix_byte_object_t object{};  // over `text`, for push_stdin
};

void op_callback(pmix_status_t status, void* cbdata) {
  std::unique_ptr<upcall> call{static_cast<upcall*>(cbdata)};
  call->done(status, {});
}

void modex_callback(pmix_status_t status, const char* data, size_t ndata, void* cbdata,
                    pmix_release_cbfunc_t release, void* release_data) {
  std::unique_ptr<upcall> call{static_cast<upcall*>(cbdata)};
  std::string copy;
  if (data != nullptr && ndata > 0) copy.assign(data, ndata);
  if (release != nullptr) release_later(release, release_data);
  call->done(status, std::move(copy));
}

// Applies the host's immediate answer: PMIX_SUCCESS means its callback will
// run (and owns `call` from now on); anything else completes here.
void settle(pmix_status_t rc, std::unique_ptr<upcall> call) {
  if (rc == PMIX_SUCCESS) {
    call.release();
    return;
  }
  call->done(rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc, {});
}

struct info_call {
  std::function<void(pmix_status_t, info_list)> done;
  pmix_proc_t requestor{};
  std::unique_ptr<convert::proc_array> procs;
  std::unique_ptr<convert::info_array> info;
  std::unique_ptr<convert::query_array> queries;
};

void info_callback(pmix_status_t status, pmix_info_t* info, size_t ninfo, void* cbdata,
                   pmix_release_cbfunc_t release, void* release_data) {
  std::unique_ptr<info_call> call{static_cast<info_call*>(cbdata)};
  info_list results;
  if (convert::from_c(info, ninfo, results) != PMIX_SUCCESS) results.clear();
  if (release != nullptr) release_later(release, release_data);
  call->done(status, std::move(results));
}

struct tool_call {
  std::function<void(pmix_status_t, proc_id)> done;
  std::unique_ptr<convert::info_array> info;
};

void tool_callback(pmix_status_t status, pmix_proc_t* proc, void* cbdata) {
  std::unique_ptr<tool_call> call{static_cast<tool_call*>(cbdata)};
  call->done(status, proc == nullptr ? proc_id{} : convert::proc(*proc));
}

// Hosts known to free the data their fence_nb is given (as OpenPMIx lets
// them): Open MPI 4's ORTE, reached through its mca_pmix_* component, loads
// it into a buffer it releases; PRRTE (Open MPI 5's launcher) does the same.
bool frees_fence_data(const pmix_server_module_t& m) {
  Dl_info where{};
  if (m.fence_nb == nullptr || dladdr(reinterpret_cast<void*>(m.fence_nb), &where) == 0 ||
      where.dli_fname == nullptr)
    return false;
  const char* slash = std::strrchr(where.dli_fname, '/');
  const std::string name = slash == nullptr ? where.dli_fname : slash + 1;
  return name.rfind("mca_pmix_", 0) == 0 || name.rfind("libprrte", 0) == 0;
}

std::mutex& runner_mutex() {
  static std::mutex m;
  return m;
}
release_runner& runner() {
  static release_runner r;
  return r;
}

}  // namespace

void set_release_runner(release_runner r) {
  std::lock_guard<std::mutex> guard{runner_mutex()};
  runner() = std::move(r);
}

void release_later(pmix_release_cbfunc_t release, void* data) {
  std::function<void()> task = [release, data] { release(data); };
  {
    std::lock_guard<std::mutex> guard{runner_mutex()};
    // A runner that refuses leaves the task as it was: it refuses only once
    // the server stops, which waits for this lock before it goes on.
    if (runner() && runner()(task)) return;
  }
  if (task) std::thread(std::move(task)).detach();
}

void module::set_host_frees_fence_data(std::optional<bool> given) { host_frees_fence_data_ = given; }

module::module(const pmix_server_module_t* m, attribute_answer_fn attributes, std::uint32_t nslots)
    : attributes_(attributes) {
  if (m == nullptr) return;
  first_ = std::make_unique<pmix_server_module_t>(module_copy::copy(*m, nslots));
  guessed_frees_fence_data_ = frees_fence_data(*first_);
  slots_.store(first_.get(), std::memory_order_release);
}

bool module::adopt(const pmix_server_module_t* m, std::uint32_t nslots) {
  if (m == nullptr || slots() != nullptr) return false;
  adopted_ = std::make_unique<pmix_server_module_t>(module_copy::copy(*m, nslots));
  guessed_frees_fence_data_ = frees_fence_data(*adopted_);
  slots_.store(adopted_.get(), std::memory_order_release);
  return true;
}

bool module::client_connected(const proc_id& proc, void* server_object, const info_list& info,
                              done_fn done) const {
  const auto* m = slots();
  if (m == nullptr || (m->client_connected2 == nullptr && m->client_connected == nullptr))
    return false;
  if (faults_) inject(*faults_, "client_connected", proc, done);
  auto call = std::make_unique<upcall>(std::move(done));
  convert::to_c(proc, call->proc);
  pmix_status_t rc;
  {
    progress::scope in_upcall;
    if (m->client_connected2 != nullptr) {
      call->info = std::make_unique<convert::info_array>(info);
      rc = m->client_connected2(&call->proc, server_object, call->info->data(), call->info->size(),
                                op_callback, call.get());
    } else {
      // The v1 up-call is made without a callback, as OpenPMIx makes it:
      // its return is the answer. Hosts rely on that (Slurm's returns
      // PMIX_SUCCESS and never calls a callback).
      rc = m->client_connected(&call->proc, server_object, nullptr, nullptr);
      if (rc == PMIX_SUCCESS) rc = PMIX_OPERATION_SUCCEEDED;
    }
  }
  settle(rc, std::move(call));
  return true;
}

bool module::client_finalized(const proc_id& proc, void* server_object, done_fn done) const {
  const auto* m = slots();
  if (m == nullptr || m->client_finalized == nullptr) return false;
  if (faults_) inject(*faults_, "client_finalized", proc, done);
  auto call = std::make_unique<upcall>(std::move(done));
  convert::to_c(proc, call->proc);
  pmix_status_t rc;
  {
    progress::scope in_upcall;
    rc = m->client_finalized(&call->proc, server_object, op_callback, call.get());
  }
  settle(rc, std::move(call));
  return true;
}

bool module::abort(const proc_id& proc, void* server_object, int status, const std::string& message,
                   const std::vector<proc_id>& procs, done_fn done) const {
  const auto* m = slots();
  if (m == nullptr || m->abort == nullptr) return false;
  if (faults_) inject(*faults_, "abort", proc, done);
  auto call = std::make_unique<upcall>(std::move(done));
  convert::to_c(proc, call->proc);
  call->procs = std::make_unique<convert::proc_array>(procs);
  call->text = message;
  pmix_status_t rc;
  {
    progress::scope in_upcall;
    rc = m->abort(&call->proc, server_object, status, call->text.c_str(), call->procs->data(),
                  call->procs->size(), op_callback, call.get());
  }
  settle(rc, std::move(call));
  return true;
}

bool module::fence_nb(const std::vector<proc_id>& procs, const info_list& info,
                      const std::string& data, done_fn done) const {
  const auto* m = slots();
  if (m == nullptr || m->fence_nb == nullptr) return false;
  if (faults_) inject(*faults_, "fence_nb", group_of(procs), done);
  auto call = std::make_unique<upcall>(std::move(done));
  call->procs = std::make_unique<convert::proc_array>(procs);
  call->info = std::make_unique<convert::info_array>(info);
  call->text = data;
  char* handed = call->text.empty() ? nullptr : call->text.data();
  if (handed != nullptr && host_frees_fence_data()) {
    // The host's to free, whatever it answers (as OpenPMIx hands it over).
    handed = static_cast<char*>(std::malloc(call->text.size()));
    if (handed == nullptr) {
      call->done(PMIX_ERR_NOMEM, {});
      return true;
    }
    std::memcpy(handed, call->text.data(), call->text.size());
  }
  pmix_status_t rc;
  {
    progress::scope in_upcall;
    rc = m->fence_nb(call->procs->data(), call->procs->size(), call->info->data(),
                     call->info->size(), handed, call->text.size(), modex_callback, call.get());
  }
  if (rc == PMIX_OPERATION_SUCCEEDED) {
    // Completed at once: with one node, the data is ours alone.
    auto local = std::move(call->text);
    call->done(PMIX_SUCCESS, std::move(local));
    return true;
  }
  settle(rc, std::move(call));
  return true;
}

bool module::direct_modex(const proc_id& proc, const info_list& info, done_fn done) const {
  const auto* m = slots();
  if (m == nullptr || m->direct_modex == nullptr) return false;
  if (faults_) inject(*faults_, "direct_modex", proc, done);
  auto call = std::make_unique<upcall>(std::move(done));
  convert::to_c(proc, call->proc);
  call->info = std::make_unique<convert::info_array>(info);
  pmix_status_t rc;
  {
    progress::scope in_upcall;
    rc = m->direct_modex(&call->proc, call->info->data(), call->info->size(), modex_callback,
                         call.get());
  }
  settle(rc, std::move(call));
  return true;
}

}  // namespace pmix::host

namespace pmix::host {

bool module::tool_connected(const info_list& info,
                            std::function<void(pmix_status_t, proc_id)> done) const {
  const auto* m = slots();
  if (m == nullptr || (m->tool_connected == nullptr && m->tool_connected2 == nullptr)) return false;
  if (faults_) inject(*faults_, "tool_connected", proc_id{{}, PMIX_RANK_WILDCARD}, done);
  auto call = std::make_unique<tool_call>();
  call->done = std::move(done);
  call->info = std::make_unique<convert::info_array>(info);
  auto* raw = call.release();  // owned by tool_callback from here on
  progress::scope in_upcall;
  if (m->tool_connected2 == nullptr) {
    m->tool_connected(raw->info->data(), raw->info->size(), tool_callback, raw);
    return true;
  }
  // OpenPMIx 6.0's form: anything but PMIX_SUCCESS is the answer, and the
  // callback will not run.
  const auto rc = m->tool_connected2(raw->info->data(), raw->info->size(), tool_callback, raw);
  if (rc != PMIX_SUCCESS) tool_callback(rc == PMIX_OPERATION_SUCCEEDED ? PMIX_ERR_BAD_PARAM : rc, nullptr, raw);
  return true;
}

}  // namespace pmix::host

namespace pmix::host {

bool module::job_control(const proc_id& requestor, const std::vector<proc_id>& targets,
                         const info_list& directives,
                         std::function<void(pmix_status_t, info_list)> done) const {
  const auto* m = slots();
  if (m == nullptr || m->job_control == nullptr) return false;
  if (faults_) inject(*faults_, "job_control", requestor, done);
  auto call = std::make_unique<info_call>();
  call->done = std::move(done);
  convert::to_c(requestor, call->requestor);
  call->procs = std::make_unique<convert::proc_array>(targets);
  call->info = std::make_unique<convert::info_array>(directives);
  pmix_status_t rc;
  {
    progress::scope in_upcall;
    rc = m->job_control(&call->requestor, call->procs->data(), call->procs->size(),
                        call->info->data(), call->info->size(), info_callback, call.get());
  }
  if (rc == PMIX_SUCCESS) {
    call.release();  // info_callback owns it now
  } else {
    call->done(rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc, {});
  }
  return true;
}

bool module::query(const proc_id& requestor, const std::vector<pmix::query>& queries,
                   std::function<void(pmix_status_t, info_list)> done) const {
  // The attribute-support queries, answered by the library.
  std::vector<pmix::query> rest;
  info_list attributes;
  bool attribute_asked = false;
  for (const auto& q : queries) {
    const bool asks = attributes_ != nullptr &&
                      std::find(q.keys.begin(), q.keys.end(), PMIX_QUERY_ATTRIBUTE_SUPPORT) != q.keys.end();
    if (!asks) {
      rest.push_back(q);
      continue;
    }
    attribute_asked = true;
    convert::info_array quals{q.qualifiers};
    pmix_info_t* results = nullptr;
    size_t nresults = 0;
    if (attributes_(quals.data(), quals.size(), &results, &nresults) == PMIX_SUCCESS) {
      info_list found;
      convert::from_c(results, nresults, found);
      attributes.insert(attributes.end(), std::make_move_iterator(found.begin()), std::make_move_iterator(found.end()));
    }
    PMIX_INFO_FREE(results, nresults);
    pmix::query others{{}, q.qualifiers};
    for (const auto& k : q.keys)
      if (k != PMIX_QUERY_ATTRIBUTE_SUPPORT) others.keys.push_back(k);
    if (!others.keys.empty()) rest.push_back(std::move(others));
  }
  if (!attribute_asked) return ask_host(requestor, queries, std::move(done));
  const auto answered = [](const info_list& found) { return found.empty() ? PMIX_ERR_NOT_FOUND : PMIX_SUCCESS; };
  if (rest.empty()) {
    const auto st = answered(attributes);
    done(st, std::move(attributes));
    return true;
  }
  // Both: the host's answer joined to the library's, the library's first.
  auto joined = [attributes, done = std::move(done)](pmix_status_t st, info_list results) mutable {
    if (attributes.empty()) return done(st, std::move(results));
    if (st != PMIX_SUCCESS) st = PMIX_ERR_PARTIAL_SUCCESS;
    attributes.insert(attributes.end(), std::make_move_iterator(results.begin()), std::make_move_iterator(results.end()));
    done(st, std::move(attributes));
  };
  if (!ask_host(requestor, rest, joined)) joined(PMIX_ERR_NOT_SUPPORTED, {});
  return true;
}

bool module::ask_host(const proc_id& requestor, const std::vector<pmix::query>& queries,
                      std::function<void(pmix_status_t, info_list)> done) const {
  const auto* m = slots();
  if (m == nullptr || m->query == nullptr) return false;
  if (faults_) inject(*faults_, "query", requestor, done);
  auto call = std::make_unique<info_call>();
  call->done = std::move(done);
  convert::to_c(requestor, call->requestor);
  call->queries = std::make_unique<convert::query_array>(queries);
  pmix_status_t rc;
  {
    progress::scope in_upcall;
    rc = m->query(&call->requestor, call->queries->data(), call->queries->size(), info_callback,
                  call.get());
  }
  if (rc == PMIX_SUCCESS) {
    call.release();  // info_callback owns it now
  } else {
    call->done(rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc, {});
  }
  return true;
}

}  // namespace pmix::host

namespace pmix::host {

bool module::notify_event(pmix_status_t status, const proc_id& source, pmix_data_range_t range,
                          const info_list& info, done_fn done) const {
  const auto* m = slots();
  if (m == nullptr || m->notify_event == nullptr) return false;
  if (faults_) inject(*faults_, "notify_event", source, done);
  auto call = std::make_unique<upcall>(std::move(done));
  convert::to_c(source, call->proc);
  call->info = std::make_unique<convert::info_array>(info);
  pmix_status_t rc;
  {
    progress::scope in_upcall;
    rc = m->notify_event(status, &call->proc, range, call->info->data(), call->info->size(),
                         op_callback, call.get());
  }
  settle(rc, std::move(call));
  return true;
}

}  // namespace pmix::host

namespace pmix::host {
namespace {

struct lookup_call {
  std::function<void(pmix_status_t, std::vector<pdata>)> done;
  pmix_proc_t proc{};
  std::unique_ptr<convert::string_array> keys;
  std::unique_ptr<convert::info_array> info;
};

void lookup_callback(pmix_status_t status, pmix_pdata_t data[], size_t ndata, void* cbdata) {
  std::unique_ptr<lookup_call> call{static_cast<lookup_call*>(cbdata)};
  std::vector<pdata> found;
  if (data != nullptr) {
    for (size_t k = 0; k < ndata; ++k) {
      pdata d;
      d.proc = convert::proc(data[k].proc);
      d.key = convert::key(data[k].key);
      if (convert::from_c(data[k].value, d.val) != PMIX_SUCCESS) continue;
      found.push_back(std::move(d));
    }
  }
  call->done(status, std::move(found));
}

struct spawn_call {
  std::function<void(pmix_status_t, std::string)> done;
  pmix_proc_t proc{};
  std::unique_ptr<convert::info_array> job_info;
  std::unique_ptr<convert::app_array> apps;
};

void spawn_callback(pmix_status_t status, pmix_nspace_t nspace, void* cbdata) {
  std::unique_ptr<spawn_call> call{static_cast<spawn_call*>(cbdata)};
  call->done(status, nspace == nullptr ? std::string{} : convert::nspace(nspace));
}

struct log_call {
  explicit log_call(done_fn d) : done(std::move(d)) {}
  done_fn done;
  pmix_proc_t proc{};
  std::unique_ptr<convert::info_array> data;
  std::unique_ptr<convert::info_array> directives;
};

void log_callback(pmix_status_t status, void* cbdata) {
  std::unique_ptr<log_call> call{static_cast<log_call*>(cbdata)};
  call->done(status, {});
}

}  // namespace

bool module::publish(const proc_id& proc, const info_list& info, done_fn done) const {
  const auto* m = slots();
  if (m == nullptr || m->publish == nullptr) return false;
  if (faults_) inject(*faults_, "publish", proc, done);
  auto call = std::make_unique<upcall>(std::move(done));
  convert::to_c(proc, call->proc);
  call->info = std::make_unique<convert::info_array>(info);
  pmix_status_t rc;
  {
    progress::scope in_upcall;
    rc = m->publish(&call->proc, call->info->data(), call->info->size(), op_callback, call.get());
  }
  settle(rc, std::move(call));
  return true;
}

bool module::lookup(const proc_id& proc, const std::vector<std::string>& keys, const info_list& info,
                    std::function<void(pmix_status_t, std::vector<pdata>)> done) const {
  const auto* m = slots();
  if (m == nullptr || m->lookup == nullptr) return false;
  if (faults_) inject(*faults_, "lookup", proc, done);
  auto call = std::make_unique<lookup_call>();
  call->done = std::move(done);
  convert::to_c(proc, call->proc);
  call->keys = std::make_unique<convert::string_array>(keys);
  call->info = std::make_unique<convert::info_array>(info);
  pmix_status_t rc;
  {
    progress::scope in_upcall;
    rc = m->lookup(&call->proc, call->keys->data(), call->info->data(), call->info->size(), lookup_callback,
                   call.get());
  }
  if (rc == PMIX_SUCCESS) {
    call.release();  // lookup_callback owns it now
  } else {
    call->done(rc == PMIX_OPERATION_SUCCEEDED ? PMIX_ERR_NOT_FOUND : rc, {});
  }
  return true;
}

bool module::unpublish(const proc_id& proc, const std::vector<std::string>& keys, const info_list& info,
                       done_fn done) const {
  const auto* m = slots();
  if (m == nullptr || m->unpublish == nullptr) return false;
  if (faults_) inject(*faults_, "unpublish", proc, done);
  auto call = std::make_unique<upcall>(std::move(done));
  convert::to_c(proc, call->proc);
  call->info = std::make_unique<convert::info_array>(info);
  call->keys = std::make_unique<convert::string_array>(keys);
  pmix_status_t rc;
  {
    progress::scope in_upcall;
    // No keys: all of the caller's (a NULL array, as the client gave it).
    rc = m->unpublish(&call->proc, keys.empty() ? nullptr : call->keys->data(), call->info->data(),
                      call->info->size(), op_callback, call.get());
  }
  settle(rc, std::move(call));
  return true;
}

bool module::spawn(const proc_id& proc, const info_list& job_info, const std::vector<app>& apps,
                   std::function<void(pmix_status_t, std::string)> done) const {
  const auto* m = slots();
  if (m == nullptr || m->spawn == nullptr) return false;
  if (faults_) inject(*faults_, "spawn", proc, done);
  auto call = std::make_unique<spawn_call>();
  call->done = std::move(done);
  convert::to_c(proc, call->proc);
  call->job_info = std::make_unique<convert::info_array>(job_info);
  call->apps = std::make_unique<convert::app_array>(apps);
  pmix_status_t rc;
  {
    progress::scope in_upcall;
    rc = m->spawn(&call->proc, call->job_info->data(), call->job_info->size(), call->apps->data(),
                  call->apps->size(), spawn_callback, call.get());
  }
  if (rc == PMIX_SUCCESS) {
    call.release();  // spawn_callback owns it now
  } else {
    // A spawn cannot have completed without naming the new namespace.
    call->done(rc == PMIX_OPERATION_SUCCEEDED ? PMIX_ERR_BAD_PARAM : rc, {});
  }
  return true;
}

bool module::connect(const std::vector<proc_id>& procs, const info_list& info, done_fn done) const {
  const auto* m = slots();
  if (m == nullptr || m->connect == nullptr) return false;
  if (faults_) inject(*faults_, "connect", group_of(procs), done);
  auto call = std::make_unique<upcall>(std::move(done));
  call->procs = std::make_unique<convert::proc_array>(procs);
  call->info = std::make_unique<convert::info_array>(info);
  pmix_status_t rc;
  {
    progress::scope in_upcall;
    rc = m->connect(call->procs->data(), call->procs->size(), call->info->data(), call->info->size(),
                    op_callback, call.get());
  }
  settle(rc, std::move(call));
  return true;
}

bool module::disconnect(const std::vector<proc_id>& procs, const info_list& info, done_fn done) const {
  const auto* m = slots();
  if (m == nullptr || m->disconnect == nullptr) return false;
  if (faults_) inject(*faults_, "disconnect", group_of(procs), done);
  auto call = std::make_unique<upcall>(std::move(done));
  call->procs = std::make_unique<convert::proc_array>(procs);
  call->info = std::make_unique<convert::info_array>(info);
  pmix_status_t rc;
  {
    progress::scope in_upcall;
    rc = m->disconnect(call->procs->data(), call->procs->size(), call->info->data(), call->info->size(),
                       op_callback, call.get());
  }
  settle(rc, std::move(call));
  return true;
}

bool module::log(const proc_id& proc, const info_list& data, const info_list& directives,
                 done_fn done) const {
  const auto* m = slots();
  if (m == nullptr || (m->log == nullptr && m->log2 == nullptr)) return false;
  if (faults_) inject(*faults_, "log", proc, done);
  auto call = std::make_unique<log_call>(std::move(done));
  convert::to_c(proc, call->proc);
  call->data = std::make_unique<convert::info_array>(data);
  call->directives = std::make_unique<convert::info_array>(directives);
  auto* raw = call.release();  // the host answers through log_callback
  progress::scope in_upcall;
  if (m->log2 == nullptr) {
    m->log(&raw->proc, raw->data->data(), raw->data->size(), raw->directives->data(), raw->directives->size(),
           log_callback, raw);
    return true;
  }
  // OpenPMIx 6.0's form: anything but PMIX_SUCCESS is the answer.
  const auto rc = m->log2(&raw->proc, raw->data->data(), raw->data->size(), raw->directives->data(),
                          raw->directives->size(), log_callback, raw);
  if (rc != PMIX_SUCCESS) log_callback(rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc, raw);
  return true;
}

}  // namespace pmix::host

namespace pmix::host {
namespace {

// One request a client hands its host (allocate, monitor, credentials,
// fabric, group), kept alive until the host's callback.
struct request_call {
  module::reply_fn done;
  pmix_proc_t proc{};
  std::unique_ptr<convert::proc_array> procs;
  std::unique_ptr<convert::info_array> info;
  std::unique_ptr<convert::info_array> directives;
  std::string bytes;
  pmix_byte_object_t object{};
  std::string group;  // the group's or the resource block's name
  std::vector<pmix_resource_unit_t> units;
};

void request_op_callback(pmix_status_t status, void* cbdata) {
  std::unique_ptr<request_call> call{static_cast<request_call*>(cbdata)};
  call->done(status, {}, {});
}

void request_info_callback(pmix_status_t status, pmix_info_t* info, size_t ninfo, void* cbdata,
                           pmix_release_cbfunc_t release, void* release_data) {
  std::unique_ptr<request_call> call{static_cast<request_call*>(cbdata)};
  info_list results;
  if (convert::from_c(info, ninfo, results) != PMIX_SUCCESS) results.clear();
  if (release != nullptr) release_later(release, release_data);
  call->done(status, std::move(results), {});
}

void credential_callback(pmix_status_t status, pmix_byte_object_t* credential, pmix_info_t info[], size_t ninfo,
                         void* cbdata) {
  std::unique_ptr<request_call> call{static_cast<request_call*>(cbdata)};
  info_list results;
  if (convert::from_c(info, ninfo, results) != PMIX_SUCCESS) results.clear();
  std::string bytes;
  if (credential != nullptr && credential->bytes != nullptr) bytes.assign(credential->bytes, credential->size);
  call->done(status, std::move(results), std::move(bytes));
}

void validation_callback(pmix_status_t status, pmix_info_t info[], size_t ninfo, void* cbdata) {
  std::unique_ptr<request_call> call{static_cast<request_call*>(cbdata)};
  info_list results;
  if (convert::from_c(info, ninfo, results) != PMIX_SUCCESS) results.clear();
  call->done(status, std::move(results), {});
}

// The host's immediate answer: PMIX_SUCCESS means its callback will run.
void settle_request(pmix_status_t rc, std::unique_ptr<request_call> call) {
  if (rc == PMIX_SUCCESS) {
    call.release();  // the callback owns it now
    return;
  }
  call->done(rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc, {}, {});
}

std::unique_ptr<request_call> new_request(module::reply_fn done, const info_list& directives) {
  auto call = std::make_unique<request_call>();
  call->done = std::move(done);
  call->directives = std::make_unique<convert::info_array>(directives);
  return call;
}

}  // namespace

bool module::allocate(const proc_id& client, pmix_alloc_directive_t directive, const info_list& data,
                      reply_fn done) const {
  const auto* m = slots();
  if (m == nullptr || m->allocate == nullptr) return false;
  if (faults_) inject(*faults_, "allocate", client, done);
  auto call = new_request(std::move(done), data);
  convert::to_c(client, call->proc);
  pmix_status_t rc;
  {
    progress::scope in_upcall;
    rc = m->allocate(&call->proc, directive, call->directives->data(), call->directives->size(),
                     request_info_callback, call.get());
  }
  settle_request(rc, std::move(call));
  return true;
}

bool module::monitor(const proc_id& requestor, const info& monitor, pmix_status_t error,
                     const info_list& directives, reply_fn done) const {
  const auto* m = slots();
  if (m == nullptr || m->monitor == nullptr) return false;
  if (faults_) inject(*faults_, "monitor", requestor, done);
  auto call = new_request(std::move(done), directives);
  convert::to_c(requestor, call->proc);
  call->info = std::make_unique<convert::info_array>(info_list{monitor});
  pmix_status_t rc;
  {
    progress::scope in_upcall;
    rc = m->monitor(&call->proc, call->info->data(), error, call->directives->data(), call->directives->size(),
                    request_info_callback, call.get());
  }
  settle_request(rc, std::move(call));
  return true;
}

bool module::get_credential(const proc_id& proc, const info_list& directives, reply_fn done) const {
  const auto* m = slots();
  if (m == nullptr || m->get_credential == nullptr) return false;
  if (faults_) inject(*faults_, "get_credential", proc, done);
  auto call = new_request(std::move(done), directives);
  convert::to_c(proc, call->proc);
  pmix_status_t rc;
  {
    progress::scope in_upcall;
    rc = m->get_credential(&call->proc, call->directives->data(), call->directives->size(), credential_callback,
                           call.get());
  }
  settle_request(rc, std::move(call));
  return true;
}

bool module::validate_credential(const proc_id& proc, const std::string& credential, const info_list& directives,
                                 reply_fn done) const {
  const auto* m = slots();
  if (m == nullptr || m->validate_credential == nullptr) return false;
  if (faults_) inject(*faults_, "validate_credential", proc, done);
  auto call = new_request(std::move(done), directives);
  convert::to_c(proc, call->proc);
  call->bytes = credential;
  call->object.bytes = call->bytes.empty() ? nullptr : call->bytes.data();
  call->object.size = call->bytes.size();
  pmix_status_t rc;
  {
    progress::scope in_upcall;
    rc = m->validate_credential(&call->proc, &call->object, call->directives->data(), call->directives->size(),
                                validation_callback, call.get());
  }
  settle_request(rc, std::move(call));
  return true;
}

bool module::fabric(const proc_id& requestor, pmix_fabric_operation_t op, const info_list& directives,
                    reply_fn done) const {
  const auto* m = slots();
  if (m == nullptr || m->fabric == nullptr) return false;
  if (faults_) inject(*faults_, "fabric", requestor, done);
  auto call = new_request(std::move(done), directives);
  convert::to_c(requestor, call->proc);
  pmix_status_t rc;
  {
    progress::scope in_upcall;
    rc = m->fabric(&call->proc, op, call->directives->data(), call->directives->size(), request_info_callback,
                   call.get());
  }
  settle_request(rc, std::move(call));
  return true;
}

bool module::group(pmix_group_operation_t op, const std::string& group, const std::vector<proc_id>& procs,
                   const info_list& directives, reply_fn done) const {
  const auto* m = slots();
  if (m == nullptr || m->group == nullptr) return false;
  if (faults_) inject(*faults_, "group", group_of(procs), done);
  auto call = new_request(std::move(done), directives);
  call->procs = std::make_unique<convert::proc_array>(procs);
  call->group = group;
  pmix_status_t rc;
  {
    progress::scope in_upcall;
    rc = m->group(op, call->group.data(), call->procs->data(), call->procs->size(), call->directives->data(),
                  call->directives->size(), request_info_callback, call.get());
  }
  settle_request(rc, std::move(call));
  return true;
}

bool module::iof_pull(const std::vector<proc_id>& procs, const info_list& directives, pmix_iof_channel_t channels,
                      done_fn done) const {
  const auto* m = slots();
  if (m == nullptr || m->iof_pull == nullptr) return false;
  if (faults_) inject(*faults_, "iof_pull", group_of(procs), done);
  auto call = std::make_unique<upcall>(std::move(done));
  call->procs = std::make_unique<convert::proc_array>(procs);
  call->info = std::make_unique<convert::info_array>(directives);
  pmix_status_t rc;
  {
    progress::scope in_upcall;
    rc = m->iof_pull(call->procs->data(), call->procs->size(), call->info->data(), call->info->size(), channels,
                     op_callback, call.get());
  }
  settle(rc, std::move(call));
  return true;
}

bool module::push_stdin(const proc_id& source, const std::vector<proc_id>& targets, const info_list& directives,
                        const std::optional<std::string>& bytes, done_fn done) const {
  const auto* m = slots();
  if (m == nullptr || m->push_stdin == nullptr) return false;
  if (faults_) inject(*faults_, "push_stdin", source, done);
  auto call = std::make_unique<upcall>(std::move(done));
  convert::to_c(source, call->proc);
  call->procs = std::make_unique<convert::proc_array>(targets);
  call->info = std::make_unique<convert::info_array>(directives);
  if (bytes) call->text = *bytes;
  call->object.bytes = call->text.empty() ? nullptr : call->text.data();
  call->object.size = call->text.size();
  pmix_status_t rc;
  {
    progress::scope in_upcall;
    // No bytes: the end of the input (OpenPMIx passes a NULL object).
    rc = m->push_stdin(&call->proc, call->procs->data(), call->procs->size(), call->info->data(),
                       call->info->size(), bytes ? &call->object : nullptr, op_callback, call.get());
  }
  settle(rc, std::move(call));
  return true;
}

}  // namespace pmix::host

namespace pmix::host {

bool module::session_control(const proc_id& requestor, std::uint32_t session, const info_list& directives,
                             reply_fn done) const {
  const auto* m = slots();
  if (m == nullptr || m->session_control == nullptr) return false;
  if (faults_) inject(*faults_, "session_control", requestor, done);
  auto call = new_request(std::move(done), directives);
  convert::to_c(requestor, call->proc);
  pmix_status_t rc;
  {
    progress::scope in_upcall;
    rc = m->session_control(&call->proc, session, call->directives->data(), call->directives->size(),
                            request_info_callback, call.get());
  }
  settle_request(rc, std::move(call));
  return true;
}

bool module::resource_block(const proc_id& requestor, pmix_resource_block_directive_t directive,
                            const std::string& block, const std::vector<pmix_resource_unit_t>& units,
                            const info_list& info, reply_fn done) const {
  const auto* m = slots();
  if (m == nullptr || m->resource_block == nullptr) return false;
  if (faults_) inject(*faults_, "resource_block", requestor, done);
  auto call = new_request(std::move(done), info);
  convert::to_c(requestor, call->proc);
  call->group = block;
  call->units = units;
  pmix_status_t rc;
  {
    progress::scope in_upcall;
    rc = m->resource_block(&call->proc, directive, call->group.c_str(), call->units.data(), call->units.size(),
                           call->directives->data(), call->directives->size(), request_op_callback, call.get());
  }
  settle_request(rc, std::move(call));
  return true;
}

}  // namespace pmix::host
