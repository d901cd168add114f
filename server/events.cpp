#include "server/events.hpp"

#include <pthread.h>

#include <algorithm>
#include <memory>
#include <new>

#include "api/convert.hpp"
#include "common/fork_park.hpp"
#include "common/progress.hpp"

namespace pmix::api::events {

bool handler::matches(pmix_status_t status) const {
  return std::find(codes.begin(), codes.end(), status) != codes.end();
}

namespace {

bool flag(const info_list& directives, const char* key) {
  const auto* i = find(directives, key);
  return i != nullptr && i->val.truthy();
}

std::string text(const info_list& directives, const char* key) {
  const auto* i = find(directives, key);
  const auto* s = i == nullptr ? nullptr : i->val.as_string();
  return s == nullptr ? std::string{} : *s;
}

}  // namespace

registry::category& registry::category_of(const handler& h) {
  if (h.codes.empty()) return defaults_;
  return h.codes.size() == 1 ? single_ : multi_;
}

pmix_status_t registry::add(std::vector<pmix_status_t> codes, const info_list& directives,
                            pmix_notification_fn_t fn, std::size_t& id, std::string& error) {
  handler h;
  h.codes = std::move(codes);
  h.fn = fn;
  h.name = text(directives, PMIX_EVENT_HDLR_NAME);
  if (const auto* o = find(directives, PMIX_EVENT_RETURN_OBJECT))
    if (auto v = o->val.as_uint()) h.object = *v;
  const auto before = text(directives, PMIX_EVENT_HDLR_BEFORE);
  const auto after = text(directives, PMIX_EVENT_HDLR_AFTER);

  std::lock_guard<std::mutex> guard{mutex_};
  h.id = next_id_;
  auto taken = [&](const char* what) {
    error = std::string{"another handler is already registered "} + what;
    return PMIX_ERR_EVENT_REGISTRATION;
  };
  if (flag(directives, PMIX_EVENT_HDLR_FIRST)) {
    if (first_) return taken("first");
    first_ = std::move(h);
  } else if (flag(directives, PMIX_EVENT_HDLR_LAST)) {
    if (last_) return taken("last");
    last_ = std::move(h);
  } else {
    auto& cat = category_of(h);
    if (flag(directives, PMIX_EVENT_HDLR_FIRST_IN_CATEGORY)) {
      if (cat.first) return taken("first in its category");
      cat.first = std::move(h);
    } else if (flag(directives, PMIX_EVENT_HDLR_LAST_IN_CATEGORY)) {
      if (cat.last) return taken("last in its category");
      cat.last = std::move(h);
    } else if (!before.empty() || !after.empty()) {
      const auto& name = before.empty() ? after : before;
      auto it = std::find_if(cat.middle.begin(), cat.middle.end(),
                             [&](const handler& x) { return x.name == name; });
      if (it == cat.middle.end()) {
        error = "no handler named '" + name + "' in the same category";
        return PMIX_ERR_NOT_FOUND;
      }
      cat.middle.insert(before.empty() ? std::next(it) : it, std::move(h));
    } else if (flag(directives, PMIX_EVENT_HDLR_PREPEND)) {
      cat.middle.insert(cat.middle.begin(), std::move(h));
    } else {
      cat.middle.push_back(std::move(h));
    }
  }
  id = next_id_++;
  return PMIX_SUCCESS;
}

bool registry::remove(std::size_t id) {
  std::lock_guard<std::mutex> guard{mutex_};
  for (auto* slot : {&first_, &last_, &single_.first, &single_.last, &multi_.first, &multi_.last,
                     &defaults_.first, &defaults_.last})
    if (*slot && (*slot)->id == id) {
      slot->reset();
      return true;
    }
  for (auto* cat : {&single_, &multi_, &defaults_}) {
    auto it = std::find_if(cat->middle.begin(), cat->middle.end(),
                           [id](const handler& h) { return h.id == id; });
    if (it != cat->middle.end()) {
      cat->middle.erase(it);
      return true;
    }
  }
  return false;
}

void registry::clear() {
  std::lock_guard<std::mutex> guard{mutex_};
  first_.reset();
  last_.reset();
  single_ = multi_ = defaults_ = category{};
  next_id_ = 0;  // the next cycle numbers its handlers from 0 again
}

bool registry::empty() const {
  std::lock_guard<std::mutex> guard{mutex_};
  auto empty_cat = [](const category& c) { return !c.first && !c.last && c.middle.empty(); };
  return !first_ && !last_ && empty_cat(single_) && empty_cat(multi_) && empty_cat(defaults_);
}

std::vector<handler> registry::chain_for(const event& ev) const {
  const bool defaults_too = for_default_handlers(ev);
  auto wanted = [&](const handler& h) {
    return h.codes.empty() ? defaults_too : h.matches(ev.status);
  };
  std::vector<handler> out;
  auto take = [&](const std::optional<handler>& h) {
    if (h && wanted(*h)) out.push_back(*h);
  };
  std::lock_guard<std::mutex> guard{mutex_};
  take(first_);
  for (const auto* cat : {&single_, &multi_, &defaults_}) {
    take(cat->first);
    for (const auto& h : cat->middle)
      if (wanted(h)) out.push_back(h);
    take(cat->last);
  }
  take(last_);
  return out;
}

registry& handlers() {
  static registry* instance = new registry;  // never destroyed: handlers may run at exit
  return *instance;
}

void forget_after_fork() {
  // The parent's handler chain state is not ours: start empty. The old
  // registry is leaked (its mutex may have been held at fork time), parked
  // so that it stays reachable (common/fork_park.hpp).
  auto& slot = handlers();
  fork_park::park(slot);
  new (&slot) registry;
}

// ---- running a chain ---------------------------------------------------------

namespace {

// What one handler is handed: the event's source, its info and the results
// before it. It stays valid until the handler has returned and its
// completion callback was called, whichever comes last: the step holds it
// while the handler runs, the chain until the callback (a handler may call
// back first and read its info after: PMIX_EVENT_ACTION_COMPLETE ends the
// chain inside the callback).
struct step_data {
  pmix_proc_t source{};
  std::unique_ptr<convert::info_array> info, prior;
};

struct chain {
  event ev;
  std::vector<handler> steps;
  std::size_t next = 0;
  info_list results;  // what the handlers so far returned
  task_poster post;
  pmix_proc_t source{};
  std::shared_ptr<step_data> current;  // the running step's data, until its callback
};

void run_step(chain* c);

// The completion callback every handler gets.
void step_done(pmix_status_t status, pmix_info_t* results, size_t nresults, pmix_op_cbfunc_t cbfunc,
               void* thiscbdata, void* notification_cbdata) {
  auto* c = static_cast<chain*>(notification_cbdata);
  info_list got;
  if (results != nullptr && nresults > 0 && convert::from_c(results, nresults, got) == PMIX_SUCCESS)
    c->results.insert(c->results.end(), got.begin(), got.end());
  // The handler may free its results now.
  if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, thiscbdata);
  // The chain lets go of the step's data (the step itself holds it while
  // its handler runs).
  c->current.reset();
  if (status == PMIX_EVENT_ACTION_COMPLETE || c->next == c->steps.size()) {
    delete c;
    return;
  }
  auto post = c->post;
  post([c] { run_step(c); });
}

void run_step(chain* c) {
  // Copied out: the handler's callback may end the chain (delete c) while
  // the handler still runs.
  const handler h = c->steps[c->next++];
  const pmix_status_t status = c->ev.status;
  info_list info = c->ev.info;
  if (h.object) info.push_back({PMIX_EVENT_RETURN_OBJECT, value::unsigned_(PMIX_POINTER, *h.object), 0});
  auto data = std::make_shared<step_data>();
  data->source = c->source;
  data->info = std::make_unique<convert::info_array>(info);
  data->prior = std::make_unique<convert::info_array>(c->results);
  c->current = data;
  progress::scope in_handler;
  h.fn(h.id, status, &data->source, data->info->data(), data->info->size(), data->prior->data(),
       data->prior->size(), step_done, c);
}

}  // namespace

void deliver(event ev, task_poster post) {
  auto steps = handlers().chain_for(ev);
  if (steps.empty()) return;
  auto* c = new chain;
  convert::to_c(ev.source, c->source);
  c->ev = std::move(ev);
  c->steps = std::move(steps);
  c->post = std::move(post);
  auto first = c->post;
  first([c] { run_step(c); });
}

}  // namespace pmix::api::events
