// A one-shot reply channel from an actor back to a C-API caller.
//
// The facade creates one per request (its callback either wakes a blocked
// caller or invokes the user's cbfunc), puts it into the request message and
// sends the message to the owning actor, which calls deliver() exactly once.
// If the message is dropped or the actor dies first, the last reference's
// destructor delivers PMIX_ERR_NOT_AVAILABLE, so no caller ever hangs.
#pragma once

#include <pmix_common.h>

#include <functional>
#include <memory>
#include <utility>

namespace pmix::actors {

struct no_result {};

template <class Result>
class reply_channel {
 public:
  using callback = std::function<void(pmix_status_t, Result)>;

  explicit reply_channel(callback cb) : cb_(std::move(cb)) {}
  reply_channel(const reply_channel&) = delete;
  reply_channel& operator=(const reply_channel&) = delete;
  ~reply_channel() {
    if (cb_) cb_(PMIX_ERR_NOT_AVAILABLE, Result{});
  }

  void deliver(pmix_status_t status, Result result = Result{}) {
    if (auto cb = std::exchange(cb_, nullptr)) cb(status, std::move(result));
  }

 private:
  callback cb_;
};

template <class Result>
using reply_to = std::shared_ptr<reply_channel<Result>>;

template <class Result>
reply_to<Result> make_reply(typename reply_channel<Result>::callback cb) {
  return std::make_shared<reply_channel<Result>>(std::move(cb));
}

}  // namespace pmix::actors
