// Waiting for a C call that completes through a callback: the module's
// methods call the callback forms of the C API where the library has no
// blocking form (or where python3-pmix returns what only the callback
// gives), and wait on the calling thread, without the GIL, for the
// callback the library runs on one of its threads.
#pragma once

#include <pmix.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <utility>

#include "python/callbacks.hpp"

namespace pmixpy {

// One call's answer: a status and a result of type Result. The waiting
// thread and the callback each hold a shared_ptr, so either may be last.
template <class Result>
class pending {
 public:
  using ptr = std::shared_ptr<pending>;

  // The cbdata to give the C call: a new handle that `take` gets back.
  static void* cbdata(const ptr& p) { return new ptr(p); }
  // In the callback (or when the call failed at once and no callback
  // comes): the handle given as cbdata, released.
  static ptr take(void* cbdata) {
    std::unique_ptr<ptr> held{static_cast<ptr*>(cbdata)};
    return *held;
  }

  void complete(pmix_status_t status, Result result) {
    {
      std::lock_guard<std::mutex> guard{m_};
      status_ = status;
      result_ = std::move(result);
      done_ = true;
    }
    cv_.notify_all();
  }

  pmix_status_t wait() {
    std::unique_lock<std::mutex> guard{m_};
    cv_.wait(guard, [this] { return done_; });
    return status_;
  }

  // After wait().
  Result& result() { return result_; }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  pmix_status_t status_ = PMIX_ERROR;
  Result result_{};
};

struct no_result {};

// The pmix_op_cbfunc_t of a pending<no_result>.
inline void op_completed(pmix_status_t status, void* cbdata) {
  pending<no_result>::take(cbdata)->complete(status, {});
}

// Info a callback handed over, copied before the library releases it (the
// caller frees it, e.g. with take_infos).
struct info_copy {
  pmix_info_t* info = nullptr;
  size_t ninfo = 0;
};

inline info_copy copy_of(const pmix_info_t* info, size_t ninfo) {
  info_copy out;
  if (info == nullptr || ninfo == 0) return out;
  PMIX_INFO_CREATE(out.info, ninfo);
  out.ninfo = ninfo;
  for (size_t k = 0; k < ninfo; ++k) PMIx_Info_xfer(&out.info[k], &info[k]);
  return out;
}

// The pmix_info_cbfunc_t of a pending<info_copy>.
inline void infos_completed(pmix_status_t status, pmix_info_t* info, size_t ninfo, void* cbdata,
                            pmix_release_cbfunc_t release_fn, void* release_cbdata) {
  pending<info_copy>::take(cbdata)->complete(status, copy_of(info, ninfo));
  if (release_fn != nullptr) release_fn(release_cbdata);
}

// Calls start(cbdata) (the C call, returning its immediate status) and, if
// it started, waits for the callback to complete `p`. Inside a call from the
// library into Python the callback could need the very thread that would
// wait: PMIX_ERR_WOULD_BLOCK then, without calling, as the library's own
// blocking forms answer on its threads. Call without the GIL.
template <class Result, class Start>
pmix_status_t start_and_wait(const typename pending<Result>::ptr& p, Start start) {
  if (callbacks::in_callback()) return PMIX_ERR_WOULD_BLOCK;
  void* cbdata = pending<Result>::cbdata(p);
  const pmix_status_t rc = start(cbdata);
  if (rc != PMIX_SUCCESS) {
    pending<Result>::take(cbdata);  // no callback comes
    return rc;
  }
  return p->wait();
}

}  // namespace pmixpy
