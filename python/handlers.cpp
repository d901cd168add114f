#include "python/handlers.hpp"

#include <pmix_tool.h>

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "python/callbacks.hpp"

namespace pmixpy::handlers {
namespace {

// A registered callable. Dropping it takes the GIL (a no-op for a thread
// that holds it); after the interpreter is gone it is left alone.
class slot {
 public:
  explicit slot(py::object fn) : fn_(std::move(fn)) {}
  ~slot() {
    if (!callbacks::python_alive() || !Py_IsInitialized()) {
      fn_.release();
      return;
    }
    py::gil_scoped_acquire gil;
    fn_ = py::object();
  }
  slot(const slot&) = delete;
  slot& operator=(const slot&) = delete;
  const py::object& fn() const { return fn_; }

 private:
  py::object fn_;
};
using slot_ptr = std::shared_ptr<slot>;

// The callables of one kind by reference. Its lock is never held while
// waiting for the GIL, nor while a slot is destroyed.
class table {
 public:
  // Held by the thread that registers, without the GIL, for the C call.
  std::mutex registering;

  slot_ptr find(size_t ref) {
    std::lock_guard<std::mutex> guard{m_};
    if (auto it = live_.find(ref); it != live_.end()) return it->second;
    if (gone_.count(ref) > 0) return nullptr;
    return pending_;  // the registration under way (its reference is not known yet)
  }
  void begin(slot_ptr s) {
    std::lock_guard<std::mutex> guard{m_};
    pending_ = std::move(s);
  }
  // The registration under way ended: kept under `ref` when it succeeded.
  void end(bool ok, size_t ref) {
    slot_ptr done;
    {
      std::lock_guard<std::mutex> guard{m_};
      done = std::move(pending_);
      pending_ = nullptr;
      if (ok) {
        gone_.erase(ref);
        live_[ref] = done;
      }
    }
  }
  slot_ptr remove(size_t ref) {
    std::lock_guard<std::mutex> guard{m_};
    gone_.insert(ref);
    auto it = live_.find(ref);
    if (it == live_.end()) return nullptr;
    auto s = std::move(it->second);
    live_.erase(it);
    return s;
  }
  void clear() {
    std::map<size_t, slot_ptr> doomed;
    {
      std::lock_guard<std::mutex> guard{m_};
      doomed.swap(live_);
      gone_.clear();
    }
  }

