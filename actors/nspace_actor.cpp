#include "actors/nspace_actor.hpp"

#include <malloc.h>

#include <caf/exit_reason.hpp>
#include <caf/system_messages.hpp>

#include <algorithm>
#include <set>
#include <string>

#include "actors/cleaner.hpp"
#include "actors/rank_actor.hpp"
#include "common/log.hpp"
#include "faults/plane.hpp"
#include "protocol/codec.hpp"
#include "transport/shared_data.hpp"
#include "protocol/direct.hpp"
#include "protocol/pmix.pb.h"

namespace pmix::actors {

const char* nspace_state::name = "pmix.nspace";

caf::actor nspace_state::rank_actor_for(caf::stateful_actor<nspace_state>* self, rank_t r) {
  if (auto* e = ranks.find(r)) return e->actor;
  // A rank that fails tells us with a down message of its own
  // (rank_state::~rank_state): no monitor.
  auto a = spawn_rank_actor(self, proc_id{nspace, r}, tool, caf::actor_cast<caf::actor>(self), server, ctx);
  ranks[r] = rank_entry{a, false};
  return a;
}

void nspace_state::check_all_finalized() {
  if (local_app_fini_fired || nlocalprocs <= 0 || nfinalized < nlocalprocs ||
      finalized_ranks.size() < static_cast<std::size_t>(nlocalprocs))
    return;
  local_app_fini_fired = true;
  ++local_app_fini_runs;
  log::debug("nspace", nspace, ": all ", nlocalprocs, " local processes finalized");
}

void nspace_state::report_if_idle(caf::stateful_actor<nspace_state>* self) {
  if (tool && nlive == 0 && inflight == 0) self->send(server, tool_nspace_idle_msg{nspace, epoch});
}

void nspace_state::set_live(rank_t rank, bool live) {
  auto* e = ranks.find(rank);
  if (e == nullptr || e->live == live) return;
  e->live = live;
  if (live)
    ++nlive;
  else
    --nlive;
}

void nspace_state::on_rank_failed(caf::stateful_actor<nspace_state>* self, rank_t rank) {
  log::error("nspace", nspace, ": the actor of rank ", rank, " failed");
  auto* e = ranks.find(rank);
  if (e == nullptr) return;
  const bool was_live = e->live;
  set_live(rank, false);
  if (auto f = finalized_by.find(e->actor.address()); f != finalized_by.end()) {
    nfinalized -= f->second;
    finalized_by.erase(f);
  }
  finalized_ranks.erase(rank);
  ranks.erase(rank);
  auto& gets_in_flight = held->gets;
  for (auto g = gets_in_flight.begin(); g != gets_in_flight.end();) {
    if (g->second.first != rank) {
      ++g;
      continue;
    }
    g->second.second.deliver(get_result{PMIX_ERR_LOST_CONNECTION, {}});
    g = gets_in_flight.erase(g);
  }
  if (was_live) {
    lost.insert(rank);
    // Its processes lose their connections (its destructor told their peers).
    const rank_state_msg gone{proc_id{nspace, rank}, false, PMIX_ERR_LOST_CONNECTION};
    self->send(server, gone);
  }
  report_if_idle(self);
}

namespace {

using self_ptr = caf::stateful_actor<nspace_state>*;

// The job-level keys a reader derives this node's ranks' items from when
// JobInfo.local_ranks_by_peers is set (actors/job_layout.hpp).
bool affects_local_ranks(const std::string& key) {
  return key == PMIX_LOCAL_PEERS || key == PMIX_HOSTNAME || key == PMIX_NODEID;
}

// Clears JobInfo.local_ranks_by_peers in `job` (its readers then derive the
// local ranks from the maps, as every other rank), and with `runs`
// JobInfo.local_runs and local_strided_runs (its readers then parse the PMIX_LOCAL_PEERS they
// find). Protobuf rewrites the fields in number order, the rank index after
// the ranks: it goes, as when the job data is trimmed.
void drop_local_fields(std::string& job, bool by_peers, bool runs) {
  wire::JobInfo parsed;
  if (!parsed.ParseFromString(job)) return;
  by_peers = by_peers && parsed.local_ranks_by_peers();
  runs = runs && (!parsed.local_runs().empty() || !parsed.local_strided_runs().empty());
  if (!by_peers && !runs) return;
  if (by_peers) parsed.clear_local_ranks_by_peers();
  if (runs) {
    parsed.clear_local_runs();
    parsed.clear_local_strided_runs();
  }
  parsed.clear_rank_index();
  job = parsed.SerializeAsString();
}

void publish_job(self_ptr self) {
  auto& st = self->state;
  if (!st.tool && st.server) self->send(st.server, nspace_job_msg{st.nspace, st.job});
}

// Asks every rank actor for something and combines the answers.
template <class Reply, class Combine, class Done>
void fan_out(self_ptr self, const caf::message& msg, Combine combine, Done done) {
  auto& st = self->state;
  auto remaining = std::make_shared<std::size_t>(st.ranks.size());
  auto finish = std::make_shared<Done>(std::move(done));
  if (*remaining == 0) return (*finish)();
  st.ranks.for_each([&](rank_t, auto& e) {
    self->request(e.actor, caf::infinite, msg)
        .then(
            [=](Reply& r) {
              combine(r);
              if (--*remaining == 0) (*finish)();
            },
            [=](caf::error&) {
              if (--*remaining == 0) (*finish)();
            });
  });
}

}  // namespace

caf::behavior nspace_actor(caf::stateful_actor<nspace_state>* self, std::string nspace,
                           int nlocalprocs, job_layout layout, bool tool,
                           caf::actor server, context_ptr ctx, reply_to<no_result> ready,
                           std::shared_ptr<const std::string> job) {
  auto& st = self->state;
  st.nspace = std::move(nspace);
  st.tool = tool;
  st.nlocalprocs = nlocalprocs;
  st.layout = std::move(layout);
  st.server = std::move(server);
  st.ctx = std::move(ctx);
  st.budget = std::make_shared<job_budget>(st.ctx->job_limits);
  // The rest of the layout is only needed for the job data: keep the size.
  const auto job_size = st.layout.job_size;
  if (job) {
    st.job = std::move(job);
    st.all_lost = true;
  } else {
    // Job data every namespace gets from the server (e.g. the shared
    // topology) joins the host's, unless the host gave the same keys.
    for (const auto& extra : st.ctx->job_info)
      if (find(st.layout.job_info, extra.key) == nullptr) st.layout.job_info.push_back(extra);
    st.job = std::make_shared<const std::string>(
        serialize_job_info(st.nspace, std::move(st.layout), st.ctx->hostname));
  }
  st.layout = job_layout{};
  st.layout.job_size = job_size;
  // A large registration leaves megabytes of freed conversion buffers in the
  // allocator; hand them back so the server's footprint is what it keeps.
  if (st.job->size() > (1u << 20)) ::malloc_trim(0);
  publish_job(self);
  if (ready) ready->deliver(PMIX_SUCCESS);
  self->set_default_handler(caf::drop);
  // A rank actor that fails sends us a down message (rank_state's
  // destructor): it is dropped and the namespace lives on (found by the fault plane, seed 7,
  // kill:rank:at=fence:rank=1). The server's exit (finalize) or any other
  // failure takes us down, and our ranks with us (the functor below).
  self->set_down_handler([=](caf::down_msg& dm) {
    if (dm.reason == caf::exit_reason::normal) return;
    auto& st = self->state;
    std::optional<rank_t> failed;
    st.ranks.for_each([&](rank_t r, auto& e) {
      if (e.actor.address() == dm.source) failed = r;
    });
    if (failed) st.on_rank_failed(self, *failed);
    for (auto it = st.after_down.begin(); it != st.after_down.end();) {
      if (it->first != dm.source) {
        ++it;
        continue;
      }
      auto run = std::move(it->second);
      it = st.after_down.erase(it);
      run();
    }
  });
  self->set_exit_handler([=](caf::exit_msg& em) {
    if (em.reason != caf::exit_reason::normal) self->quit(em.reason);
  });
  // Also answers the requests it held for its rank actors (held_state).
  self->attach_functor([held = st.held, me = self->address()](const caf::error& reason) {
    if (reason != caf::exit_reason::normal)
      held->ranks.for_each([&](rank_t, auto& e) { caf::anon_send(e.actor, caf::exit_msg{me, reason}); });
    for (auto& [id, rp] : held->connects) rp.deliver(connect_result{PMIX_ERR_UNREACH, {}, {}, nullptr, {}});
    for (auto& [id, g] : held->gets) g.second.deliver(get_result{PMIX_ERR_LOST_CONNECTION, {}});
    held->connects.clear();
    held->gets.clear();
  });

  return {
      [=](fault_kill_nspace_atom) { self->quit(caf::exit_reason::unhandled_exception); },
      [=](deregister_client_msg& msg) {
        auto& st = self->state;
        auto* e = st.ranks.find(msg.proc.rank);
        if (e == nullptr) return msg.done->deliver(msg.registered ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND);
        auto a = e->actor;
        st.set_live(msg.proc.rank, false);
        st.ranks.erase(msg.proc.rank);
        st.finalized_by.erase(a.address());
        auto done = msg.done;
        self->request(a, caf::infinite, deregister_msg{})
            .then([done](bool) { done->deliver(PMIX_SUCCESS); },
                  [done](caf::error&) { done->deliver(PMIX_SUCCESS); });
      },
      [=](connect_msg& msg) -> caf::result<connect_result> {
        auto& st = self->state;
        ++st.epoch;
        const auto r = msg.proc.rank;
        if (r >= rank_valid_limit || (st.layout.job_size && r >= *st.layout.job_size &&
                                      !st.ranks.contains(r))) {
          log::error("nspace", st.nspace, ": connection for rank ", r, " which this job does not have");
          st.report_if_idle(self);
          return connect_result{PMIX_ERR_NOT_FOUND, {}, {}, nullptr, {}};
        }
        st.lost.erase(r);
        const auto id = st.next_request++;
        st.held->connects.emplace(id, self->make_response_promise());
        auto job = st.job;
        // Every client of the namespace gets the same job data: a large one
        // is written once, as shared data (docs/wire-format.md).
        if (st.job_shared_of != st.job) {
          st.job_shared_of = st.job;
          st.job_shared = st.job->size() >= transport::shared_data_threshold()
                              ? transport::shared_data::make(*st.job)
                              : nullptr;
        }
        auto job_shared = st.job_shared;
        std::shared_ptr<const openpmix_job_form> openpmix_job;
        if (msg.openpmix_buffer == 1 || msg.openpmix_buffer == 2) {
          if (st.openpmix_of != st.job) {
            st.openpmix_of = st.job;
            for (auto& f : st.openpmix_forms) f.reset();
          }
          auto& form = st.openpmix_forms[msg.openpmix_buffer - 1];
          if (!form) {
            form = make_openpmix_job_form(*st.job, static_cast<openpmix::buffer_type>(msg.openpmix_buffer));
            if (!form) log::error("nspace", st.nspace, ": job data unreadable: no form for OpenPMIx's processes");
          }
          openpmix_job = form;
        }
        auto budget = st.budget;
        ++st.inflight;
        auto answer = [self, id](connect_result res) {
          auto& st = self->state;
          auto it = st.held->connects.find(id);
          if (it == st.held->connects.end()) return;
          auto rp = std::move(it->second);
          st.held->connects.erase(it);
          --st.inflight;
          st.report_if_idle(self);
          rp.deliver(std::move(res));
        };
        // The rank reports the process live (rank_state_msg) before it
        // answers, so `live` is current when the answer arrives.
        self->request(st.rank_actor_for(self, r), caf::infinite, std::move(msg))
            .then(
                [=](connect_result& res) {
                  res.job = job;
                  res.job_shared = job_shared;
                  res.openpmix_job = openpmix_job;
                  res.budget = budget;
                  // The fault plane's point between a rank's answer to a
                  // connect and its peer's (kill:rank:at=connect_answer):
                  // the rank is killed, and its answer goes on once its
                  // down message is here, after the ones its destructor
                  // sent its peers (the peer learns of the failure before
                  // the answer that names the rank).
                  auto& st = self->state;
                  if (st.ctx->faults && res.status == PMIX_SUCCESS && res.rank) {
                    const auto d = st.ctx->faults->at(faults::point_kind::message, "connect_answer", st.nspace,
                                                      r, faults::bit(faults::action::kill));
                    if (d.what == faults::action::kill && d.who == faults::victim::rank) {
                      log::info("nspace", st.nspace, ": fault plane: killing the rank actor of ", r,
                                " after its answer to a connect");
                      auto rank = res.rank;
                      st.after_down.emplace_back(rank.address(),
                                                 [answer, res = std::move(res)]() mutable { answer(std::move(res)); });
                      self->send_exit(rank, caf::exit_reason::unhandled_exception);
                      return;
                    }
                  }
                  answer(std::move(res));
                },
                [=](caf::error&) { answer(connect_result{PMIX_ERR_UNREACH, {}, {}, nullptr, {}}); });
        return caf::delegated<connect_result>{};
      },
      [=](const rank_state_msg& msg) {
        auto& st = self->state;
        st.set_live(msg.proc.rank, msg.live);
        if (!msg.live) st.report_if_idle(self);
      },
      [=](get_msg& msg) -> caf::result<get_result> {
        auto& st = self->state;
        if (msg.target.rank >= rank_valid_limit) return get_result{PMIX_ERR_BAD_PARAM, {}};
        if (st.is_lost(msg.target.rank)) return get_result{PMIX_ERR_LOST_CONNECTION, {}};
        const auto id = st.next_request++;
        st.held->gets.emplace(id, std::make_pair(msg.target.rank, self->make_response_promise()));
        // Answered once: by the rank, or by on_rank_failed if it fails
        // first, or by the functor if this actor fails.
        auto answer = [self, id](get_result r) {
          auto& gets = self->state.held->gets;
          auto it = gets.find(id);
          if (it == gets.end()) return;
          it->second.second.deliver(std::move(r));
          gets.erase(it);
        };
        self->request(st.rank_actor_for(self, msg.target.rank), caf::infinite, std::move(msg))
            .then([answer](get_result& r) { answer(std::move(r)); },
                  [answer](caf::error&) { answer(get_result{PMIX_ERR_NOT_FOUND, {}}); });
        return caf::delegated<get_result>{};
      },
      [=](const get_cancel_msg& msg) {
        // Only a rank actor that exists can hold the get.
        if (auto* e = self->state.ranks.find(msg.target.rank)) self->send(e->actor, msg);
      },
      [=](const register_epilog_msg& msg) -> pmix_status_t {
        std::string error;
        const auto rc = self->state.cleanup.add(msg.directives, msg.owner, error);
        if (rc != PMIX_SUCCESS) log::error("nspace", self->state.nspace, ": cleanup refused: ", error);
        return rc;
      },
      [=](const job_blob_msg&) { return job_blob{self->state.job}; },
      [=](const epilog_done_msg&) {
        auto& st = self->state;
        if (!st.deregistered) return;
        st.deregistered->deliver(true);
        self->quit();
      },
      [=](extend_job_msg& msg) {
        // PMIx_server_setup_local_support: the info joins the job data
        // (JobInfo's repeated `info`: appended fields extend it).
        auto& st = self->state;
        std::set<std::string> present;
        if (msg.unless_present) {
          wire::JobInfo parsed;
          if (parsed.ParseFromString(*st.job))
            for (const auto& i : parsed.info()) present.insert(i.key());
        }
        auto job = std::make_shared<std::string>(*st.job);
        bool by_peers_items = false;  // what local_ranks_by_peers was checked against
        bool peers = false;           // what local_runs gives
        for (const auto& i : msg.info) {
          if (present.count(i.key) != 0) continue;
          protocol::append_info(*job, wire::JobInfo::kInfoFieldNumber, i);
          by_peers_items = by_peers_items || affects_local_ranks(i.key);
          peers = peers || i.key == PMIX_LOCAL_PEERS;
        }
        if (by_peers_items || peers) drop_local_fields(*job, by_peers_items, peers);
        st.job = std::move(job);
        publish_job(self);
        msg.done->deliver(PMIX_SUCCESS);
      },
      [=](const trim_job_msg& msg) {
        // Resources deregistered: the items the job data holds with the
        // same value go (what the host registered under those keys stays).
        auto& st = self->state;
        wire::JobInfo job;
        if (!job.ParseFromString(*st.job)) return;
        wire::JobInfo gone;
        protocol::to_wire(msg.info, gone.mutable_info());
        std::set<std::string> unwanted;
        for (auto& i : *gone.mutable_info()) {
          i.set_flags(0);
          unwanted.insert(i.SerializeAsString());
        }
        auto* items = job.mutable_info();
        const auto before = items->size();
        items->erase(std::remove_if(items->begin(), items->end(),
                                    [&](const wire::Info& i) {
                                      auto copy = i;
                                      copy.set_flags(0);
                                      return unwanted.count(copy.SerializeAsString()) != 0;
                                    }),
                     items->end());
        if (items->size() == before) return;
        // Protobuf writes the fields in number order, the rank index last,
        // its offsets no longer right: without it, readers find the ranks
        // by reading them all.
        job.clear_rank_index();
        for (const auto& i : msg.info) {
          if (affects_local_ranks(i.key)) job.clear_local_ranks_by_peers();
          if (i.key == PMIX_LOCAL_PEERS) {
            job.clear_local_runs();
            job.clear_local_strided_runs();
          }
        }
        st.job = std::make_shared<const std::string>(job.SerializeAsString());
        publish_job(self);
      },
      [=](const job_info_msg&) {
        // The job-level store, what a local client reads at connect (the
        // host's job info with the keys the server added, spec 002), as a
        // registration: the job-level keys, then one PMIX_PROC_DATA per
        // rank (PMIX_RANK first, then its keys, registered and derived).
        // Another server can register the namespace from it.
        wire::JobInfo job;
        info_list out;
        std::string error;
        if (!job.ParseFromString(*self->state.job) || !protocol::from_wire(job.info(), out, &error)) {
          log::error("nspace", self->state.nspace, ": job data unreadable: ", error);
          return out;
        }
        add_derived_ranks(job);
        out.reserve(out.size() + static_cast<std::size_t>(job.ranks_size()));
        for (const auto& r : job.ranks()) {
          info_list items;
          if (!protocol::from_wire(r.info(), items, &error)) {
            log::error("nspace", self->state.nspace, ": job data of rank ", r.rank(), " unreadable: ", error);
            continue;
          }
          array_value a{PMIX_INFO, {}};
          a.elements.reserve(items.size() + 1);
          auto element = [](info i) {
            value v;
            v.type = PMIX_INFO;
            v.data = std::make_shared<const info>(std::move(i));
            return v;
          };
          a.elements.push_back(element(info{PMIX_RANK, value::unsigned_(PMIX_PROC_RANK, r.rank()), 0}));
          for (auto& i : items) a.elements.push_back(element(std::move(i)));
          out.push_back(info{PMIX_PROC_DATA, value::array(std::move(a)), 0});
        }
        return out;
      },
      [=](deliver_event_msg& msg) {
        // Only ranks that have (had) a process here have an actor; the rest
        // have nobody to tell.
        auto& st = self->state;
        if (msg.ranks.empty()) {
          st.ranks.for_each([&](rank_t, auto& e) { self->send(e.actor, msg); });
          return;
        }
        for (auto r : msg.ranks)
          if (auto* e = st.ranks.find(r)) self->send(e->actor, msg);
      },
      [=](const finalized_count_msg& msg) {
        auto& st = self->state;
        st.nfinalized += msg.delta;
        if (const auto& sender = self->current_sender())
          st.finalized_by[caf::actor_cast<caf::actor_addr>(sender)] += msg.delta;
        st.check_all_finalized();
      },
      [=](const rank_finalized_msg& msg) {
        auto& st = self->state;
        if (msg.finalized)
          st.finalized_ranks[msg.rank] = true;
        else
          st.finalized_ranks.erase(msg.rank);
        st.check_all_finalized();
      },
      [=](const view_msg&) -> caf::result<server_snapshot::nspace_view> {
        auto& st = self->state;
        auto view = std::make_shared<server_snapshot::nspace_view>();
        view->name = st.nspace;
        view->nlocalprocs = st.nlocalprocs;
        view->nfinalized = st.nfinalized;
        view->local_app_fini_fired = st.local_app_fini_fired;
        view->local_app_fini_runs = st.local_app_fini_runs;
        auto rp = self->make_response_promise();
        fan_out<server_snapshot::rank_view>(
            self, caf::make_message(view_msg{}),
            [view](server_snapshot::rank_view& r) { view->ranks.push_back(r); },
            [view, rp]() mutable { rp.deliver(*view); });
        return rp;
      },
      [=](const deregister_msg&) -> caf::result<bool> {
        auto& st = self->state;
        auto rp = self->make_response_promise();
        st.check_all_finalized();
        fan_out<bool>(
            self, caf::make_message(deregister_msg{}), [](bool) {},
            [=]() mutable {
              // Peers released (their epilogs ran): now the namespace epilog,
              // off the actors' threads; the answer once it is done.
              auto& st = self->state;
              st.ranks.clear();
              st.deregistered = rp;
              run_epilog(*st.ctx, std::exchange(st.cleanup, epilog{}), self->address());
            });
        return rp;
      },
  };
}

}  // namespace pmix::actors
