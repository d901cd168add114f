// The requests a client hands to the host through its peer (HostRequest),
// and the two the server serves itself when the host does not: heartbeat
// monitoring and credentials (docs/architecture.md, "Host requests").
#include <caf/send.hpp>
#include <pmix.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>

#include "actors/credential.hpp"
#include "actors/peer_detail.hpp"
#include "server/host_module.hpp"
#include "common/log.hpp"
#include "protocol/codec.hpp"
#include "protocol/messages.hpp"

namespace pmix::actors::peer {
namespace {

host::module::reply_fn answer_later(self_ptr self, std::uint64_t id) {
  return answer_once("host request", [addr = self->address(), gate = self->state.ctx->gate, id](
                                         pmix_status_t status, info_list info, std::string data) {
    gate->send_if_open(addr, host_done_atom::value, id, status, std::move(info), std::move(data));
  });
}

host::done_fn status_later(self_ptr self, std::uint64_t id) {
  return answer_once("host request", [addr = self->address(), gate = self->state.ctx->gate, id](
                                         pmix_status_t status, std::string) {
    gate->send_if_open(addr, host_done_atom::value, id, status, info_list{}, std::string{});
  });
}

void not_supported(self_ptr self, std::uint64_t id, const char* what) {
  log::debug("peer", to_string(self->state.proc), ": ", what, ": the host does not support it");
  send_info_reply(self, id, PMIX_ERR_NOT_SUPPORTED, {});
}

std::int64_t now() { return static_cast<std::int64_t>(std::time(nullptr)); }

// ---- credentials ------------------------------------------------------------

// Whether a PMIX_CRED_TYPE directive (a prioritized, comma-separated list)
// admits ours; no directive admits any.
bool admits_our_type(const info_list& directives) {
  const auto* d = find(directives, PMIX_CRED_TYPE);
  if (d == nullptr || d->val.as_string() == nullptr) return true;
  const std::string& list = *d->val.as_string();
  for (std::size_t at = 0; at <= list.size();) {
    const auto comma = std::min(list.find(',', at), list.size());
    if (list.compare(at, comma - at, credential::type) == 0) return true;
    at = comma + 1;
  }
  return false;
}

void get_credential(self_ptr self, std::uint64_t id, const info_list& directives) {
  auto& st = self->state;
  if (st.ctx->host->get_credential(st.proc, directives, answer_later(self, id))) return;
  if (st.ctx->credential_key.empty() || !admits_our_type(directives))
    return not_supported(self, id, "PMIx_Get_credential");
  const auto& who = st.cred;
  if (who.uid == static_cast<uid_t>(-1) || who.gid == static_cast<gid_t>(-1)) {
    // Over TCP from another host the server does not know the user: it
    // cannot vouch for one.
    log::warning("peer", to_string(st.proc), ": no credential for a process whose user is unknown (TCP)");
    return send_info_reply(self, id, PMIX_ERR_NO_PERMISSIONS, {});
  }
  // PMIX_TIMEOUT asks for a lifetime; it is capped (both are far from
  // overflowing a time_t when added to now).
  const std::int64_t cap = st.ctx->max_credential_lifetime_s;
  std::int64_t lifetime = std::min(credential::default_lifetime_s, cap);
  if (const auto* t = find(directives, PMIX_TIMEOUT); t != nullptr && t->val.as_uint() && *t->val.as_uint() > 0) {
    const auto asked = *t->val.as_uint();
    lifetime = asked > static_cast<std::uint64_t>(cap) ? cap : static_cast<std::int64_t>(asked);
    if (lifetime < static_cast<std::int64_t>(std::min<std::uint64_t>(asked, INT64_MAX)))
      log::debug("peer", to_string(st.proc), ": credential lifetime ", asked, " s capped at ", cap,
                 " s (PMIX_CXX_MAX_CREDENTIAL_LIFETIME_S)");
  }
  credential::claims c;
  c.uid = who.uid;
  c.gid = who.gid;
  c.pid = who.pid;
  c.proc = st.proc;
  c.expires = now() + lifetime;
  auto issued = credential::issue(st.ctx->credential_key, c);
  if (issued.empty()) return not_supported(self, id, "PMIx_Get_credential");  // logged by issue
  send_info_reply(self, id, PMIX_SUCCESS, {{PMIX_CRED_TYPE, value::string(credential::type), 0}},
                  std::move(issued));
}

void validate_credential(self_ptr self, std::uint64_t id, const std::string& cred, const info_list& directives) {
  auto& st = self->state;
  if (st.ctx->host->validate_credential(st.proc, cred, directives, answer_later(self, id))) return;
  if (st.ctx->credential_key.empty() || !admits_our_type(directives))
    return not_supported(self, id, "PMIx_Validate_credential");
  credential::claims c;
  std::string why;
  const auto rc = credential::validate(st.ctx->credential_key, cred, now(), c, why);
  if (rc != PMIX_SUCCESS) {
    log::warning("peer", to_string(st.proc), ": credential refused: ", why);
    return send_info_reply(self, id, rc, {});
  }
  send_info_reply(self, id, PMIX_SUCCESS,
                  {{PMIX_USERID, value::unsigned_(PMIX_UINT32, c.uid), 0},
                   {PMIX_GRPID, value::unsigned_(PMIX_UINT32, c.gid), 0},
                   {PMIX_PROCID, value::proc(c.proc), 0},
                   {PMIX_CRED_TYPE, value::string(credential::type), 0}});
}

// ---- heartbeat monitoring ---------------------------------------------------

void arm(self_ptr self) {
  const auto& hb = *self->state.rare().heartbeat;
  self->delayed_send(self, std::chrono::seconds(hb.seconds), beat_check_atom::value, hb.generation);
}

void alert(self_ptr self) {
  auto& st = self->state;
  auto& hb = *st.rare().heartbeat;
  hb.alerted = true;
  log::warning("peer", to_string(st.proc), ": no heartbeat for ", hb.missed, " checks of ", hb.seconds,
               " s: raising ", PMIx_Error_string(hb.error));
  client_event_msg msg;
  msg.ev.status = hb.error;
  msg.ev.source = st.proc;
  msg.ev.range = PMIX_RANGE_NAMESPACE;
  msg.ev.info.push_back({PMIX_EVENT_AFFECTED_PROC, value::proc(st.proc), 0});
  if (!hb.id.empty()) msg.ev.info.push_back({PMIX_MONITOR_ID, value::string(hb.id), 0});
  // The process itself is told too: it may handle its own stall
  // (PMIX_MONITOR_APP_CONTROL).
  self->request(st.server, caf::infinite, std::move(msg)).then([](pmix_status_t) {}, [](caf::error&) {});
}

}  // namespace

void check_heartbeat(self_ptr self, std::uint64_t generation) {
  auto& st = self->state;
  auto* rare = st.rare_if();
  if (!rare || !rare->heartbeat || rare->heartbeat->generation != generation) return;  // cancelled or replaced
  auto& hb = *rare->heartbeat;
  if (hb.beat) {
    hb.beat = false;
    hb.missed = 0;
    hb.alerted = false;
  } else if (++hb.missed >= hb.drops && !hb.alerted) {
    alert(self);
  }
  arm(self);
}

namespace {

pmix_status_t start_heartbeat(self_ptr self, pmix_status_t error, const info_list& directives) {
  auto& st = self->state;
  peer_state::heartbeat_monitor hb;
  const auto* time = find(directives, PMIX_MONITOR_HEARTBEAT_TIME);
  const auto seconds = time == nullptr ? std::optional<std::uint64_t>{} : time->val.as_uint();
  if (!seconds || *seconds == 0 || *seconds > 86400) {
    log::error("peer", to_string(st.proc), ": PMIX_MONITOR_HEARTBEAT needs PMIX_MONITOR_HEARTBEAT_TIME (1 to 86400 s)");
    return PMIX_ERR_BAD_PARAM;
  }
  hb.seconds = static_cast<std::uint32_t>(*seconds);
  if (const auto* d = find(directives, PMIX_MONITOR_HEARTBEAT_DROPS); d != nullptr && d->val.as_uint())
    hb.drops = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, *d->val.as_uint()));
  if (const auto* i = find(directives, PMIX_MONITOR_ID); i != nullptr && i->val.as_string()) hb.id = *i->val.as_string();
  if (error != PMIX_SUCCESS) hb.error = error;
  hb.generation = ++st.rare().heartbeat_generation;
  st.ctx->sensors->fetch_add(1, std::memory_order_relaxed);
  hb.sensor = std::shared_ptr<void>(nullptr, [count = st.ctx->sensors](void*) {
    count->fetch_sub(1, std::memory_order_relaxed);
  });
  st.rare().heartbeat = std::move(hb);
  arm(self);
  return PMIX_SUCCESS;
}

