#include "tests/e2e/group_steps.hpp"

#include <pmix.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>

#include "tests/e2e/steps.hpp"

namespace pmix::test {
namespace {

// The processes <ranks> names: ranks of our job, or <nspace>/<rank> of another.
std::vector<pmix_proc_t> procs_of(const std::string& ranks, const pmix_proc_t& me) {
  std::vector<pmix_proc_t> out;
  for (const auto& item : split(ranks, ',')) {
    const auto slash = item.rfind('/');
    const std::string ns = slash == std::string::npos ? std::string{me.nspace} : item.substr(0, slash);
    const std::string r = slash == std::string::npos ? item : item.substr(slash + 1);
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, ns.c_str(),
                     r == "*" ? PMIX_RANK_WILDCARD : static_cast<pmix_rank_t>(std::atoi(r.c_str())));
    out.push_back(p);
  }
  return out;
}

// The context id the last construct, invite or join returned.
size_t last_context_id = 0;

// "id=<name> members=<r,r> ctx=<id|none>" of a call's results. Programs
// written for OpenPMIx read the context id as results[0]: one anywhere else
// prints as "<id>(not first)".
std::string describe(const pmix_info_t* info, size_t n) {
  std::string id = "?", members, ctx = "none";
  for (size_t k = 0; k < n; ++k) {
    if (PMIX_CHECK_KEY(&info[k], PMIX_GROUP_ID) && info[k].value.type == PMIX_STRING)
      id = info[k].value.data.string;
    if (PMIX_CHECK_KEY(&info[k], PMIX_GROUP_CONTEXT_ID)) {
      ctx = std::to_string(info[k].value.data.size) + (k == 0 ? "" : "(not first)");
      last_context_id = info[k].value.data.size;
    }
    if (PMIX_CHECK_KEY(&info[k], PMIX_GROUP_MEMBERSHIP) && info[k].value.type == PMIX_DATA_ARRAY &&
        info[k].value.data.darray != nullptr && info[k].value.data.darray->type == PMIX_PROC) {
      const auto* a = info[k].value.data.darray;
      const auto* p = static_cast<const pmix_proc_t*>(a->array);
      for (size_t m = 0; m < a->size; ++m)
        members += (m == 0 ? "" : ",") +
                   (p[m].rank == PMIX_RANK_WILDCARD ? std::string("*") : std::to_string(p[m].rank));
    }
  }
  return "id=" + id + " members=" + members + " ctx=" + ctx;
}

void info_done(pmix_status_t st, pmix_info_t* info, size_t n, void* cbdata, pmix_release_cbfunc_t release,
               void* release_data) {
  static_cast<answer*>(cbdata)->finish(st, describe(info, n));
  if (release != nullptr) release(release_data);
}

void op_done(pmix_status_t st, void* cbdata) { static_cast<answer*>(cbdata)->finish(st, ""); }

// Group events seen: code -> "<source> id=<group>" not yet waited for.
std::mutex events_mutex;
std::condition_variable events_cv;
std::map<pmix_status_t, std::deque<std::string>> events_seen;

void on_event(size_t, pmix_status_t status, const pmix_proc_t* source, pmix_info_t info[], size_t ninfo,
              pmix_info_t*, size_t, pmix_event_notification_cbfunc_fn_t cbfunc, void* cbdata) {
  std::string id = "?", pset;
  for (size_t k = 0; k < ninfo; ++k) {
    if (PMIX_CHECK_KEY(&info[k], PMIX_EVENT_AFFECTED_PROC) && info[k].value.type == PMIX_PROC &&
        info[k].value.data.proc != nullptr)
      pset += std::string{" affected="} + info[k].value.data.proc->nspace + "." +
              std::to_string(info[k].value.data.proc->rank);
    if (PMIX_CHECK_KEY(&info[k], PMIX_GROUP_ID) && info[k].value.type == PMIX_STRING)
      id = info[k].value.data.string;
    if (PMIX_CHECK_KEY(&info[k], PMIX_PSET_NAME) && info[k].value.type == PMIX_STRING)
      pset += std::string{" pset="} + info[k].value.data.string;
    if (PMIX_CHECK_KEY(&info[k], PMIX_PSET_MEMBERS) && info[k].value.type == PMIX_DATA_ARRAY &&
        info[k].value.data.darray != nullptr)
      pset += " members=" + std::to_string(info[k].value.data.darray->size);
  }
  {
    std::lock_guard<std::mutex> g{events_mutex};
    events_seen[status].push_back((source == nullptr
                                       ? std::string("?")
                                       : std::string{source->nspace} + "." + std::to_string(source->rank)) +
                                  " id=" + id + pset);
  }
  events_cv.notify_all();
  if (cbfunc != nullptr) cbfunc(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
}

}  // namespace

bool run_group_step(const std::string& step, const std::vector<std::string>& parts, const pmix_proc_t& me,
                    const say_fn& say) {
  const auto& cmd = parts.at(0);
  const std::string name = parts.size() > 1 ? parts[1] : "";
  if (cmd == "group_construct" || cmd == "group_construct_nb" || cmd == "group_invite" ||
      cmd == "group_invite_nb" || cmd == "group_construct_reqd") {
    auto procs = procs_of(parts.at(2), me);
    pmix_info_t infos[5];
    size_t ninfo = 0;
    if (cmd == "group_construct_reqd") {
      PMIX_INFO_LOAD(&infos[0], parts.at(3).c_str(), nullptr, PMIX_BOOL);
      PMIX_INFO_REQUIRED(&infos[0]);
      ninfo = 1;
    } else if (parts.size() > 3) {
      for (const auto& opt : split(parts[3], '+')) {
        if (ninfo == 5) break;
        pmix_info_t& info = infos[ninfo];
        if (opt == "ctx") {
          PMIX_INFO_LOAD(&info, PMIX_GROUP_ASSIGN_CONTEXT_ID, nullptr, PMIX_BOOL);
        } else if (opt == "notify") {
          PMIX_INFO_LOAD(&info, PMIX_GROUP_NOTIFY_TERMINATION, nullptr, PMIX_BOOL);
        } else if (opt == "optional") {
          PMIX_INFO_LOAD(&info, PMIX_GROUP_OPTIONAL, nullptr, PMIX_BOOL);
        } else if (opt.rfind("timeout=", 0) == 0) {
          const int seconds = std::atoi(opt.c_str() + 8);
          PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &seconds, PMIX_INT);
        } else if (opt.rfind("cid=", 0) == 0) {
          // As Open MPI does: its local communicator id, as PMIX_GROUP_INFO.
          size_t cid = std::strtoul(opt.c_str() + 4, nullptr, 10);
          pmix_data_array_t* array = nullptr;
          PMIX_DATA_ARRAY_CREATE(array, 1, PMIX_INFO);
          PMIX_INFO_LOAD(static_cast<pmix_info_t*>(array->array), PMIX_GROUP_LOCAL_CID, &cid, PMIX_SIZE);
          PMIX_INFO_LOAD(&info, PMIX_GROUP_INFO, array, PMIX_DATA_ARRAY);
          PMIX_DATA_ARRAY_FREE(array);
        } else {
          continue;
        }
        ++ninfo;
      }
    }
    pmix_info_t* info = ninfo == 0 ? nullptr : infos;
    pmix_status_t rc;
    std::string text;
    if (cmd == "group_construct_nb" || cmd == "group_invite_nb") {
      answer a;
      rc = a.wait(
          cmd == "group_construct_nb"
              ? PMIx_Group_construct_nb(name.c_str(), procs.data(), procs.size(), info, ninfo, info_done, &a)
              : PMIx_Group_invite_nb(name.c_str(), procs.data(), procs.size(), info, ninfo, info_done, &a));
      text = a.text;
    } else {
      pmix_info_t* results = nullptr;
      size_t nresults = 0;
      rc = cmd == "group_invite" ? PMIx_Group_invite(name.c_str(), procs.data(), procs.size(), info, ninfo,
                                                     &results, &nresults)
                                 : PMIx_Group_construct(name.c_str(), procs.data(), procs.size(), info,
                                                        ninfo, &results, &nresults);
      text = describe(results, nresults);
      if (results != nullptr) PMIX_INFO_FREE(results, nresults);
    }
    for (size_t k = 0; k < ninfo; ++k) PMIX_INFO_DESTRUCT(&infos[k]);
    say(step, rc, rc == PMIX_SUCCESS ? text : "");
  } else if (cmd == "group_join" || cmd == "group_join_nb") {
    pmix_proc_t leader;
    const bool given = parts.at(2) != "-";
    if (given) PMIX_LOAD_PROCID(&leader, me.nspace, static_cast<pmix_rank_t>(std::atoi(parts[2].c_str())));
    const auto opt = parts.at(3) == "accept" ? PMIX_GROUP_ACCEPT : PMIX_GROUP_DECLINE;
    pmix_status_t rc;
    std::string text;
    if (cmd == "group_join_nb") {
      answer a;
      rc =
          a.wait(PMIx_Group_join_nb(name.c_str(), given ? &leader : nullptr, opt, nullptr, 0, info_done, &a));
      text = a.text;
    } else {
      pmix_info_t* results = nullptr;
      size_t nresults = 0;
      rc = PMIx_Group_join(name.c_str(), given ? &leader : nullptr, opt, nullptr, 0, &results, &nresults);
      text = describe(results, nresults);
      if (results != nullptr) PMIX_INFO_FREE(results, nresults);
    }
    say(step, rc, rc == PMIX_SUCCESS ? text : "");
  } else if (cmd == "group_leave" || cmd == "group_destruct") {
    // group_destruct:<name>:timeout=<s>: with PMIX_TIMEOUT.
    int seconds = 0;
    if (cmd == "group_destruct" && parts.size() > 2 && parts[2].rfind("timeout=", 0) == 0)
      seconds = std::atoi(parts[2].c_str() + 8);
    pmix_info_t timeout;
    PMIX_INFO_LOAD(&timeout, PMIX_TIMEOUT, &seconds, PMIX_INT);
    say(step,
        cmd == "group_leave" ? PMIx_Group_leave(name.c_str(), nullptr, 0)
                             : PMIx_Group_destruct(name.c_str(), seconds > 0 ? &timeout : nullptr, seconds > 0 ? 1 : 0),
        "");
    PMIX_INFO_DESTRUCT(&timeout);
  } else if (cmd == "group_leave_nb" || cmd == "group_destruct_nb") {
    answer a;
    say(step,
        a.wait(cmd == "group_leave_nb" ? PMIx_Group_leave_nb(name.c_str(), nullptr, 0, op_done, &a)
                                       : PMIx_Group_destruct_nb(name.c_str(), nullptr, 0, op_done, &a)),
        "");
  } else if (cmd == "group_cid" || cmd == "group_get") {
    // group_cid:<member>: PMIx_Get(member, PMIX_GROUP_LOCAL_CID) qualified by
    // the last context id, as Open MPI reads a peer's communicator id;
    // group_get:<group>:<r>:<key>: PMIx_Get({group, r}, key) of a string.
    pmix_proc_t target;
    std::string key;
    pmix_info_t qualifier;
    size_t nq = 0;
    if (cmd == "group_cid") {
      target = procs_of(parts.at(1), me).front();
      key = PMIX_GROUP_LOCAL_CID;
      PMIX_INFO_LOAD(&qualifier, PMIX_GROUP_CONTEXT_ID, &last_context_id, PMIX_SIZE);
      PMIX_INFO_SET_QUALIFIER(&qualifier);
      nq = 1;
    } else {
      PMIX_LOAD_PROCID(&target, parts.at(1).c_str(), static_cast<pmix_rank_t>(std::atoi(parts.at(2).c_str())));
      key = parts.at(3);
    }
    pmix_value_t* v = nullptr;
    const auto rc = PMIx_Get(&target, key.c_str(), nq == 0 ? nullptr : &qualifier, nq, &v);
    std::string text;
    if (rc == PMIX_SUCCESS && v != nullptr) {
      if (v->type == PMIX_SIZE)
        text = std::to_string(v->data.size);
      else if (v->type == PMIX_STRING && v->data.string != nullptr)
        text = v->data.string;
      else
        text = "type=" + std::to_string(v->type);
      PMIX_VALUE_RELEASE(v);
    }
    if (nq != 0) PMIX_INFO_DESTRUCT(&qualifier);
    say(step, rc, text);
  } else if (cmd == "psets" || cmd == "pset_members") {
    pmix_query_t query;
    PMIX_QUERY_CONSTRUCT(&query);
    const char* keys[] = {cmd == "psets" ? PMIX_QUERY_NUM_PSETS : PMIX_QUERY_PSET_MEMBERSHIP,
                          cmd == "psets" ? PMIX_QUERY_PSET_NAMES : nullptr, nullptr};
    query.keys = const_cast<char**>(keys);
    pmix_info_t qualifier;
    if (cmd == "pset_members") {
      PMIX_INFO_LOAD(&qualifier, PMIX_PSET_NAME, parts.at(1).c_str(), PMIX_STRING);
      query.qualifiers = &qualifier;
      query.nqual = 1;
    }
    pmix_info_t* results = nullptr;
    size_t nresults = 0;
    const auto rc = PMIx_Query_info(&query, 1, &results, &nresults);
    std::string text;
    for (size_t k = 0; k < nresults; ++k) {
      const auto& v = results[k].value;
      if (PMIX_CHECK_KEY(&results[k], PMIX_QUERY_NUM_PSETS)) text += "num=" + std::to_string(v.data.size);
      if (PMIX_CHECK_KEY(&results[k], PMIX_QUERY_PSET_NAMES) && v.type == PMIX_STRING)
        text += std::string{" names="} + (v.data.string == nullptr ? "" : v.data.string);
      if (PMIX_CHECK_KEY(&results[k], PMIX_QUERY_PSET_MEMBERSHIP) && v.type == PMIX_DATA_ARRAY &&
          v.data.darray != nullptr && v.data.darray->type == PMIX_PROC) {
        const auto* p = static_cast<const pmix_proc_t*>(v.data.darray->array);
        for (size_t m = 0; m < v.data.darray->size; ++m)
          text += (m == 0 ? "" : ",") + std::string{p[m].nspace} + "." + std::to_string(p[m].rank);
      }
    }
    if (results != nullptr) PMIX_INFO_FREE(results, nresults);
    if (cmd == "pset_members") PMIX_INFO_DESTRUCT(&qualifier);
    query.keys = nullptr;
    query.qualifiers = nullptr;
    say(step, rc, text);
  } else if (cmd == "on_group_event") {
    pmix_status_t code = std::atoi(parts.at(1).c_str());
    const auto rc = PMIx_Register_event_handler(&code, 1, nullptr, 0, on_event, nullptr, nullptr);
    say(step, rc >= 0 ? PMIX_SUCCESS : rc, "");
  } else if (cmd == "wait_group_event") {
    const pmix_status_t code = std::atoi(parts.at(1).c_str());
    std::unique_lock<std::mutex> g{events_mutex};
    const bool got =
        events_cv.wait_for(g, std::chrono::seconds(120), [&] { return !events_seen[code].empty(); });
    std::string text;
    if (got) {
      text = events_seen[code].front();
      events_seen[code].pop_front();
    }
    say(step, got ? PMIX_SUCCESS : PMIX_ERR_TIMEOUT, text);
  } else {
    return false;
  }
  return true;
}

}  // namespace pmix::test