 private:
  std::mutex m_;
  std::map<size_t, slot_ptr> live_;
  std::set<size_t> gone_;
  slot_ptr pending_;
};

// Never destroyed: the library's threads may look them up at exit.
table& events() {
  static auto* t = new table;
  return *t;
}

table& outputs() {
  static auto* t = new table;
  return *t;
}

struct held_infos {
  pmix_info_t* info = nullptr;
  size_t ninfo = 0;
};

void release_infos(pmix_status_t, void* cbdata) {
  auto* h = static_cast<held_infos*>(cbdata);
  if (h->info != nullptr) PMIX_INFO_FREE(h->info, h->ninfo);
  delete h;
}

py::object proc_or_none(const pmix_proc_t* proc) {
  return proc == nullptr ? py::object(py::none()) : py::object(unload_proc(*proc));
}

// Runs `call` with the slot's callable under the GIL, reporting what it
// raises (as `context`). Returns false if it raised.
template <class Call>
bool call_python(slot_ptr s, const std::string& context, Call call) {
  if (!s || !callbacks::python_alive()) return true;
  callbacks::scope mark;
  py::gil_scoped_acquire gil;
  bool ok = true;
  try {
    call(s->fn());
  } catch (py::error_already_set& e) {
    callbacks::report(context, e);
    ok = false;
  } catch (const std::exception& e) {
    callbacks::report(context, std::string{"unusable answer: "} + e.what());
    ok = false;
  }
  s.reset();  // with the GIL
  return ok;
}

void on_event(size_t ref, pmix_status_t status, const pmix_proc_t* source, pmix_info_t info[], size_t ninfo,
              pmix_info_t results[], size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
              void* cbdata) {
  auto* out = new held_infos;
  pmix_status_t rc = PMIX_SUCCESS;
  const bool ok =
      call_python(events().find(ref), "pmix event handler " + std::to_string(ref), [&](py::handle fn) {
        auto answer =
            fn(ref, status, proc_or_none(source), unload_infos(info, ninfo), unload_infos(results, nresults));
        auto [st, payload] = callbacks::status_and_payload(answer);
        info_array given{payload, "event handler results"};
        out->info = given.release(out->ninfo);
        rc = st;
      });
  if (!ok) rc = PMIX_ERROR;
  if (cbfunc == nullptr) return release_infos(PMIX_SUCCESS, out);
  cbfunc(rc, out->info, out->ninfo, release_infos, out, cbdata);
}

void on_output(size_t ref, pmix_iof_channel_t channel, pmix_proc_t* source, pmix_byte_object_t* payload,
               pmix_info_t info[], size_t ninfo) {
  call_python(outputs().find(ref), "pmix IOF handler " + std::to_string(ref), [&](py::handle fn) {
    fn(ref, channel, proc_or_none(source),
       payload == nullptr ? unload_bytes(nullptr, 0) : unload_bytes(payload->bytes, payload->size),
       unload_infos(info, ninfo));
  });
}

void check_callable(py::handle fn, const char* what) {
  if (!PyCallable_Check(fn.ptr())) throw py::type_error(std::string{what} + ": the handler is not callable");
}

// Makes a registration through `call` (run without the GIL), which returns
// the reference as a status or a negative error: (rc, ref) or (rc, -1).
template <class Call>
py::tuple register_with(table& t, py::handle fn, Call call) {
  // On a library thread the C call's blocking form refuses at once; the
  // registration lock is not taken there (its holder may wait for this
  // thread).
  if (callbacks::in_callback()) return py::make_tuple(PMIX_ERR_WOULD_BLOCK, -1);
  auto s = std::make_shared<slot>(py::reinterpret_borrow<py::object>(fn));
  pmix_status_t rc;
  {
    py::gil_scoped_release nogil;
    std::lock_guard<std::mutex> one_at_a_time{t.registering};
    t.begin(s);
    rc = call();
    t.end(rc >= 0, rc >= 0 ? static_cast<size_t>(rc) : 0);
  }
  if (rc < 0) return py::make_tuple(rc, -1);
  return py::make_tuple(PMIX_SUCCESS, rc);
}

}  // namespace

py::tuple register_event(py::handle codes, py::handle info, py::handle fn) {
  check_callable(fn, "register_event_handler");
  std::vector<pmix_status_t> wanted;
  for (auto code : as_list(codes, "register_event_handler codes")) {
    if (!PyLong_Check(code.ptr()))
      throw py::type_error("register_event_handler codes: expected int statuses");
    wanted.push_back(code.cast<pmix_status_t>());
  }
  info_array directives{info, "register_event_handler info"};
  return register_with(events(), fn, [&] {
    return PMIx_Register_event_handler(wanted.empty() ? nullptr : wanted.data(), wanted.size(),
                                       directives.data(), directives.size(), on_event, nullptr, nullptr);
  });
}

pmix_status_t deregister_event(size_t ref) {
  pmix_status_t rc;
  {
    py::gil_scoped_release nogil;
    rc = PMIx_Deregister_event_handler(ref, nullptr, nullptr);
  }
  events().remove(ref);
  return rc;
}

py::tuple iof_pull(proc_array& procs, pmix_iof_channel_t channel, info_array& directives, py::handle fn) {
  check_callable(fn, "iof_pull");
  return register_with(outputs(), fn, [&] {
    return PMIx_IOF_pull(procs.data(), procs.size(), directives.data(), directives.size(), channel, on_output,
                         nullptr, nullptr);
  });
}

pmix_status_t iof_deregister(size_t ref, info_array& directives) {
  pmix_status_t rc;
  {
    py::gil_scoped_release nogil;
    rc = PMIx_IOF_deregister(ref, directives.data(), directives.size(), nullptr, nullptr);
  }
  outputs().remove(ref);
  return rc;
}

void clear() {
  events().clear();
  outputs().clear();
}

}  // namespace pmixpy::handlers
