#include "client/openpmix_wire.hpp"

#include <pmix_common.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <optional>

namespace pmix::client::openpmix_wire {
namespace {

void put_text(std::string& out, std::string_view s) {
  out.append(s);
  out.push_back('\0');
}

using openpmix::put_be32;

// `[SIZE n]` and, unless n is 0, `[PROC x n]`.
openpmix::writer& sized(openpmix::writer& w, const std::vector<proc_id>& procs) {
  w.size(procs.size());
  if (!procs.empty()) w.procs(procs);
  return w;
}

// `[SIZE n]` and, unless n is 0, `[INFO x n]`.
openpmix::writer& sized(openpmix::writer& w, const info_list& info) {
  w.size(info.size());
  if (!info.empty()) w.infos(info);
  return w;
}

}  // namespace

std::string security_module(const char* modes) {
  std::string list = modes != nullptr ? modes : "";
  std::size_t start = 0;
  while (start <= list.size()) {
    const auto comma = list.find(',', start);
    const auto name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (name == "native" || name == "none") return name;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return "native";
}

buffer_type buffer_from_env(const char* name) {
  return name != nullptr && std::strcmp(name, "PMIX_BFROP_BUFFER_FULLY_DESC") == 0 ? buffer_type::fully_desc
                                                                                   : buffer_type::non_desc;
}

bool server_of(const std::string& uri, proc_id& out) {
  const auto semicolon = uri.find(';');
  if (semicolon == std::string::npos) return false;
  const auto dot = uri.rfind('.', semicolon);
  if (dot == std::string::npos || dot == 0 || dot + 1 == semicolon) return false;
  const auto rank = uri.substr(dot + 1, semicolon - dot - 1);
  if (rank.size() > 10 || rank.find_first_not_of("0123456789") != std::string::npos) return false;
  const auto r = std::strtoull(rank.c_str(), nullptr, 10);
  if (r >= rank_valid_limit) return false;
  out = proc_id{uri.substr(0, dot), static_cast<rank_t>(r)};
  return true;
}

std::uint32_t major_of(const std::string& version) {
  const char* p = version.c_str();
  if (*p == 'v') ++p;
  return static_cast<std::uint32_t>(std::strtoul(p, nullptr, 10));
}

std::string handshake(const std::string& security, buffer_type type, bool tool, const proc_id& proposed,
                      const info_list& tool_info) {
  std::string out;
  put_text(out, security);
  if (security == "native") {
    // The credential native gives over TCP: the uid and gid, in this host's
    // order (a server of ours takes the kernel's word instead).
    const std::uint32_t uid = ::geteuid(), gid = ::getegid();
    put_be32(out, 8);
    out.append(reinterpret_cast<const char*>(&uid), 4);
    out.append(reinterpret_cast<const char*>(&gid), 4);
  } else {
    put_be32(out, 0);
  }
  const bool needs_id = tool && proposed.nspace.empty();
  // 0 a client; 3 a tool that needs an identity; 4 a tool that has one.
  out.push_back(static_cast<char>(!tool ? 0 : needs_id ? 3 : 4));
  if (tool) {
    put_be32(out, ::geteuid());
    put_be32(out, ::getegid());
  }
  if (!needs_id) {
    put_text(out, proposed.nspace);
    put_be32(out, proposed.rank);
  }
  put_text(out, announced_version);
  put_text(out, "v41");
  out.push_back(static_cast<char>(type));
  put_text(out, "hash");
  if (tool && !tool_info.empty()) {
    openpmix::writer w{type};
    sized(w, tool_info);
    out += w.bytes();
  }
  out.push_back('\0');  // the byte OpenPMIx's clients add (its length counts it)
  return out;
}

std::string command(buffer_type t, std::uint8_t cmd) {
  openpmix::writer w{t};
  return w.command(cmd).take();
}

std::string abort(buffer_type t, int status, const std::string& message, const std::vector<proc_id>& procs) {
  openpmix::writer w{t};
  w.command(abort_cmd).status(status).string(message);
  return sized(w, procs).take();
}

bool commit(buffer_type t, const std::vector<protocol::scoped_info>& data, std::string& out, std::string& error) {
  openpmix::writer local{t}, remote{t};
  for (const auto& d : data) {
    const bool to_local = d.scope == PMIX_LOCAL || d.scope == PMIX_GLOBAL;
    const bool to_remote = d.scope == PMIX_REMOTE || d.scope == PMIX_GLOBAL;
    if ((to_local && !local.try_kval(d.item.key, d.item.val)) ||
        (to_remote && !remote.try_kval(d.item.key, d.item.val))) {
      error = d.item.key;
      return false;
    }
  }
  openpmix::writer w{t};
  w.command(commit_cmd);
  if (!local.bytes().empty()) w.scope(PMIX_LOCAL).buffer(local.bytes());
  if (!remote.bytes().empty()) w.scope(PMIX_REMOTE).buffer(remote.bytes());
  out = w.take();
  return true;
}

std::string fence(buffer_type t, const std::vector<proc_id>& procs, const info_list& info) {
  openpmix::writer w{t};
  w.command(fence_cmd);
  sized(w, procs);
  return sized(w, info).take();
}

std::string get(buffer_type t, const proc_id& p, const info_list& info, const std::string& key) {
  openpmix::writer w{t};
  w.command(get_cmd).string(p.nspace).rank(p.rank);
  sized(w, info);
  if (!key.empty()) w.string(key);
  return w.take();
}

std::string job_control(buffer_type t, const std::vector<proc_id>& targets, const info_list& directives) {
  openpmix::writer w{t};
  w.command(job_control_cmd);
  sized(w, targets);
  return sized(w, directives).take();
}

std::string query(buffer_type t, const std::vector<pmix::query>& queries) {
  std::vector<std::pair<std::vector<std::string>, info_list>> list;
  list.reserve(queries.size());
  for (const auto& q : queries) list.emplace_back(q.keys, q.qualifiers);
  openpmix::writer w{t};
  w.command(query_cmd).size(list.size());
  if (!list.empty()) w.queries(list);
  return w.take();
}

std::string notify(buffer_type t, const event& ev) {
  openpmix::writer w{t};
  w.command(notify_cmd).status(ev.status).range(static_cast<std::uint8_t>(ev.range));
  return sized(w, ev.info).take();
}

std::string publish(buffer_type t, const info_list& info) {
  openpmix::writer w{t};
  w.command(publish_cmd).uint32(::geteuid());
  return sized(w, info).take();
}

std::string keys(buffer_type t, std::uint8_t cmd, const std::vector<std::string>& keys, const info_list& info) {
  openpmix::writer w{t};
  w.command(cmd).uint32(::geteuid()).size(keys.size());
  for (const auto& k : keys) w.string(k);
  return sized(w, info).take();
}

std::string spawn(buffer_type t, const info_list& job_info, const std::vector<app>& apps) {
  openpmix::writer w{t};
  w.command(spawn_cmd);
  sized(w, job_info).size(apps.size());
  if (!apps.empty()) w.apps(apps);
  return w.take();
}

std::string connect(buffer_type t, bool disconnect, const std::vector<proc_id>& procs, const info_list& info) {
  openpmix::writer w{t};
  w.command(disconnect ? disconnect_cmd : connect_cmd);
  sized(w, procs);
  return sized(w, info).take();
}

std::string log(buffer_type t, const info_list& data, const info_list& directives) {
  openpmix::writer w{t};
  w.command(log_cmd).time(0);  // no time stamp of its own: the server's
  sized(w, data);
  return sized(w, directives).take();
}

std::string register_events(buffer_type t, const std::vector<pmix_status_t>& codes) {
  openpmix::writer w{t};
  // The codes in one pack (the server reads them so).
  w.command(regevents_cmd).size(codes.size());
  if (!codes.empty()) w.statuses(std::vector<std::int32_t>(codes.begin(), codes.end()));
  return w.size(0).take();
}

bool read_data(openpmix::reader& r, rank_t self, std::vector<std::pair<proc_id, info_list>>& out, std::string& error) {
  out.clear();
  while (!r.at_end()) {
    std::string bytes;
    if (!r.byte_object(bytes)) return error = r.error(), false;
    openpmix::reader one{bytes, r.type()};
    std::vector<proc_id> of;
    if (!one.procs(of) || of.size() != 1)
      return error = one.error().empty() ? "a process's data without its process" : one.error(), false;
    info_list items;
    while (!one.at_end()) {
      info i;
      if (!one.kval(i.key, i.val)) return error = "data of " + to_string(of[0]) + ": " + one.error(), false;
      items.push_back(std::move(i));
    }
    if (of[0].rank == rank_undef) of[0].rank = self;
    out.emplace_back(std::move(of[0]), std::move(items));
  }
  return true;
}

bool read_results(openpmix::reader& r, info_list& out) {
  out.clear();
  if (r.at_end()) return true;
  std::uint64_t n = 0;
  if (!r.size(n)) return false;
  return n == 0 || r.infos(out);
}

namespace {

// The key/values of an info array (pmix.ssn.arr, pmix.node.arr, ...).
std::optional<info_list> array_infos(const value& v) {
  const auto* a = v.as_array();
  if (a == nullptr || a->type != PMIX_INFO) return std::nullopt;
  info_list out;
  for (const auto& e : a->elements)
    if (const auto* i = e.as_info()) out.push_back(info{i->key, i->val, 0});
  return out;
}

const value* find_value(const info_list& list, std::string_view key) {
  const auto* i = find(list, key);
  return i != nullptr ? &i->val : nullptr;
}

bool same_number(const value* a, const value* b) {
  if (a == nullptr || b == nullptr) return false;
  const auto x = a->as_uint(), y = b->as_uint();
  return x && y && *x == *y;
}

// Adds `items` to `to`, keeping a key `to` has already.
void add_missing(info_list& to, info_list&& items) {
  for (auto& i : items)
    if (find(to, i.key) == nullptr) to.push_back(std::move(i));
}

}  // namespace

bool read_job(openpmix::reader& r, const std::string& nspace, const proc_id& self, const std::string& host,
              protocol::job_info& out, std::string& error) {
  out.nspace = nspace;
  out.info.clear();
  out.ranks.clear();
  std::vector<info_list> nodes, apps;
  while (!r.at_end()) {
    std::string key;
    value v;
    if (!r.kval(key, v)) return error = r.error(), false;
    if (key == "pmix.pblob") {
      const auto* bytes = v.as_string();
      if (bytes == nullptr) return error = "a pmix.pblob that is no byte object", false;
      openpmix::reader blob{*bytes, r.type()};
      rank_t rank = 0;
      if (!blob.rank(rank)) return error = "a pmix.pblob without its rank: " + blob.error(), false;
      info_list items;
      while (!blob.at_end()) {
        info i;
        if (!blob.kval(i.key, i.val)) return error = "in pmix.pblob: " + blob.error(), false;
        items.push_back(std::move(i));
      }
      out.ranks.emplace_back(rank, std::move(items));
    } else if (key == "pmix.ssn.arr") {
      auto items = array_infos(v);
      if (!items) return error = "a session array that is no info array", false;
      add_missing(out.info, std::move(*items));
    } else if (key == "pmix.node.arr" || key == "pmix.app.arr") {
      auto items = array_infos(v);
      if (!items) return error = "a node or application array that is no info array", false;
      (key == "pmix.node.arr" ? nodes : apps).push_back(std::move(*items));
    } else {
      out.info.push_back(info{std::move(key), std::move(v), 0});
    }
  }
  // This process's node and application (for another namespace: its first).
  const info_list* mine = nullptr;
  if (self.nspace == nspace)
    for (const auto& [rank, items] : out.ranks)
      if (rank == self.rank) mine = &items;
  const value* my_host = mine != nullptr ? find_value(*mine, PMIX_HOSTNAME) : nullptr;
  const value* my_node = mine != nullptr ? find_value(*mine, PMIX_NODEID) : nullptr;
  const value* my_app = mine != nullptr ? find_value(*mine, PMIX_APPNUM) : nullptr;
  const std::string* host_name = my_host != nullptr && my_host->as_string() != nullptr ? my_host->as_string() : &host;
  info_list* node = nullptr;
  for (auto& n : nodes) {
    const auto* name = find_value(n, PMIX_HOSTNAME);
    if ((name != nullptr && name->as_string() != nullptr && *name->as_string() == *host_name) ||
        same_number(find_value(n, PMIX_NODEID), my_node)) {
      node = &n;
      break;
    }
  }
  if (node == nullptr && nodes.size() == 1) node = &nodes.front();
  info_list* app = nullptr;
  for (auto& a : apps)
    if (my_app == nullptr || same_number(find_value(a, PMIX_APPNUM), my_app)) {
      app = &a;
      break;
    }
  // The other nodes' arrays stay whole: the store answers a remote rank's
  // node-level keys (its PMIX_NODEID among them) from its node's.
  for (auto& n : nodes) {
    if (&n == node || find_value(n, PMIX_HOSTNAME) == nullptr) continue;
    array_value a{PMIX_INFO, {}};
    for (auto& i : n) a.elements.push_back(value{PMIX_INFO, std::make_shared<const info>(std::move(i))});
    out.info.push_back(info{PMIX_NODE_INFO_ARRAY, value::array(std::move(a)), 0});
  }
  if (node != nullptr) add_missing(out.info, std::move(*node));
  if (app != nullptr) add_missing(out.info, std::move(*app));
  return true;
}

bool read_event(std::string_view payload, buffer_type t, event& out, std::string& error) {
  openpmix::reader r{payload, t};
  std::uint8_t cmd = 0;
  std::int32_t code = 0;
  std::vector<proc_id> source;
  std::uint64_t n = 0;
  if (!r.command(cmd) || !r.status(code) || !r.procs(source) || source.size() != 1 || !r.size(n) ||
      (n > 0 && !r.infos(out.info)))
    return error = r.error().empty() ? "a malformed event" : r.error(), false;
  out.status = code;
  out.source = source.front();
  out.range = PMIX_RANGE_UNDEF;
  std::uint8_t range = 0;
  if (!r.at_end()) {
    if (!r.range(range)) return error = r.error(), false;
    out.range = range;
  }
  return true;
}

bool read_output(std::string_view payload, buffer_type t, protocol::iof_data& out, std::string& error) {
  openpmix::reader r{payload, t};
  std::vector<proc_id> source;
  std::uint16_t channel = 0;
  std::uint64_t ref = 0, n = 0;
  if (!r.procs(source) || source.size() != 1 || !r.iof_channel(channel) || !r.size(ref) || !r.size(n) ||
      (n > 0 && !r.infos(out.info)) || !r.byte_object(out.data))
    return error = r.error().empty() ? "malformed output" : r.error(), false;
  out.source = source.front();
  out.channel = channel;
  out.ref = ref;
  return true;
}

}  // namespace pmix::client::openpmix_wire
