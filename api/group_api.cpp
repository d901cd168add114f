// PMIx groups: PMIx_Group_construct, _destruct, _invite, _join and _leave,
// blocking and not. The server actor keeps the groups and the invitations
// (docs/architecture.md, "Groups"); each call here is the thin facade of
// style.md #1: check, copy into C++ values, one GroupRequest, convert the
// reply.
#include <pmix.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "api/blocking.hpp"
#include "api/convert.hpp"
#include "api/library.hpp"
#include "common/log.hpp"

namespace pmix::api {
namespace {

using protocol::group_op;

// The request's name and directives, or PMIX_ERR_BAD_PARAM (logged).
pmix_status_t start(const char* call, group_op op, const char grp[], const pmix_info_t info[], size_t ninfo,
                    protocol::group_request& r) {
  const std::size_t n = grp == nullptr ? 0 : strnlen(grp, PMIX_MAX_NSLEN + 1);
  if (n == 0 || n > PMIX_MAX_NSLEN) {
    log::error("api", call, ": a group needs a name of 1 to ", PMIX_MAX_NSLEN, " characters");
    return PMIX_ERR_BAD_PARAM;
  }
  r.op = op;
  r.name.assign(grp, n);
  if (convert::from_c(info, ninfo, r.directives) != PMIX_SUCCESS) {
    log::error("api", call, ": unreadable info");
    return PMIX_ERR_BAD_PARAM;
  }
  return PMIX_SUCCESS;
}

pmix_status_t with_procs(const char* call, group_op op, const char grp[], const pmix_proc_t procs[],
                         size_t nprocs, const pmix_info_t info[], size_t ninfo, protocol::group_request& r) {
  if (auto rc = start(call, op, grp, info, ninfo, r); rc != PMIX_SUCCESS) return rc;
  if (procs == nullptr || nprocs == 0 || convert::from_c(procs, nprocs, r.procs) != PMIX_SUCCESS) {
    log::error("api", call, ": no processes, or unreadable ones");
    return PMIX_ERR_BAD_PARAM;
  }
  return PMIX_SUCCESS;
}

pmix_status_t joining(const char grp[], const pmix_proc_t* leader, pmix_group_opt_t opt,
                      const pmix_info_t info[], size_t ninfo, protocol::group_request& r) {
  if (auto rc = start("PMIx_Group_join", group_op::join, grp, info, ninfo, r); rc != PMIX_SUCCESS) return rc;
  if (opt != PMIX_GROUP_ACCEPT && opt != PMIX_GROUP_DECLINE) {
    log::error("api", "PMIx_Group_join: the option is neither PMIX_GROUP_ACCEPT nor PMIX_GROUP_DECLINE");
    return PMIX_ERR_BAD_PARAM;
  }
  r.accept = opt == PMIX_GROUP_ACCEPT;
  if (leader != nullptr) {
    std::vector<proc_id> p;
    if (convert::from_c(leader, 1, p) != PMIX_SUCCESS || p.size() != 1) {
      log::error("api", "PMIx_Group_join: unreadable leader");
      return PMIX_ERR_BAD_PARAM;
    }
    r.leader = p.front();
  }
  return PMIX_SUCCESS;
}

pmix_status_t session_for(const char* call, std::shared_ptr<client::session>& s) {
  s = current_session();
  if (s) return PMIX_SUCCESS;
  log::debug("api", call, " before PMIx_Init");
  return PMIX_ERR_INIT;
}

// Sends `r` and waits; the group's results go to results / nresults.
pmix_status_t request_and_wait(const char* call, const protocol::group_request& r, pmix_info_t** results,
                               size_t* nresults) {
  if (on_library_thread()) return refuse_blocking(call);
  if (results != nullptr) *results = nullptr;
  if (nresults != nullptr) *nresults = 0;
  std::shared_ptr<client::session> s;
  if (auto rc = session_for(call, s); rc != PMIX_SUCCESS) return rc;
  auto got = std::make_shared<info_list>();
  const auto rc = wait_for(s, [&](client::done_fn done) {
    return s->group(r, [got, done](pmix_status_t st, info_list info) {
      *got = std::move(info);
      done(st);
    });
  });
  if (results != nullptr && nresults != nullptr && !got->empty()) {
    *results = convert::new_infos(*got);
    *nresults = got->size();
  }
  return rc;
}

pmix_status_t request_infos(const char* call, const protocol::group_request& r, pmix_info_cbfunc_t cbfunc,
                            void* cbdata) {
  std::shared_ptr<client::session> s;
  if (auto rc = session_for(call, s); rc != PMIX_SUCCESS) return rc;
  return s->group(r, [cbfunc, cbdata](pmix_status_t st, info_list results) {
    if (cbfunc != nullptr) convert::deliver_infos(cbfunc, cbdata, st, results);
  });
}

pmix_status_t request_op(const char* call, const protocol::group_request& r, pmix_op_cbfunc_t cbfunc,
                         void* cbdata) {
  std::shared_ptr<client::session> s;
  if (auto rc = session_for(call, s); rc != PMIX_SUCCESS) return rc;
  return s->group(r, [cbfunc, cbdata](pmix_status_t st, info_list) {
    if (cbfunc != nullptr) cbfunc(st, cbdata);
  });
}

}  // namespace
}  // namespace pmix::api