void monitor(self_ptr self, std::uint64_t id, const info& what, pmix_status_t error, const info_list& directives) {
  auto& st = self->state;
  // These two are requests by their presence, whatever their value: the
  // Standard types them void*, and programs written for OpenPMIx pass a
  // NULL pointer.
  auto* rare = st.rare_if();
  if (what.key == PMIX_SEND_HEARTBEAT && rare && rare->heartbeat) {
    rare->heartbeat->beat = true;
    return send_info_reply(self, id, PMIX_SUCCESS, {});
  }
  if (what.key == PMIX_MONITOR_HEARTBEAT)
    return send_info_reply(self, id, start_heartbeat(self, error, directives), {});
  if (what.key == PMIX_MONITOR_CANCEL && rare && rare->heartbeat) {
    const auto* name = what.val.as_string();
    if (name == nullptr || name->empty() || *name == rare->heartbeat->id) {
      rare->heartbeat.reset();
      return send_info_reply(self, id, PMIX_SUCCESS, {});
    }
  }
  // Anything else (file monitors, the host's own kinds) is the host's.
  if (!st.ctx->host->monitor(st.proc, what, error, directives, answer_later(self, id)))
    not_supported(self, id, "PMIx_Process_monitor");
}

}  // namespace

void on_host_request(self_ptr self, std::uint64_t id, const wire::HostRequest& req) {
  auto& st = self->state;
  std::vector<proc_id> procs;
  for (const auto& p : req.procs()) procs.push_back(protocol::from_wire(p));
  info_list info, directives;
  std::string error;
  if (!protocol::from_wire(req.info(), info, &error) || !protocol::from_wire(req.directives(), directives, &error))
    return protocol_error(self, error);
  switch (req.call()) {
    case wire::HOST_ALLOCATE:
      if (!st.ctx->host->allocate(st.proc, static_cast<pmix_alloc_directive_t>(req.code()), info,
                                  answer_later(self, id)))
        not_supported(self, id, "PMIx_Allocation_request");
      return;
    case wire::HOST_MONITOR:
      if (info.size() != 1) return protocol_error(self, "a monitor request names one item");
      return monitor(self, id, info.front(), req.code(), directives);
    case wire::HOST_GET_CREDENTIAL:
      return get_credential(self, id, directives);
    case wire::HOST_VALIDATE_CREDENTIAL:
      return validate_credential(self, id, req.data(), directives);
    case wire::HOST_IOF_PUSH: {
      // Held, unanswered, while the host has this producer's stdin stopped.
      switch (st.ctx->stdin_control->hold_if_stopped(st.proc, self->address(), id,
                                                     [&req] { return req.SerializeAsString(); }, st.ctx->max_requests,
                                                     st.ctx->max_request_bytes)) {
        case stdin_flow::hold::held:
          log::debug("peer", to_string(st.proc), ": stdin stopped by the host: push held");
          return;
        case stdin_flow::hold::refused:
          log::warning("peer", to_string(st.proc), " (uid ", st.owner, "): PMIx_IOF_push refused: its stdin is ",
                       "stopped and it has as many pushes waiting as PMIX_CXX_MAX_REQUESTS or _BYTES allow");
          return send_info_reply(self, id, PMIX_ERR_OUT_OF_RESOURCE, {});
        case stdin_flow::hold::no:
          break;
      }
      std::optional<std::string> bytes;
      if (req.has_data()) bytes = req.data();
      // A host answering PMIX_ERR_IOF_XOFF took the bytes and stops this
      // producer until it calls PMIx_server_IOF_flow_control with XON.
      auto answer = [flow = st.ctx->stdin_control, producer = st.proc, done = status_later(self, id)](
                        pmix_status_t status, std::string data) mutable {
        if (status == PMIX_ERR_IOF_XOFF) {
          flow->set(producer, true);
          status = PMIX_SUCCESS;
        }
        done(status, std::move(data));
      };
      if (!st.ctx->host->push_stdin(st.proc, procs, directives, bytes, std::move(answer)))
        not_supported(self, id, "PMIx_IOF_push");
      return;
    }
    case wire::HOST_IOF_PULL: {
      const auto ref = req.ref();
      const auto channels = static_cast<pmix_iof_channel_t>(req.code());
      self->request(st.server, caf::infinite,
                    iof_pull_msg{caf::actor_cast<caf::actor>(self), ref, std::move(procs), channels,
                                 std::move(directives), st.proc, st.owner})
          .then(
              [=](pmix_status_t rc) {
                if (rc == PMIX_SUCCESS) ++self->state.iof_pulls;
                send_info_reply(self, id, rc, {});
              },
              [=](caf::error&) { send_info_reply(self, id, PMIX_ERR_UNREACH, {}); });
      return;
    }
    case wire::HOST_IOF_DEREGISTER:
      self->request(st.server, caf::infinite, iof_deregister_msg{caf::actor_cast<caf::actor>(self), req.ref()})
          .then([=](pmix_status_t rc) { send_info_reply(self, id, rc, {}); },
                [=](caf::error&) { send_info_reply(self, id, PMIX_ERR_UNREACH, {}); });
      return;
    case wire::HOST_FABRIC:
      if (!st.ctx->host->fabric(st.proc, static_cast<pmix_fabric_operation_t>(req.code()), directives,
                                answer_later(self, id)))
        not_supported(self, id, "PMIx_Fabric_*");
      return;
    case wire::HOST_SESSION_CONTROL:
      if (req.ref() > UINT32_MAX) return protocol_error(self, "a session id is 32 bits");
      if (!st.ctx->host->session_control(st.proc, static_cast<std::uint32_t>(req.ref()), directives,
                                         answer_later(self, id)))
        not_supported(self, id, "PMIx_Session_control");
      return;
    case wire::HOST_RESOURCE_BLOCK: {
      std::vector<pmix_resource_unit_t> units;
      units.reserve(static_cast<std::size_t>(req.units_size()));
      for (const auto& u : req.units()) units.push_back(pmix_resource_unit_t{u.type(), static_cast<size_t>(u.count())});
      if (req.code() < 0 || req.code() > UINT8_MAX) return protocol_error(self, "a block directive is 8 bits");
      if (!st.ctx->host->resource_block(st.proc, static_cast<pmix_resource_block_directive_t>(req.code()), req.data(),
                                        units, info, answer_later(self, id)))
        not_supported(self, id, "PMIx_Resource_block");
      return;
    }
    default:
      log::warning("peer", to_string(st.proc), ": unsupported host request ", static_cast<int>(req.call()));
      return send_info_reply(self, id, PMIX_ERR_NOT_SUPPORTED, {});
  }
}

