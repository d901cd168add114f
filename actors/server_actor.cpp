#include "actors/server_actor.hpp"

#include <algorithm>
#include <caf/exit_reason.hpp>
#include <caf/system_messages.hpp>

#include "actors/job_layout.hpp"
#include "actors/nspace_actor.hpp"
#include "actors/upcall.hpp"
#include "api/host_module.hpp"
#include <pmix.h>

#include "common/directives.hpp"
#include "common/log.hpp"
#include "protocol/codec.hpp"
#include "protocol/version.hpp"

namespace pmix::actors {

const char* server_state::name = "pmix.server";

namespace {
// The same locality for every tracker book.
fence_book::locality_fn locality_of(server_state* st) {
  return [st](const std::string& ns) -> const nspace_locality* {
    auto it = st->nspaces.find(ns);
    return it == st->nspaces.end() ? nullptr : &it->second.locality;
  };
}
}  // namespace

server_state::server_state()
    : fences(locality_of(this)),
      connects(locality_of(this), protocol::connect_procs_reply_body),
      disconnects(locality_of(this), protocol::connect_procs_reply_body) {}

env_list client_environment(const server_context& ctx, const proc_id& proc) {
  env_list env;
  env.push_back("PMIX_NAMESPACE=" + proc.nspace);
  env.push_back("PMIX_RANK=" + std::to_string(proc.rank));
  env.push_back("PMIX_SERVER_URI41=" + ctx.uri);
  env.push_back("PMIX_SERVER_URI4=" + ctx.uri);
  env.push_back("PMIX_SERVER_NSPACE=" + ctx.server.nspace);
  env.push_back("PMIX_SERVER_RANK=" + std::to_string(ctx.server.rank));
  env.push_back("PMIX_SERVER_TMPDIR=" + ctx.tmpdir);
  env.push_back("PMIX_HOSTNAME=" + ctx.hostname);
  env.push_back(std::string{"PMIX_VERSION="} + protocol::abi_version);
  return env;
}

namespace {

using self_ptr = caf::stateful_actor<server_state>*;

using collective = server_state::collective;
constexpr collective all_collectives[] = {collective::fence, collective::connect, collective::disconnect};

const char* name_of(collective kind) {
  return kind == collective::fence ? "fence" : kind == collective::connect ? "connect" : "disconnect";
}

void fail_collective(self_ptr self, collective kind, std::uint64_t id, pmix_status_t status) {
  self->state.book(kind).complete(id, fence_result{status, nullptr, nullptr});
}

void fail_fence(self_ptr self, std::uint64_t id, pmix_status_t status) {
  fail_collective(self, collective::fence, id, status);
}

void complete_connect(self_ptr self, std::uint64_t id, const std::vector<proc_id>& procs);

// A collective that completes on this node, without the host, honours only
// the directives the library acts on: a required one it does not is
// PMIX_ERR_NOT_SUPPORTED (one that goes to the host is the host's to judge).
pmix_status_t check_local_directives(collective kind, const info_list& info) {
  if (kind == collective::fence) return directives::check("PMIx_Fence", info, {PMIX_COLLECT_DATA});
  return directives::check(kind == collective::connect ? "PMIx_Connect" : "PMIx_Disconnect", info, {});
}

// A connect or disconnect whose local participants have all arrived. When
// every participant is local it completes here, as a local fence does (as
// OpenPMIx does: Open MPI's mpirun then sees no up-call); otherwise the host
// joins it, with its connect / disconnect up-call, once for the whole set.
void advance_connection(self_ptr self, collective kind, fence_tracker& t) {
  auto& st = self->state;
  t.host_called = true;
  if (t.all_local) {
    if (const auto rc = check_local_directives(kind, t.info); rc != PMIX_SUCCESS)
      return fail_collective(self, kind, t.id, rc);
    if (kind == collective::connect) return complete_connect(self, t.id, t.procs);
    return st.disconnects.complete(t.id, fence_result{PMIX_SUCCESS, nullptr, nullptr});
  }
  const auto upcall = st.next_upcall++;
  auto done = reply_to_actor(self->address(), st.ctx, upcall);
  const bool asked = kind == collective::connect ? st.ctx->host->connect(t.procs, t.info, std::move(done))
                                                 : st.ctx->host->disconnect(t.procs, t.info, std::move(done));
  if (asked) {
    st.collective_upcalls.emplace(upcall, std::make_pair(kind, t.id));
    return;
  }
  log::warning("server", "a ", name_of(kind), " spans other nodes but the host has no ", name_of(kind),
               " up-call");
  fail_collective(self, kind, t.id, PMIX_ERR_NOT_SUPPORTED);
}

// A tracker whose local participants have all arrived completes here or goes
// to the host.
void advance_collective(self_ptr self, collective kind, fence_tracker& t) {
  auto& st = self->state;
  // A local participant that already left can never contribute. A death
  // (PMIX_ERR_PROC_TERM_WO_SYNC) is reported before a finalize.
  // Runs on every contribution: it walks whichever is shorter, the missing
  // participants or the departed ranks (usually none), both in proc order,
  // so the same one is named either way.
  const proc_id* gone = nullptr;
  pmix_status_t reason = PMIX_SUCCESS;
  auto consider = [&](const proc_id& p, pmix_status_t why) {
    if (gone == nullptr || (reason != PMIX_ERR_PROC_TERM_WO_SYNC && why == PMIX_ERR_PROC_TERM_WO_SYNC)) {
      gone = &p;
      reason = why;
    }
  };
  const auto missing = t.expected.size() - t.arrived_count;
  if (st.departed.empty() || missing == 0) {
    // nobody can be gone
  } else if (st.departed.size() <= missing) {
    for (const auto& [p, why] : st.departed)
      if (t.waits_for(p)) consider(p, why);
  } else {
    for (std::size_t k = 0; k < t.expected.size(); ++k) {
      if (t.arrived_flags[k]) continue;
      auto d = st.departed.find(t.expected[k]);
      if (d != st.departed.end()) consider(d->first, d->second);
    }
  }
  if (gone != nullptr) {
    log::warning("server", "a ", name_of(kind), " fails: participant ", to_string(*gone), " has left (",
                 PMIx_Error_string(reason), ")");
    return fail_collective(self, kind, t.id, reason);
  }
  if (!t.ready() || t.host_called) return;
  if (kind != collective::fence) return advance_connection(self, kind, t);
  if (t.all_local) {
    if (const auto rc = check_local_directives(kind, t.info); rc != PMIX_SUCCESS)
      return fail_collective(self, kind, t.id, rc);
    st.fences.complete(t.id, fence_result{PMIX_SUCCESS,
                                          std::make_shared<const std::string>(std::move(t.data)), nullptr});
    return;
  }
  const auto upcall = st.next_upcall++;
  const bool asked = st.ctx->host->fence_nb(t.procs, t.info, t.data,
                                            reply_to_actor(self->address(), st.ctx, upcall));
  if (!asked) {
    log::warning("server", "fence spans other nodes but the host has no fence_nb");
    return fail_fence(self, t.id, PMIX_ERR_NOT_SUPPORTED);
  }
  t.host_called = true;
  st.collective_upcalls.emplace(upcall, std::make_pair(collective::fence, t.id));
}

void advance_fence(self_ptr self, fence_tracker& t) { advance_collective(self, collective::fence, t); }

// Every tracker of every collective still waiting for `p` moves on (it left).
void advance_waiting_for(self_ptr self, const proc_id& p) {
  for (auto kind : all_collectives) {
    auto& book = self->state.book(kind);
    for (auto id : book.waiting_for(p))
      if (auto* t = book.find(id)) advance_collective(self, kind, *t);
  }
}

// Every tracker naming a participant of `nspace` fails (it went away).
void fail_naming(self_ptr self, const std::string& nspace) {
  for (auto kind : all_collectives)
    for (auto id : self->state.book(kind).naming(nspace)) fail_collective(self, kind, id, PMIX_ERR_NOT_FOUND);
}

// A connect completes with the job data of every participant's namespace
// this server knows (each client then reads the others' job data locally).
void complete_connect(self_ptr self, std::uint64_t id, const std::vector<proc_id>& procs) {
  auto& st = self->state;
  std::vector<caf::actor> known;
  std::vector<std::string> names;
  for (const auto& p : procs) {
    if (std::find(names.begin(), names.end(), p.nspace) != names.end()) continue;
    names.push_back(p.nspace);
    auto it = st.nspaces.find(p.nspace);
    if (it != st.nspaces.end() && !it->second.tool) known.push_back(it->second.actor);
  }
  if (known.empty()) return st.connects.complete(id, fence_result{PMIX_SUCCESS, nullptr, nullptr});
  auto jobs = std::make_shared<std::vector<std::shared_ptr<const std::string>>>(known.size());
  auto remaining = std::make_shared<std::size_t>(known.size());
  auto finish = [self, id, jobs] {
    std::string fields;
    for (const auto& j : *jobs)
      if (j) protocol::append_length_delimited(fields, 2, *j);
    self->state.connects.complete(
        id, fence_result{PMIX_SUCCESS, std::make_shared<const std::string>(std::move(fields)), nullptr});
  };
  for (std::size_t k = 0; k < known.size(); ++k)
    self->request(known[k], caf::infinite, job_blob_msg{})
        .then(
            [=](job_blob& b) {
              (*jobs)[k] = std::move(b.job);
              if (--*remaining == 0) finish();
            },
            [=](caf::error&) {
              if (--*remaining == 0) finish();
            });
}

caf::result<fence_result> on_connect_procs(self_ptr self, connect_procs_msg& msg) {
  auto& st = self->state;
  const auto kind = msg.disconnect ? collective::disconnect : collective::connect;
  auto rp = self->make_response_promise();
  fence_msg as_fence;
  as_fence.from = msg.from;
  as_fence.procs = std::move(msg.procs);
  if (as_fence.procs.empty()) as_fence.procs.push_back(proc_id{msg.from.nspace, rank_wildcard});
  as_fence.info = std::move(msg.info);
  pmix_status_t status = PMIX_SUCCESS;
  auto& book = st.book(kind);
  auto* t = book.contribute(as_fence, [rp](const fence_result& r) mutable { rp.deliver(r); }, status);
  if (t == nullptr) {
    log::error("server", name_of(kind), " from ", to_string(msg.from), " refused: ", PMIx_Error_string(status));
    rp.deliver(fence_result{status, nullptr,
                            std::make_shared<const std::string>(protocol::connect_procs_reply_body(status, {}))});
    return rp;
  }
  advance_collective(self, kind, *t);
  return rp;
}

caf::result<fence_result> on_fence(self_ptr self, fence_msg& msg) {
  auto& st = self->state;
  auto rp = self->make_response_promise();
  pmix_status_t status = PMIX_SUCCESS;
  auto* t = st.fences.contribute(
      msg, [rp](const fence_result& r) mutable { rp.deliver(r); }, status);
  if (t == nullptr) {
    log::error("server", "fence from ", to_string(msg.from), " refused: ",
               PMIx_Error_string(status));
    rp.deliver(fence_result{status, nullptr,
                            std::make_shared<const std::string>(protocol::fence_reply(status, {}))});
    return rp;
  }
  advance_fence(self, *t);
  return rp;
}

caf::result<get_result> on_get(self_ptr self, get_msg& msg) {
  auto& st = self->state;
  auto it = st.nspaces.find(msg.target.nspace);
  // A client asks for a reserved key only of a namespace it has no job data
  // for (a job it spawned or connected to): the namespace's job data answers.
  const bool reserved = msg.key.compare(0, 4, "pmix") == 0;
  if (reserved && it != st.nspaces.end() && !it->second.tool) {
    auto rp = self->make_response_promise();
    self->request(it->second.actor, caf::infinite, job_blob_msg{})
        .then([rp](job_blob& b) mutable { rp.deliver(get_result{PMIX_SUCCESS, {}, std::move(b.job)}); },
              [rp](caf::error&) mutable { rp.deliver(get_result{PMIX_ERR_NOT_FOUND, {}, nullptr}); });
    return rp;
  }
  if (it != st.nspaces.end()) {
    const auto& loc = it->second.locality;
    const bool local =
        std::binary_search(loc.local_ranks.begin(), loc.local_ranks.end(), msg.target.rank);
    if (local) {
      auto rp = self->make_response_promise();
      rp.delegate(it->second.actor, std::move(msg));
      return rp;
    }
  }
  auto rp = self->make_response_promise();
  const auto upcall = st.next_upcall++;
  if (st.ctx->host->direct_modex(msg.target, msg.info,
                                 reply_to_actor(self->address(), st.ctx, upcall))) {
    st.dmodex_upcalls.emplace(upcall, rp);
    return rp;
  }
  if (it != st.nspaces.end() && !it->second.locality.job_size) {
    // Placement unknown: the rank may still connect here.
    rp.delegate(it->second.actor, std::move(msg));
    return rp;
  }
  log::warning("server", "get of ", to_string(msg.target), "'s data from ", to_string(msg.from),
               ": the rank is not on this node and the host has no direct_modex");
  rp.deliver(get_result{PMIX_ERR_NOT_SUPPORTED, {}});
  return rp;
}

void on_rank_state(self_ptr self, const rank_state_msg& msg) {
  auto& st = self->state;
  // A rank of a namespace already deregistered (its report was on its way
  // while the namespace went): nothing can wait for it any more.
  if (st.nspaces.count(msg.proc.nspace) == 0) return;
  if (msg.live) {
    st.departed.erase(msg.proc);
    return;
  }
  // A rank whose process finalized may run again (the cycling guarantee of
  // spec 004, or a new process for the rank): collectives naming it wait
  // for that process. Only a death is remembered: a process that ended
  // without PMIx_Finalize can no longer contribute, so the collectives
  // waiting for the rank, and those that name it later, fail instead of
  // hanging, until a new process of the rank connects or the host
  // registers the rank again.
  if (msg.reason == PMIX_ERR_UNREACH) return;
  st.departed[msg.proc] = msg.reason;
  advance_waiting_for(self, msg.proc);
}

void on_register_nspace(self_ptr self, register_nspace_msg& msg) {
  auto& st = self->state;
  if (auto it = st.nspaces.find(msg.nspace); it != st.nspaces.end() && !it->second.tool) {
    log::error("server", "namespace ", msg.nspace, " is already registered");
    return msg.done->deliver(PMIX_ERR_BAD_PARAM);
  }
  job_layout layout;
  std::string error;
  const auto rc = compute_layout(msg.reg, msg.nlocalprocs, st.ctx->hostname, layout, error);
  if (rc != PMIX_SUCCESS) {
    log::error("server", "namespace ", msg.nspace, " refused: ", error);
    return msg.done->deliver(rc);
  }
  nspace_locality loc{layout.local_ranks, layout.job_size};
  rank_map<registration> registrations;
  if (auto early = st.early_registrations.find(msg.nspace); early != st.early_registrations.end()) {
    registrations = std::move(early->second);
    st.early_registrations.erase(early);
    for (auto r : registrations.ranks()) {
      if (loc.job_size && r >= *loc.job_size) {
        log::error("server", "register_client ", to_string(proc_id{msg.nspace, r}), " dropped: beyond the job size ",
                   *loc.job_size);
        registrations.erase(r);
        continue;
      }
      auto pos = std::lower_bound(loc.local_ranks.begin(), loc.local_ranks.end(), r);
      if (pos == loc.local_ranks.end() || *pos != r) loc.local_ranks.insert(pos, r);
    }
  }
  // (A tool namespace of that name is replaced: the host now owns the name.)
  // The namespace actor answers the host once it has built the job's data.
  auto actor = self->spawn<caf::linked>(nspace_actor, msg.nspace, msg.nlocalprocs,
                                        std::move(layout), false,
                                        caf::actor_cast<caf::actor>(self), st.ctx, msg.done);
  st.nspaces[msg.nspace] = server_state::nspace_entry{actor, std::move(loc), false, 0, std::move(registrations)};
  // What waited for the namespace.
  if (auto early = st.early_job_info.find(msg.nspace); early != st.early_job_info.end()) {
    self->send(actor, extend_job_msg{msg.nspace, std::move(early->second), actors::make_reply<no_result>(
                                                                               [](pmix_status_t, no_result) {})});
    st.early_job_info.erase(early);
  }
  if (auto early = st.early_dmodex.find(msg.nspace); early != st.early_dmodex.end()) {
    auto waiting = std::move(early->second);
    st.early_dmodex.erase(early);
    for (auto& d : waiting) self->send(self, std::move(d));
  }
}

// PMIx_server_setup_local_support: the namespace's job data grows.
void on_extend_job(self_ptr self, extend_job_msg& msg) {
  auto& st = self->state;
  auto it = st.nspaces.find(msg.nspace);
  if (it == st.nspaces.end()) {
    // Kept for the namespace; the host is answered now (it registers the
    // namespace after this call, often from the same thread).
    auto& kept = st.early_job_info[msg.nspace];
    kept.insert(kept.end(), msg.info.begin(), msg.info.end());
    msg.done->deliver(PMIX_SUCCESS);
    return;
  }
  self->send(it->second.actor, std::move(msg));
}

// PMIx_server_dmodex_request: a local process's committed data, for the
// host to send to the node that asked.
void on_dmodex_request(self_ptr self, dmodex_request_msg& msg) {
  auto& st = self->state;
  auto it = st.nspaces.find(msg.proc.nspace);
  if (it == st.nspaces.end() || it->second.tool) {
    log::debug("server", "dmodex_request for ", to_string(msg.proc), ": waiting for its namespace");
    st.early_dmodex[msg.proc.nspace].push_back(std::move(msg));
    return;
  }
  get_msg get;
  get.from = st.ctx->server;
  get.target = msg.proc;
  auto done = msg.done;
  self->request(it->second.actor, caf::infinite, std::move(get))
      .then([done](get_result& r) { done->deliver(r.status, std::move(r.data)); },
            [done](caf::error&) { done->deliver(PMIX_ERR_NOT_FOUND, {}); });
}

void on_deregister_nspace(self_ptr self, deregister_nspace_msg& msg) {
  auto& st = self->state;
  auto it = st.nspaces.find(msg.nspace);
  // Whatever waited for it waits no more.
  bool early = st.early_registrations.erase(msg.nspace) + st.early_job_info.erase(msg.nspace) > 0;
  if (auto d = st.early_dmodex.find(msg.nspace); d != st.early_dmodex.end()) {
    for (auto& waiting : d->second) waiting.done->deliver(PMIX_ERR_NOT_FOUND, {});
    st.early_dmodex.erase(d);
    early = true;
  }
  if (it == st.nspaces.end()) {
    if (early) return msg.done->deliver(PMIX_SUCCESS);
    log::warning("server", "deregister of unknown namespace ", msg.nspace);
    return msg.done->deliver(PMIX_ERR_NOT_FOUND);
  }
  auto actor = it->second.actor;
  st.nspaces.erase(it);
  fail_naming(self, msg.nspace);
  for (auto d = st.departed.begin(); d != st.departed.end();)
    d = d->first.nspace == msg.nspace ? st.departed.erase(d) : std::next(d);
  // Still linked while it winds down (its epilogs may take a while): if the
  // server goes first (finalize), so does it.
  auto done = msg.done;
  self->request(actor, caf::infinite, deregister_msg{})
      .then([done](bool) { done->deliver(PMIX_SUCCESS); },
            [done](caf::error&) { done->deliver(PMIX_SUCCESS); });
}

// One PMIx_server_register_client: `entry` is the namespace's (null: not
// registered yet: the registration waits for it in `early`).
pmix_status_t register_rank(server_state::nspace_entry* entry, const std::string& nspace, rank_t rank,
                            const registration& reg,
                            std::map<std::string, rank_map<registration>>& early) {
  if (rank >= rank_valid_limit) {
    log::error("server", "register_client refused: ", to_string(proc_id{nspace, rank}), " is not a valid rank");
    return PMIX_ERR_BAD_PARAM;
  }
  // A rank registered for one user is not silently handed to another: the
  // host deregisters it first. The same user again updates it (a new
  // process for the rank).
  auto same_user = [&](const registration* had) {
    if (had == nullptr || (had->uid == reg.uid && had->gid == reg.gid)) return true;
    log::error("server", "register_client ", to_string(proc_id{nspace, rank}), " for uid ", reg.uid, " gid ",
               reg.gid, " refused: it is registered for uid ", had->uid, " gid ", had->gid,
               " (deregister it first)");
    return false;
  };
  if (entry == nullptr) {
    auto& kept = early[nspace];
    if (!same_user(kept.find(rank))) return PMIX_ERR_EXISTS;
    log::debug("server", "register_client ", to_string(proc_id{nspace, rank}),
               " before its namespace: kept until the namespace is registered");
    kept[rank] = reg;
    return PMIX_SUCCESS;
  }
  if (entry->locality.job_size && rank >= *entry->locality.job_size && !entry->tool) {
    log::error("server", "register_client refused: ", to_string(proc_id{nspace, rank}), " is beyond the job size ",
               *entry->locality.job_size);
    return PMIX_ERR_BAD_PARAM;
  }
  if (!same_user(entry->registrations.find(rank))) return PMIX_ERR_EXISTS;
  auto& locals = entry->locality.local_ranks;
  auto pos = std::lower_bound(locals.begin(), locals.end(), rank);
  if (pos == locals.end() || *pos != rank) locals.insert(pos, rank);
  entry->registrations[rank] = reg;
  return PMIX_SUCCESS;
}

server_state::nspace_entry* find_nspace(self_ptr self, const std::string& nspace) {
  auto it = self->state.nspaces.find(nspace);
  return it == self->state.nspaces.end() ? nullptr : &it->second;
}

void on_register_client(self_ptr self, register_client_msg& msg) {
  const auto rc = register_rank(find_nspace(self, msg.proc.nspace), msg.proc.nspace, msg.proc.rank,
                                registration{msg.uid, msg.gid, msg.server_object}, self->state.early_registrations);
  // Registered again (a new process for a rank that died or was
  // deregistered): collectives wait for it again.
  if (rc == PMIX_SUCCESS) self->state.departed.erase(msg.proc);
  msg.done->deliver(rc);
}

void on_register_clients(self_ptr self, registration_batch& batch) {
  auto* entry = find_nspace(self, batch.nspace());
  for (std::size_t k = 0; k < batch.size(); ++k) {
    const auto& c = batch[k];
    const auto rc = register_rank(entry, batch.nspace(), c.rank, registration{c.uid, c.gid, c.server_object},
                                  self->state.early_registrations);
    if (rc == PMIX_SUCCESS && !self->state.departed.empty())
      self->state.departed.erase(proc_id{batch.nspace(), c.rank});
    batch.answer_next(rc);
  }
}

void on_deregister_client(self_ptr self, deregister_client_msg& msg) {
  auto& st = self->state;
  auto it = st.nspaces.find(msg.proc.nspace);
  if (it == st.nspaces.end()) {
    if (auto early = st.early_registrations.find(msg.proc.nspace);
        early != st.early_registrations.end() && early->second.erase(msg.proc.rank)) {
      if (early->second.size() == 0) st.early_registrations.erase(early);
      return msg.done->deliver(PMIX_SUCCESS);
    }
    log::warning("server", "deregister_client of ", to_string(msg.proc), ": unknown namespace");
    return msg.done->deliver(PMIX_ERR_NOT_FOUND);
  }
  msg.registered = it->second.registrations.erase(msg.proc.rank);
  // The rank is gone for good: collectives still waiting for it fail.
  st.departed[msg.proc] = PMIX_ERR_UNREACH;
  advance_waiting_for(self, msg.proc);
  self->send(it->second.actor, std::move(msg));
}

// A pure tool goes to the namespace the server keeps for its identity,
// created on first use and removed when its last process leaves.
void route_tool(self_ptr self, connect_msg msg, caf::response_promise rp) {
  auto& st = self->state;
  auto it = st.nspaces.find(msg.proc.nspace);
  if (it == st.nspaces.end()) {
    auto actor = self->spawn<caf::linked>(nspace_actor, msg.proc.nspace, 0,
                                          job_layout{}, true, caf::actor_cast<caf::actor>(self),
                                          st.ctx, reply_to<no_result>{});
    it = st.nspaces.emplace(msg.proc.nspace, server_state::nspace_entry{actor, {}, true, 0}).first;
  }
  ++it->second.connects_sent;
  self->request(it->second.actor, caf::infinite, std::move(msg))
      .then([rp](connect_result& r) mutable { rp.deliver(std::move(r)); },
            [rp](caf::error&) mutable {
              rp.deliver(connect_result{PMIX_ERR_UNREACH, {}, {}, nullptr, {}});
            });
}

// Routes a connect whose identity is known: to a namespace the host
// registered (a client, or a registered client connecting as a tool), else
// (tools only) to a tool namespace.
void route_connect(self_ptr self, connect_msg msg, caf::response_promise rp) {
  auto& st = self->state;
  auto it = st.nspaces.find(msg.proc.nspace);
  if (it != st.nspaces.end() && !it->second.tool) {
    if (const auto* r = it->second.registrations.find(msg.proc.rank)) msg.reg = *r;
    rp.delegate(it->second.actor, std::move(msg));
    return;
  }
  if (msg.role == peer_role::tool) return route_tool(self, std::move(msg), std::move(rp));
  log::error("server", "connection from ", to_string(msg.proc), " (pid ", msg.cred.pid,
             "): namespace not registered");
  rp.deliver(connect_result{PMIX_ERR_NOT_FOUND, {}, {}, nullptr, {}});
}

caf::result<connect_result> on_connect(self_ptr self, connect_msg& msg) {
  auto& st = self->state;
  auto rp = self->make_response_promise();
  const bool needs_identity =
      msg.role == peer_role::tool &&
      (msg.proc.nspace.empty() || st.nspaces.count(msg.proc.nspace) == 0 ||
       st.nspaces.at(msg.proc.nspace).tool);
  if (!needs_identity) {
    route_connect(self, std::move(msg), std::move(rp));
    return rp;
  }
  // A pure tool (spec 000, 20.2.247.4.2): only with tool support, and from
  // another user (or over TCP, where the user is unknown) only when foreign
  // tools are allowed.
  if (!st.ctx->tool_support) {
    log::warning("server", "a tool (pid ", msg.cred.pid, ") was refused: PMIX_SERVER_TOOL_SUPPORT not set");
    rp.deliver(connect_result{PMIX_ERR_NOT_SUPPORTED, {}, {}, nullptr, {}});
    return rp;
  }
  if (msg.cred.uid != st.ctx->uid && !st.ctx->foreign_tools) {
    log::warning("server", "a tool of ",
                 msg.cred.uid == static_cast<uid_t>(-1) ? std::string{"an unknown user (TCP)"}
                                                        : "uid " + std::to_string(msg.cred.uid),
                 " was refused: PMIX_SERVER_ALLOW_FOREIGN_TOOLS not set");
    rp.deliver(connect_result{PMIX_ERR_NO_PERMISSIONS, {}, {}, nullptr, {}});
    return rp;
  }
  // A pure tool: the host names it if it wants to, else the server does.
  info_list directives = msg.info;
  directives.push_back({PMIX_USERID, value::unsigned_(PMIX_UINT32, msg.cred.uid), 0});
  directives.push_back({PMIX_GRPID, value::unsigned_(PMIX_UINT32, msg.cred.gid), 0});
  directives.push_back({PMIX_PROC_PID, value::integer(PMIX_PID, msg.cred.pid), 0});
  const auto upcall = st.next_upcall++;
  auto gate = st.ctx->gate;
  auto addr = self->address();
  const bool asked = st.ctx->host->tool_connected(directives, [gate, addr, upcall](pmix_status_t status,
                                                                              proc_id proc) {
    gate->send_if_open(addr, tool_assigned_msg{upcall, status, std::move(proc)});
  });
  if (asked) {
    st.tool_upcalls.emplace(upcall, server_state::pending_tool{std::move(msg), rp});
    return rp;
  }
  if (msg.proc.nspace.empty())
    msg.proc = proc_id{st.ctx->server.nspace + ".tool." + std::to_string(st.next_tool++), 0};
  route_connect(self, std::move(msg), std::move(rp));
  return rp;
}

void on_tool_assigned(self_ptr self, tool_assigned_msg& r) {
  auto& st = self->state;
  auto it = st.tool_upcalls.find(r.id);
  if (it == st.tool_upcalls.end()) return;
  auto pending = std::move(it->second);
  st.tool_upcalls.erase(it);
  if (r.status != PMIX_SUCCESS || r.proc.nspace.empty() || r.proc.rank >= rank_valid_limit) {
    log::warning("server", "the host refused a tool (pid ", pending.msg.cred.pid, "): ",
                 PMIx_Error_string(r.status == PMIX_SUCCESS ? PMIX_ERR_BAD_PARAM : r.status));
    pending.promise.deliver(connect_result{r.status == PMIX_SUCCESS ? PMIX_ERR_BAD_PARAM : r.status,
                                           {}, {}, nullptr, {}});
    return;
  }
  pending.msg.proc = std::move(r.proc);
  route_connect(self, std::move(pending.msg), std::move(pending.promise));
}

void on_tool_nspace_idle(self_ptr self, const tool_nspace_idle_msg& msg) {
  auto& st = self->state;
  auto it = st.nspaces.find(msg.nspace);
  // Not if a connect is still on its way to it.
  if (it == st.nspaces.end() || !it->second.tool || it->second.connects_sent != msg.epoch) return;
  auto actor = it->second.actor;
  st.nspaces.erase(it);
  fail_naming(self, msg.nspace);
  for (auto d = st.departed.begin(); d != st.departed.end();)
    d = d->first.nspace == msg.nspace ? st.departed.erase(d) : std::next(d);
  self->send(actor, deregister_msg{});
}

void on_upcall_result(self_ptr self, upcall_result& r) {
  auto& st = self->state;
  if (auto it = st.collective_upcalls.find(r.id); it != st.collective_upcalls.end()) {
    const auto [kind, tracker] = it->second;
    st.collective_upcalls.erase(it);
    if (kind == collective::fence) {
      st.fences.complete(tracker,
                         fence_result{r.status, std::make_shared<const std::string>(std::move(r.data)), nullptr});
    } else if (kind == collective::connect && r.status == PMIX_SUCCESS) {
      auto* t = st.connects.find(tracker);
      if (t != nullptr) complete_connect(self, tracker, t->procs);
    } else {
      fail_collective(self, kind, tracker, r.status);
    }
  } else if (auto d = st.dmodex_upcalls.find(r.id); d != st.dmodex_upcalls.end()) {
    auto rp = std::move(d->second);
    st.dmodex_upcalls.erase(d);
    rp.deliver(get_result{r.status, std::move(r.data)});
  } else if (auto n = st.notify_upcalls.find(r.id); n != st.notify_upcalls.end()) {
    auto rp = std::move(n->second);
    st.notify_upcalls.erase(n);
    rp.deliver(r.status);
  }
}

// PMIx_server_collect_job_info: each known namespace's job-level store (as
// a registration), in the order asked; unknown namespaces are skipped.
void on_collect_job_info(self_ptr self, collect_job_info_msg& msg) {
  auto& st = self->state;
  std::vector<std::pair<std::string, caf::actor>> known;
  for (const auto& ns : msg.nspaces) {
    auto it = st.nspaces.find(ns);
    if (it != st.nspaces.end() && !it->second.tool) known.emplace_back(ns, it->second.actor);
  }
  auto done = msg.done;
  if (known.empty()) return done->deliver(PMIX_ERR_NOT_FOUND, {});
  auto results = std::make_shared<job_infos>(known.size());
  auto remaining = std::make_shared<std::size_t>(known.size());
  for (std::size_t k = 0; k < known.size(); ++k) {
    (*results)[k].first = known[k].first;
    self->request(known[k].second, caf::infinite, job_info_msg{})
        .then(
            [=](info_list& info) {
              (*results)[k].second = std::move(info);
              if (--*remaining == 0) done->deliver(PMIX_SUCCESS, std::move(*results));
            },
            [=](caf::error&) {
              if (--*remaining == 0) done->deliver(PMIX_SUCCESS, std::move(*results));
            });
  }
}

// Sends an event to the processes in its range on this node (docs/events.md):
// every namespace for this node and wider ranges, the source's namespace for
// PMIX_RANGE_NAMESPACE, the named processes for PMIX_RANGE_CUSTOM; nobody
// for PMIX_RANGE_RM and PMIX_RANGE_PROC_LOCAL.
void route_event(self_ptr self, const event& ev, const caf::actor& skip) {
  auto& st = self->state;
  if (ev.range == PMIX_RANGE_RM || ev.range == PMIX_RANGE_PROC_LOCAL) return;
  wire::Envelope e;
  e.set_id(0);
  auto* w = e.mutable_event();
  w->set_status(ev.status);
  protocol::to_wire(ev.source, w->mutable_source());
  w->set_range(ev.range);
  protocol::to_wire(ev.info, w->mutable_info());
  auto frame = std::make_shared<const std::string>(protocol::to_frame(e));
  // namespace -> ranks (empty: all)
  std::map<std::string, std::vector<rank_t>> targets;
  if (ev.range == PMIX_RANGE_NAMESPACE) {
    targets[ev.source.nspace];
  } else if (ev.range == PMIX_RANGE_CUSTOM) {
    std::map<std::string, bool> whole;
    for (const auto& p : custom_range(ev.info)) {
      if (p.rank == rank_wildcard) whole[p.nspace] = true;
      targets[p.nspace].push_back(p.rank);
    }
    for (auto& [ns, w] : whole) targets[ns].clear();
  } else {
    for (const auto& [ns, entry] : st.nspaces) targets[ns];
  }
  for (auto& [ns, ranks] : targets) {
    auto it = st.nspaces.find(ns);
    if (it == st.nspaces.end()) continue;
    self->send(it->second.actor, deliver_event_msg{frame, std::move(ranks), skip});
  }
}

caf::result<pmix_status_t> on_client_event(self_ptr self, client_event_msg& msg) {
  auto& st = self->state;
  route_event(self, msg.ev, msg.origin);
  // This node's ranges are served here; anything wider is the host's too.
  if (msg.ev.range == PMIX_RANGE_LOCAL || msg.ev.range == PMIX_RANGE_PROC_LOCAL)
    return pmix_status_t{PMIX_SUCCESS};
  auto rp = self->make_response_promise();
  const auto upcall = st.next_upcall++;
  const bool asked = st.ctx->host->notify_event(msg.ev.status, msg.ev.source, msg.ev.range,
                                                msg.ev.info,
                                                reply_to_actor(self->address(), st.ctx, upcall));
  if (asked) {
    st.notify_upcalls.emplace(upcall, rp);
    return rp;
  }
  if (msg.ev.range == PMIX_RANGE_RM) {
    log::warning("server", "event ", msg.ev.status, " from ", to_string(msg.ev.source),
                 " is for the host, which has no notify_event");
    rp.deliver(pmix_status_t{PMIX_ERR_NOT_SUPPORTED});
  } else {
    rp.deliver(pmix_status_t{PMIX_SUCCESS});
  }
  return rp;
}

void on_snapshot(self_ptr self, snapshot_msg& msg) {
  auto& st = self->state;
  auto snap = std::make_shared<server_snapshot>();
  snap->fences_in_flight = st.fences.size() + st.connects.size() + st.disconnects.size();
  snap->departed = st.departed.size();
  snap->pending_upcalls = st.collective_upcalls.size() + st.dmodex_upcalls.size() +
                         st.tool_upcalls.size() + st.notify_upcalls.size();
  auto done = msg.done;
  auto remaining = std::make_shared<std::size_t>(st.nspaces.size());
  if (*remaining == 0) return done->deliver(PMIX_SUCCESS, *snap);
  for (auto& [name, entry] : st.nspaces) {
    const std::vector<rank_t> registered = entry.registrations.ranks();
    self->request(entry.actor, caf::infinite, view_msg{})
        .then(
            [=](server_snapshot::nspace_view& v) {
              // Registered ranks without an actor are the server's to show.
              for (auto r : registered) {
                auto at = std::find_if(v.ranks.begin(), v.ranks.end(),
                                       [r](const server_snapshot::rank_view& x) { return x.rank == r; });
                if (at != v.ranks.end()) {
                  at->registered = true;
                } else {
                  server_snapshot::rank_view only;
                  only.rank = r;
                  only.registered = true;
                  v.ranks.push_back(only);
                }
              }
              snap->nspaces.push_back(std::move(v));
              if (--*remaining == 0) done->deliver(PMIX_SUCCESS, *snap);
            },
            [=](caf::error&) {
              if (--*remaining == 0) done->deliver(PMIX_SUCCESS, *snap);
            });
  }
}

}  // namespace

caf::behavior server_actor(caf::stateful_actor<server_state>* self, context_ptr ctx) {
  self->state.ctx = std::move(ctx);
  self->set_default_handler(caf::drop);
  // Children (namespaces, peers) are linked to us so that our exit at
  // finalize takes them down; a child's own failure must not take us down.
  self->set_exit_handler([=](caf::exit_msg& em) {
    if (em.reason == caf::exit_reason::normal) return;
    if (!em.source || em.reason == caf::exit_reason::user_shutdown) {
      self->quit(em.reason);
      return;
    }
    log::error("server", "an actor of the server failed: ", to_string(em.reason));
  });
  // CAF tries the handlers in order: the per-request ones come first.
  return {
      [=](fence_msg& msg) { return on_fence(self, msg); },
      [=](connect_procs_msg& msg) { return on_connect_procs(self, msg); },
      [=](get_msg& msg) { return on_get(self, msg); },
      [=](register_nspace_msg& msg) { on_register_nspace(self, msg); },
      [=](deregister_nspace_msg& msg) { on_deregister_nspace(self, msg); },
      [=](register_client_msg& msg) { on_register_client(self, msg); },
      [=](register_clients_msg& msg) { on_register_clients(self, *msg.batch); },
      [=](deregister_client_msg& msg) { on_deregister_client(self, msg); },
      [=](setup_fork_msg& msg) {
        msg.done->deliver(PMIX_SUCCESS, client_environment(*self->state.ctx, msg.proc));
      },
      [=](connect_msg& msg) { return on_connect(self, msg); },
      [=](tool_assigned_msg& msg) { on_tool_assigned(self, msg); },
      [=](const tool_nspace_idle_msg& msg) { on_tool_nspace_idle(self, msg); },
      [=](register_epilog_msg& msg) -> caf::result<pmix_status_t> {
        auto it = self->state.nspaces.find(msg.nspace);
        if (it == self->state.nspaces.end()) return pmix_status_t{PMIX_ERR_NOT_FOUND};
        auto rp = self->make_response_promise();
        rp.delegate(it->second.actor, std::move(msg));
        return rp;
      },
      [=](const rank_state_msg& msg) { on_rank_state(self, msg); },
      [=](upcall_result& r) { on_upcall_result(self, r); },
      [=](snapshot_msg& msg) { on_snapshot(self, msg); },
      [=](collect_job_info_msg& msg) { on_collect_job_info(self, msg); },
      [=](extend_job_msg& msg) { on_extend_job(self, msg); },
      [=](dmodex_request_msg& msg) { on_dmodex_request(self, msg); },
      [=](notify_msg& msg) {
        route_event(self, msg.ev, caf::actor{});
        msg.done->deliver(PMIX_SUCCESS);
      },
      [=](client_event_msg& msg) { return on_client_event(self, msg); },
      [=](task_msg& msg) {
        // A short-lived actor of its own: the task (user code) never runs
        // inside an actor that owns state. The task is a spawn argument, not
        // a capture: CAF 0.17.6's spawn of a function without arguments
        // binds a reference to `*args_` of a null shared_ptr<std::tuple<>>
        // (caf/detail/init_fun_factory.hpp), undefined behaviour that UBSan
        // aborts on; with one argument the tuple exists.
        self->spawn([](caf::event_based_actor*, std::function<void()> task) { task(); },
                    std::move(msg.task));
      },
  };
}

}  // namespace pmix::actors
