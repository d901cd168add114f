// The session's operations over OpenPMIx's protocol (issue 36): our client
// under a server of OpenPMIx's (its mpirun, Slurm's plugin, PRRTE, any host
// built on it). Requests are written and replies read as a process linked
// with OpenPMIx 4.2.2 does (client/openpmix_wire.hpp); what the server
// gives is kept in the same store, so job, node and peer keys are answered
// locally as over our protocol. docs/wire-format.md, "Our client under
// OpenPMIx's servers".
#include <pmix.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "client/openpmix_wire.hpp"
#include "client/session.hpp"
#include "common/host.hpp"
#include "common/log.hpp"

namespace pmix::client {
namespace {

namespace wire = openpmix_wire;

// A reply's leading status (PMIX_OPERATION_SUCCEEDED counts as success),
// handed with a reader of the rest to `f(status, reader*)`: the reader is
// null when the request failed before an answer came.
template <class F>
connection::completion with_status(openpmix::buffer_type type, const char* what, F f) {
  return [type, what, f = std::move(f)](pmix_status_t st, protocol::envelope* e) mutable {
    if (st != PMIX_SUCCESS) return f(st, static_cast<openpmix::reader*>(nullptr));
    openpmix::reader r{e->message, type};
    std::int32_t status = 0;
    if (!r.status(status)) {
      log::error("client", "an unreadable answer to ", what, " from the OpenPMIx server: ", r.error());
      return f(PMIX_ERR_UNPACK_FAILURE, static_cast<openpmix::reader*>(nullptr));
    }
    if (status == PMIX_OPERATION_SUCCEEDED) status = PMIX_SUCCESS;
    f(status, &r);
  };
}

// Fixed-size text of the tool handshake's answer (NUL-padded).
std::string fixed_text(const std::string& bytes, std::size_t at, std::size_t size) {
  const auto field = bytes.substr(at, size);
  return field.substr(0, field.find('\0'));
}

std::uint32_t be32_at(const std::string& bytes, std::size_t at) { return openpmix::get_be32(bytes.data() + at); }

}  // namespace

pmix_status_t session::connect_openpmix(const std::string& uri, role r, const proc_id& proposed,
                                        const info_list& info, const std::string& server_version,
                                        std::shared_ptr<session>& out, event_fn on_event) {
  auto s = make();
  s->role_ = r;
  s->openpmix_ = true;
  s->openpmix_buffer_ = static_cast<std::uint8_t>(wire::buffer_from_env(std::getenv("PMIX_BFROP_BUFFER_TYPE")));
  const auto major = wire::major_of(server_version);
  s->server_major_ = major == 0 ? 4 : major;
  auto rc = connection::open(uri, s->conn_);
  if (rc != PMIX_SUCCESS) {
    if (r == role::client) log::error("client", "cannot reach the OpenPMIx server at '", uri, "'");
    return rc;
  }
  const bool tool = r == role::tool;
  rc = s->conn_->openpmix_handshake(wire::handshake(wire::security_module(std::getenv("PMIX_SECURITY_MODE")),
                                                    s->buffer_type(), tool, proposed, info));
  if (rc != PMIX_SUCCESS) return rc;
  std::string bytes;
  if ((rc = s->conn_->read_raw(4, bytes)) != PMIX_SUCCESS) return rc;
  const auto status = static_cast<pmix_status_t>(be32_at(bytes, 0));
  if (status != PMIX_SUCCESS) {
    // -14 asks for a security exchange this library does not make.
    log::error("client", "the OpenPMIx server refused ", tool ? std::string{"the tool"} : to_string(proposed), ": ",
               PMIx_Error_string(status));
    return status == PMIX_ERR_READY_FOR_HANDSHAKE ? PMIX_ERR_NOT_SUPPORTED : status;
  }
  std::uint32_t index = 0;
  s->self_ = proposed;
  if (!tool) {
    if ((rc = s->conn_->read_raw(4, bytes)) != PMIX_SUCCESS) return rc;
    index = be32_at(bytes, 0);
    if (!wire::server_of(uri, s->server_)) s->server_ = proc_id{"pmix-server", 0};
  } else {
    // [its identity, if assigned: 256 bytes of namespace, a rank] the
    // server's (the same), a validation status.
    constexpr std::size_t id_size = PMIX_MAX_NSLEN + 1 + 4;
    if (proposed.nspace.empty()) {
      if ((rc = s->conn_->read_raw(id_size, bytes)) != PMIX_SUCCESS) return rc;
      s->self_ = proc_id{fixed_text(bytes, 0, PMIX_MAX_NSLEN + 1), be32_at(bytes, PMIX_MAX_NSLEN + 1)};
    }
    if ((rc = s->conn_->read_raw(id_size + 4, bytes)) != PMIX_SUCCESS) return rc;
    s->server_ = proc_id{fixed_text(bytes, 0, PMIX_MAX_NSLEN + 1), be32_at(bytes, PMIX_MAX_NSLEN + 1)};
    const auto validated = static_cast<pmix_status_t>(be32_at(bytes, id_size));
    if (validated != PMIX_SUCCESS) {
      log::error("client", "the OpenPMIx server did not validate the tool: ", PMIx_Error_string(validated));
      return validated;
    }
  }
  s->conn_->use_openpmix(index);
  if ((rc = s->start_connection(std::move(on_event))) != PMIX_SUCCESS) return rc;
  // The job data (PMIX_REQ_CMD): the namespace, then its key/values.
  struct req_state {
    std::atomic<bool> done{false};
    pmix_status_t answer = PMIX_ERR_UNPACK_FAILURE;
  };
  auto state = std::make_shared<req_state>();
  session* raw = s.get();
  {
    connection::answered_here blocking;
    rc = s->conn_->request(protocol::body::none, wire::command(s->buffer_type(), wire::req),
                           [raw, state](pmix_status_t st, protocol::envelope* e) {
                             if (st == PMIX_SUCCESS)
                               st = raw->openpmix_store_job(e->message, "its job") ? PMIX_SUCCESS
                                                                                  : PMIX_ERR_UNPACK_FAILURE;
                             state->answer = st;
                             state->done = true;
                           });
  }
  if (rc != PMIX_SUCCESS) return rc;
  s->conn_->drive([&state] { return state->done.load(); });
  if (!state->done) return PMIX_ERR_LOST_CONNECTION;
  if (state->answer != PMIX_SUCCESS) return state->answer;
  log::info("client", to_string(s->self_), " connected to an OpenPMIx ",
            server_version.empty() ? std::string{"server"} : server_version + " server", " (", uri, ")");
  out = std::move(s);
  return PMIX_SUCCESS;
}

bool session::openpmix_store_job(std::string_view bytes, const char* what) {
  openpmix::reader r{bytes, buffer_type()};
  std::string nspace, error;
  if (!r.string(nspace)) {
    // A server that has no job data for us answers with a status.
    openpmix::reader st{bytes, buffer_type()};
    std::int32_t status = 0;
    if (st.status(status))
      log::error("client", "the OpenPMIx server gave no job data: ", PMIx_Error_string(status));
    else
      log::error("client", "unreadable job data from the OpenPMIx server (", what, "): ", r.error());
    return false;
  }
  protocol::job_info job;
  const char* host = std::getenv("PMIX_HOSTNAME");
  if (!wire::read_job(r, nspace, self_, host != nullptr ? std::string{host} : host_name(), job, error)) {
    log::error("client", "unreadable job data of ", nspace, " from the OpenPMIx server (", what, "): ", error);
    return false;
  }
  std::lock_guard<std::mutex> guard{mutex_};
  data_.load_job(std::move(job));
  return true;
}

void session::openpmix_unprompted(protocol::envelope& e, const event_fn& on_event, const task_poster& post) {
  std::string error;
  if (e.kind == protocol::body::iof) {
    protocol::iof_data d;
    if (!wire::read_output(e.message, buffer_type(), d, error))
      return log::error("client", "unreadable output from the OpenPMIx server: ", error);
    iof_handler handler;
    {
      std::lock_guard<std::mutex> guard{iof_mutex_};
      auto it = iof_handlers_.find(d.ref);
      if (it == iof_handlers_.end()) return;  // deregistered meanwhile
      handler = it->second;
    }
    return handler(d);
  }
  event ev;
  if (!wire::read_event(e.message, buffer_type(), ev, error))
    return log::error("client", "unreadable event from the OpenPMIx server: ", error);
  if (on_event) on_event(std::move(ev), post);
}

pmix_status_t session::openpmix_status_request(const std::string& payload, done_fn done) {
  return conn_->request(protocol::body::none, payload,
                        with_status(buffer_type(), "a request", [done = std::move(done)](pmix_status_t st, auto*) {
                          done(st);
                        }));
}

pmix_status_t session::openpmix_info_request(const std::string& payload,
                                             std::function<void(pmix_status_t, info_list)> done) {
  return conn_->request(protocol::body::none, payload,
                        with_status(buffer_type(), "a request",
                                    [done = std::move(done)](pmix_status_t st, openpmix::reader* r) {
                                      info_list results;
                                      // The results of a failure are dropped, as OpenPMIx's client does.
                                      if (st == PMIX_SUCCESS && r != nullptr && !wire::read_results(*r, results))
                                        st = PMIX_ERR_UNPACK_FAILURE;
                                      done(st, std::move(results));
                                    }));
}

pmix_status_t session::openpmix_commit(std::vector<protocol::scoped_info> data) {
  std::string payload, key;
  if (!wire::commit(buffer_type(), data, payload, key)) {
    log::error("client", "PMIx_Commit: the value of ", key, " has no form in OpenPMIx's protocol");
    return PMIX_ERR_NOT_SUPPORTED;
  }
  // Answered (its status is not looked at, as in OpenPMIx's client); the
  // server reads it before anything this process sends next.
  return conn_->request(protocol::body::none, payload, [](pmix_status_t, protocol::envelope*) {});
}

pmix_status_t session::openpmix_fence(const std::vector<proc_id>& procs, const info_list& info, done_fn done) {
  // No procs: our whole namespace.
  const auto participants = procs.empty() ? std::vector<proc_id>{{self_.nspace, rank_wildcard}} : procs;
  auto self = shared_from_this();
  // The answer is a status: the data stays with the server, which gives
  // each rank's at a get.
  return conn_->request(protocol::body::none, wire::fence(buffer_type(), participants, info),
                        with_status(buffer_type(), "a fence", [self, done = std::move(done)](pmix_status_t st, auto*) {
                          if (st == PMIX_SUCCESS) {
                            std::lock_guard<std::mutex> guard{self->mutex_};
                            self->data_.fence_completed();
                          }
                          done(st);
                        }));
}

pmix_status_t session::openpmix_fetch(const proc_id& target, const std::string& key, const info_list& info,
                                      value_fn done) {
  proc_id asked = target;
  info_list directives = info;
  if (reserved_key(key)) {
    // As OpenPMIx's client: a reserved key of another namespace is its job's;
    // one of ours is answered at once, without waiting for a commit.
    if (target.nspace != self_.nspace) asked.rank = rank_wildcard;
    else if (find(directives, PMIX_IMMEDIATE) == nullptr)
      directives.push_back({PMIX_IMMEDIATE, value::boolean(true), 0});
  }
  auto self = shared_from_this();
  return conn_->request(
      protocol::body::none, wire::get(buffer_type(), asked, directives, key),
      with_status(buffer_type(), "a get", [self, target, key, done = std::move(done)](pmix_status_t st, openpmix::reader* r) {
        if (st != PMIX_SUCCESS || r == nullptr) return done(st, nullptr);
        value found;
        bool have = false;
        {
          std::lock_guard<std::mutex> guard{self->mutex_};
          std::vector<std::pair<proc_id, info_list>> data;
          std::string error;
          if (!wire::read_data(*r, self->self_.rank, data, error)) {
            log::error("client", "an unreadable answer to a get from the OpenPMIx server: ", error);
            return done(PMIX_ERR_UNPACK_FAILURE, nullptr);
          }
          for (auto& [p, items] : data) {
            if (p.rank == rank_wildcard) self->data_.merge_job(p.nspace, std::move(items));
            else self->data_.add_peer_values(p, std::move(items));
          }
          if (key.empty()) {
            // A NULL key (no key on the wire): the server answered all it
            // holds of the process, which is now here with the rest.
            have = all_values(self->data_.all_of(target), found);
          } else {
            const value* v = nullptr;
            if (reserved_key(key)) {
              if (target.rank < rank_valid_limit) v = self->data_.rank_value(target, key);
              if (v == nullptr) v = self->data_.job_value(target.nspace, key);
            }
            if (v == nullptr) v = self->data_.peer_value(target, key);
            if (v == nullptr && target.rank >= rank_valid_limit) v = self->data_.job_value(target.nspace, key);
            if (v != nullptr) {
              found = *v;
              have = true;
            }
          }
        }
        done(have ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, have ? &found : nullptr);
      }));
}

pmix_status_t session::openpmix_lookup(const std::vector<std::string>& keys, const info_list& info,
                                       std::function<void(pmix_status_t, std::vector<pdata>)> done) {
  return conn_->request(protocol::body::none, wire::keys(buffer_type(), wire::lookup_cmd, keys, info),
                        with_status(buffer_type(), "a lookup",
                                    [done = std::move(done)](pmix_status_t st, openpmix::reader* r) {
                                      std::vector<pdata> found;
                                      std::uint64_t n = 0;
                                      if (st == PMIX_SUCCESS && r != nullptr && !r->at_end() &&
                                          (!r->size(n) || (n > 0 && !r->pdata(found))))
                                        st = PMIX_ERR_UNPACK_FAILURE;
                                      done(st, std::move(found));
                                    }));
}

pmix_status_t session::openpmix_spawn(const info_list& job_info, const std::vector<app>& apps,
                                      std::function<void(pmix_status_t, std::string)> done) {
  auto self = shared_from_this();
  return conn_->request(
      protocol::body::none, wire::spawn(buffer_type(), job_info, apps),
      with_status(buffer_type(), "a spawn", [self, done = std::move(done)](pmix_status_t st, openpmix::reader* r) {
        std::string nspace;
        if (r != nullptr && !r->at_end() && !r->string(nspace)) st = PMIX_ERR_UNPACK_FAILURE;
        if (st == PMIX_SUCCESS && !nspace.empty()) {
          // Then the new job's data (its job-level key/values).
          protocol::job_info job;
          std::string error;
          if (!wire::read_job(*r, nspace, self->self_, host_name(), job, error)) {
            log::error("client", "unreadable job data of ", nspace, " from the OpenPMIx server: ", error);
          } else {
            std::lock_guard<std::mutex> guard{self->mutex_};
            self->data_.merge_job(nspace, std::move(job.info));
          }
        }
        done(st, std::move(nspace));
      }));
}

pmix_status_t session::openpmix_connect_procs(const std::vector<proc_id>& procs, const info_list& info,
                                              bool disconnect, done_fn done) {
  auto self = shared_from_this();
  return conn_->request(
      protocol::body::none, wire::connect(buffer_type(), disconnect, procs, info),
      with_status(buffer_type(), "a connect", [self, done = std::move(done)](pmix_status_t st, openpmix::reader* r) {
        // Then the job data of each other namespace with local participants.
        while (st == PMIX_SUCCESS && r != nullptr && !r->at_end()) {
          std::string bytes;
          if (!r->byte_object(bytes) || !self->openpmix_store_job(bytes, "a connect")) st = PMIX_ERR_UNPACK_FAILURE;
        }
        done(st);
      }));
}

pmix_status_t session::openpmix_host_request(const protocol::host_request& r, host_reply_fn done) {
  openpmix::writer w{buffer_type()};
  auto sized_infos = [&w](const info_list& list) {
    w.size(list.size());
    if (!list.empty()) w.infos(list);
  };
  auto sized_procs = [&w](const std::vector<proc_id>& list) {
    w.size(list.size());
    if (!list.empty()) w.procs(list);
  };
  std::uint64_t pull_ref = 0;
  bool pull = false;
  switch (r.call) {
    case protocol::host_call::allocate:
      w.command(wire::alloc_cmd).alloc_directive(static_cast<std::uint8_t>(r.code));
      sized_infos(r.info);
      break;
    case protocol::host_call::monitor:
      if (r.info.size() != 1) return PMIX_ERR_BAD_PARAM;
      w.command(wire::monitor_cmd).infos(r.info).status(r.code);
      sized_infos(r.directives);
      break;
    case protocol::host_call::get_credential:
      w.command(wire::get_credential_cmd);
      sized_infos(r.directives);
      break;
    case protocol::host_call::validate_credential:
      w.command(wire::validate_credential_cmd).byte_object(r.data.value_or(std::string{}));
      sized_infos(r.directives);
      break;
    case protocol::host_call::iof_pull:
      w.command(wire::iof_pull_cmd);
      sized_procs(r.procs);
      sized_infos(r.directives);
      w.iof_channel(static_cast<std::uint16_t>(r.code)).size(r.ref);
      pull = true;
      pull_ref = r.ref;
      break;
    case protocol::host_call::iof_push:
      w.command(wire::iof_push_cmd);
      sized_procs(r.procs);
      sized_infos(r.directives);
      if (r.data) w.byte_object(*r.data);
      break;
    case protocol::host_call::iof_deregister: {
      std::uint64_t remote = r.ref;
      {
        std::lock_guard<std::mutex> guard{iof_mutex_};
        auto it = iof_remote_.find(r.ref);
        if (it != iof_remote_.end()) {
          remote = it->second;
          iof_remote_.erase(it);
        }
      }
      w.command(wire::iof_deregister_cmd);
      sized_infos(r.directives);
      w.size(remote);
      break;
    }
    case protocol::host_call::session_control:
    case protocol::host_call::resource_block:
      // OpenPMIx 4.2's protocol has no such command (6.0 added them).
      log::warning("client", "session control and resource blocks are not in OpenPMIx 4.2's protocol");
      return PMIX_ERR_NOT_SUPPORTED;
    case protocol::host_call::fabric:
      if (r.code == PMIX_FABRIC_UPDATE_INFO) {
        const auto* index = find(r.directives, PMIX_FABRIC_INDEX);
        w.command(wire::fabric_update_cmd).size(index != nullptr ? index->val.as_uint().value_or(0) : 0);
      } else {
        w.command(wire::fabric_register_cmd);
        sized_infos(r.directives);
      }
      break;
  }
  const bool credential = r.call == protocol::host_call::get_credential;
  auto self = shared_from_this();
  return conn_->request(
      protocol::body::none, w.bytes(),
      with_status(buffer_type(), "a request",
                  [self, credential, pull, pull_ref, done = std::move(done)](pmix_status_t st, openpmix::reader* r) {
                    info_list results;
                    std::string data;
                    if (st == PMIX_SUCCESS && r != nullptr) {
                      if (pull) {
                        // The server's own reference, which a deregistration names.
                        std::uint64_t remote = 0;
                        if (!r->at_end() && r->size(remote)) {
                          std::lock_guard<std::mutex> guard{self->iof_mutex_};
                          self->iof_remote_[pull_ref] = remote;
                        }
                      } else {
                        if (credential && !r->at_end() && !r->byte_object(data)) st = PMIX_ERR_UNPACK_FAILURE;
                        if (st == PMIX_SUCCESS && !wire::read_results(*r, results)) st = PMIX_ERR_UNPACK_FAILURE;
                      }
                    }
                    done(st, std::move(results), std::move(data));
                  }));
}

pmix_status_t session::openpmix_group(const protocol::group_request& r,
                                      std::function<void(pmix_status_t, info_list)> done) {
  if (r.op != protocol::group_op::construct && r.op != protocol::group_op::destruct) {
    log::warning("client", "group invitations, joins and leaves are not part of OpenPMIx's protocol: ",
                 "PMIX_ERR_NOT_SUPPORTED");
    return PMIX_ERR_NOT_SUPPORTED;
  }
  const bool construct = r.op == protocol::group_op::construct;
  std::vector<proc_id> members = r.procs;
  if (!construct) {
    std::lock_guard<std::mutex> guard{mutex_};
    auto it = group_members_.find(r.name);
    if (it != group_members_.end()) members = it->second;
  }
  openpmix::writer w{buffer_type()};
  w.command(construct ? wire::group_construct_cmd : wire::group_destruct_cmd).string(r.name);
  // A 4.x server's destruct names no members; 5.x's names them.
  if (construct || server_major_ >= 5) {
    w.size(members.size());
    if (!members.empty()) w.procs(members);
  }
  w.size(r.directives.size());
  if (!r.directives.empty()) w.infos(r.directives);
  auto self = shared_from_this();
  const bool five = server_major_ >= 5;
  return conn_->request(
      protocol::body::none, w.bytes(),
      with_status(buffer_type(), "a group request",
                  [self, construct, five, name = r.name, members, done = std::move(done)](pmix_status_t st,
                                                                                          openpmix::reader* r) {
                    info_list results;
                    if (st == PMIX_SUCCESS && construct && r != nullptr) {
                      auto final_members = members;
                      std::uint64_t n = 0, ctxid = SIZE_MAX;
                      // 5.x: the members first, then the context id.
                      if (five && !r->at_end() && (!r->size(n) || (n > 0 && !r->procs(final_members))))
                        st = PMIX_ERR_UNPACK_FAILURE;
                      if (st == PMIX_SUCCESS && !r->at_end() && !r->size(ctxid)) st = PMIX_ERR_UNPACK_FAILURE;
                      if (st == PMIX_SUCCESS) {
                        // The context id first, as our server gives it.
                        if (ctxid != SIZE_MAX)
                          results.push_back({PMIX_GROUP_CONTEXT_ID, value::unsigned_(PMIX_SIZE, ctxid), 0});
                        results.push_back({PMIX_GROUP_ID, value::string(name), 0});
                        array_value a{PMIX_PROC, {}};
                        for (const auto& p : final_members) a.elements.push_back(value::proc(p));
                        results.push_back({PMIX_GROUP_MEMBERSHIP, value::array(std::move(a)), 0});
                        std::lock_guard<std::mutex> guard{self->mutex_};
                        self->group_members_[name] = std::move(final_members);
                      }
                    } else if (st == PMIX_SUCCESS && !construct) {
                      std::lock_guard<std::mutex> guard{self->mutex_};
                      self->group_members_.erase(name);
                    }
                    done(st, std::move(results));
                  }));
}

void session::register_events(const std::vector<pmix_status_t>& codes) {
  if (!openpmix_ || !conn_) return;
  // Answered with a status that changes nothing here: the handlers are ours.
  conn_->request(protocol::body::none, wire::register_events(buffer_type(), codes),
                 [](pmix_status_t, protocol::envelope*) {});
}

}  // namespace pmix::client