void on_group_request(self_ptr self, std::uint64_t id, const wire::GroupRequest& req) {
  auto& st = self->state;
  group_msg msg;
  msg.op = static_cast<std::uint32_t>(req.op());
  msg.name = req.name();
  msg.from = st.proc;
  msg.uid = st.owner;
  for (const auto& p : req.procs()) msg.procs.push_back(protocol::from_wire(p));
  std::string error;
  if (!protocol::from_wire(req.directives(), msg.directives, &error)) return protocol_error(self, error);
  if (req.has_leader()) msg.leader = protocol::from_wire(req.leader());
  msg.accept = req.accept();
  if (msg.name.empty() || msg.name.size() > PMIX_MAX_NSLEN) {
    log::error("peer", to_string(st.proc), ": a group needs a name of 1 to ", PMIX_MAX_NSLEN, " characters");
    return send_info_reply(self, id, PMIX_ERR_BAD_PARAM, {});
  }
  self->request(st.server, caf::infinite, std::move(msg))
      .then(
          [=](fence_result& r) {
            auto& st = self->state;
            if (!r.reply || !can_send(self)) return;
            if (st.openpmix) {
              wire::Envelope e;
              e.set_id(id);
              if (!e.mutable_info_reply()->ParseFromString(*r.reply)) e.mutable_info_reply()->set_status(PMIX_ERR_UNPACK_FAILURE);
              return send_envelope(self, e);
            }
            const protocol::frame_prefix prefix{id, protocol::body::info_reply, r.reply->size()};
            answered(self, id);
            if (!st.conn->send(prefix.view(), *r.reply))
              log::debug("peer", to_string(st.proc), ": write failed, connection broken");
          },
          [=](caf::error&) { send_info_reply(self, id, PMIX_ERR_UNREACH, {}); });
}

void on_deliver_iof(self_ptr self, const deliver_iof_msg& msg) {
  auto& st = self->state;
  if (!can_send(self) || st.state != peer_state::phase::active) return;
  if (st.openpmix) return deliver_openpmix_iof(self, *msg.frame);
  if (!st.conn->send(*msg.frame)) log::debug("peer", to_string(st.proc), ": write failed, output not delivered");
}

}  // namespace pmix::actors::peer
