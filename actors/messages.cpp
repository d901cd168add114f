#include "actors/messages.hpp"

#include "common/progress.hpp"

namespace pmix::actors {

registration_batch::~registration_batch() {
  while (answered_ < calls_.size()) answer_next(PMIX_ERR_NOT_AVAILABLE);
}

void registration_batch::answer_next(pmix_status_t status) {
  if (answered_ >= calls_.size()) return;
  const auto& c = calls_[answered_++];
  progress::scope in_callback;
  c.cbfunc(status, c.cbdata);
}

}  // namespace pmix::actors