using namespace pmix;
using namespace pmix::api;

PMIX_EXPORT pmix_status_t PMIx_Group_construct(const char grp[], const pmix_proc_t procs[], size_t nprocs,
                                               const pmix_info_t directives[], size_t ndirs,
                                               pmix_info_t** results, size_t* nresults) {
  protocol::group_request r;
  if (auto rc =
          with_procs("PMIx_Group_construct", group_op::construct, grp, procs, nprocs, directives, ndirs, r);
      rc != PMIX_SUCCESS)
    return rc;
  return request_and_wait("PMIx_Group_construct", r, results, nresults);
}

PMIX_EXPORT pmix_status_t PMIx_Group_construct_nb(const char grp[], const pmix_proc_t procs[], size_t nprocs,
                                                  const pmix_info_t info[], size_t ninfo,
                                                  pmix_info_cbfunc_t cbfunc, void* cbdata) {
  protocol::group_request r;
  if (auto rc =
          with_procs("PMIx_Group_construct_nb", group_op::construct, grp, procs, nprocs, info, ninfo, r);
      rc != PMIX_SUCCESS)
    return rc;
  return request_infos("PMIx_Group_construct_nb", r, cbfunc, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_Group_invite(const char grp[], const pmix_proc_t procs[], size_t nprocs,
                                            const pmix_info_t info[], size_t ninfo, pmix_info_t** results,
                                            size_t* nresult) {
  protocol::group_request r;
  if (auto rc = with_procs("PMIx_Group_invite", group_op::invite, grp, procs, nprocs, info, ninfo, r);
      rc != PMIX_SUCCESS)
    return rc;
  return request_and_wait("PMIx_Group_invite", r, results, nresult);
}

PMIX_EXPORT pmix_status_t PMIx_Group_invite_nb(const char grp[], const pmix_proc_t procs[], size_t nprocs,
                                               const pmix_info_t info[], size_t ninfo,
                                               pmix_info_cbfunc_t cbfunc, void* cbdata) {
  protocol::group_request r;
  if (auto rc = with_procs("PMIx_Group_invite_nb", group_op::invite, grp, procs, nprocs, info, ninfo, r);
      rc != PMIX_SUCCESS)
    return rc;
  return request_infos("PMIx_Group_invite_nb", r, cbfunc, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_Group_join(const char grp[], const pmix_proc_t* leader, pmix_group_opt_t opt,
                                          const pmix_info_t info[], size_t ninfo, pmix_info_t** results,
                                          size_t* nresult) {
  protocol::group_request r;
  if (auto rc = joining(grp, leader, opt, info, ninfo, r); rc != PMIX_SUCCESS) return rc;
  return request_and_wait("PMIx_Group_join", r, results, nresult);
}

PMIX_EXPORT pmix_status_t PMIx_Group_join_nb(const char grp[], const pmix_proc_t* leader,
                                             pmix_group_opt_t opt, const pmix_info_t info[], size_t ninfo,
                                             pmix_info_cbfunc_t cbfunc, void* cbdata) {
  protocol::group_request r;
  if (auto rc = joining(grp, leader, opt, info, ninfo, r); rc != PMIX_SUCCESS) return rc;
  return request_infos("PMIx_Group_join_nb", r, cbfunc, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_Group_leave(const char grp[], const pmix_info_t info[], size_t ninfo) {
  protocol::group_request r;
  if (auto rc = start("PMIx_Group_leave", group_op::leave, grp, info, ninfo, r); rc != PMIX_SUCCESS)
    return rc;
  return request_and_wait("PMIx_Group_leave", r, nullptr, nullptr);
}

PMIX_EXPORT pmix_status_t PMIx_Group_leave_nb(const char grp[], const pmix_info_t info[], size_t ninfo,
                                              pmix_op_cbfunc_t cbfunc, void* cbdata) {
  protocol::group_request r;
  if (auto rc = start("PMIx_Group_leave_nb", group_op::leave, grp, info, ninfo, r); rc != PMIX_SUCCESS)
    return rc;
  return request_op("PMIx_Group_leave_nb", r, cbfunc, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_Group_destruct(const char grp[], const pmix_info_t info[], size_t ninfo) {
  protocol::group_request r;
  if (auto rc = start("PMIx_Group_destruct", group_op::destruct, grp, info, ninfo, r); rc != PMIX_SUCCESS)
    return rc;
  return request_and_wait("PMIx_Group_destruct", r, nullptr, nullptr);
}

PMIX_EXPORT pmix_status_t PMIx_Group_destruct_nb(const char grp[], const pmix_info_t info[], size_t ninfo,
                                                 pmix_op_cbfunc_t cbfunc, void* cbdata) {
  protocol::group_request r;
  if (auto rc = start("PMIx_Group_destruct_nb", group_op::destruct, grp, info, ninfo, r); rc != PMIX_SUCCESS)
    return rc;
  return request_op("PMIx_Group_destruct_nb", r, cbfunc, cbdata);
}
