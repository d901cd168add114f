// PMIx_Register_attributes and the answers to PMIX_QUERY_ATTRIBUTE_SUPPORT
// (api/attribute_support.hpp, docs/tools.md).
#include "api/attribute_support.hpp"

#include <pmix.h>
#include <pmix_server.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>
#include <utility>

#include "api/attributes.hpp"
#include "api/convert.hpp"
#include "api/library.hpp"
#include "common/log.hpp"
#include "common/supported.hpp"

namespace pmix::api::attribute_support {
namespace {

struct registered {
  std::string function;
  std::vector<std::string> attributes;
};

struct registry {
  std::mutex mutex;
  std::vector<registered> functions;  // in registration order
};

registry& host_registry() {
  static registry r;
  return r;
}

// One qualifier of an attribute-support query.
struct item {
  level lvl;
  bool functions;                   // *_FUNCTIONS: the function names; else their attributes
  std::vector<std::string> wanted;  // function names; empty: all
};

struct qualifier_key {
  const char* key;
  level lvl;
  bool functions;
};

constexpr qualifier_key kQualifiers[] = {
    {PMIX_CLIENT_ATTRIBUTES, client, false}, {PMIX_CLIENT_FUNCTIONS, client, true},
    {PMIX_SERVER_ATTRIBUTES, server, false}, {PMIX_SERVER_FUNCTIONS, server, true},
    {PMIX_TOOL_ATTRIBUTES, tool, false},     {PMIX_TOOL_FUNCTIONS, tool, true},
    {PMIX_HOST_ATTRIBUTES, host, false},     {PMIX_HOST_FUNCTIONS, host, true},
};

const char* key_of(level l, bool functions) {
  for (const auto& q : kQualifiers)
    if (q.lvl == l && q.functions == functions) return q.key;
  return "";
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    auto one = text.substr(start, comma - start);
    one.erase(0, one.find_first_not_of(" \t"));
    one.erase(one.find_last_not_of(" \t") + 1);
    if (!one.empty()) out.push_back(std::move(one));
    start = comma + 1;
  }
  return out;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
  return out;
}

// The qualifiers read; none recognized: every level, both kinds.
std::vector<item> read(const info_list& qualifiers) {
  std::vector<item> out;
  for (const auto& q : qualifiers) {
    for (const auto& k : kQualifiers) {
      if (q.key != k.key) continue;
      item i{k.lvl, k.functions, {}};
      // "f1,f2" or "all"; a value that is not a string (a bare flag) is all.
      if (!k.functions)
        if (const auto* s = q.val.as_string()) {
          i.wanted = split(*s);
          for (const auto& w : i.wanted)
            if (w == "all") i.wanted.clear();
        }
      out.push_back(std::move(i));
    }
  }
  if (out.empty())
    for (const auto& k : kQualifiers) out.push_back(item{k.lvl, k.functions, {}});
  return out;
}

// One level's functions and their attribute names.
std::vector<registered> table(level l) {
  if (l == host) {
    auto& r = host_registry();
    std::lock_guard<std::mutex> guard{r.mutex};
    return r.functions;
  }
  std::vector<registered> out;
  auto add = [&out](const auto& functions) {
    for (const auto& f : functions) {
      registered one{std::string(f.name), {}};
      for (auto key : f) {
        const char* name = attribute_name(key);
        one.attributes.emplace_back(name != nullptr ? name : std::string(key));
      }
      out.push_back(std::move(one));
    }
  };
  if (l == client) add(supported::client_functions);
  if (l == server) add(supported::server_functions);
  if (l == tool) add(supported::tool_functions);
  return out;
}

bool wanted(const item& i, const std::string& function) {
  if (i.wanted.empty()) return true;
  for (const auto& w : i.wanted)
    if (w == function) return true;
  return false;
}

value info_element(std::string key, value v) {
  return value{PMIX_INFO,
               std::shared_ptr<const info>(std::make_shared<info>(info{std::move(key), std::move(v), 0}))};
}

bool is_functions_key(const char* key) {
  for (const auto& k : kQualifiers)
    if (k.functions && std::strncmp(key, k.key, PMIX_MAX_KEYLEN) == 0) return true;
  return false;
}

// One attribute name (or key) as a pmix_regattr_t.
void load_regattr(const std::string& given, pmix_regattr_t& out) {
  std::memset(&out, 0, sizeof out);
  std::string name = given;
  const char* key = attribute_key(given);
  if (key == nullptr) {
    // A key string ("pmix.timeout") names its attribute too.
    if (const char* n = attribute_name(given)) {
      name = n;
      key = attribute_key(name);
    }
  }
  out.name = ::strdup(name.c_str());
  if (key != nullptr)
    PMIX_LOAD_KEY(out.string, key);
  else if (name != "NONE")
    PMIX_LOAD_KEY(out.string, name.c_str());
  out.type = attribute_type(name);
}

// The attribute list held as a string -> a PMIX_DATA_ARRAY of PMIX_REGATTR.
void to_regattrs(pmix_value_t& v) {
  std::vector<std::string> names = split(v.data.string == nullptr ? "" : v.data.string);
  if (names.empty() || (names.size() == 1 && names[0] == "N/A")) names.assign(1, "NONE");
  auto* attrs = static_cast<pmix_regattr_t*>(std::calloc(names.size(), sizeof(pmix_regattr_t)));
  auto* array = static_cast<pmix_data_array_t*>(std::calloc(1, sizeof(pmix_data_array_t)));
  if (attrs == nullptr || array == nullptr) {
    std::free(attrs);
    std::free(array);
    return;  // the string stays
  }
  for (std::size_t k = 0; k < names.size(); ++k) load_regattr(names[k], attrs[k]);
  array->type = PMIX_REGATTR;
  array->size = names.size();
  array->array = attrs;
  std::free(v.data.string);
  v.type = PMIX_DATA_ARRAY;
  v.data.darray = array;
}

}  // namespace

bool asked(const query& q) {
  for (const auto& k : q.keys)
    if (k == PMIX_QUERY_ATTRIBUTE_SUPPORT) return true;
  return false;
}

info_list answer(const info_list& qualifiers, unsigned levels, info_list& out) {
  info_list rest;
  for (const auto& i : read(qualifiers)) {
    if ((levels & i.lvl) == 0) {
      if (i.functions)
        rest.push_back(info{key_of(i.lvl, true), value::boolean(true), 0});
      else
        rest.push_back(
            info{key_of(i.lvl, false), value::string(i.wanted.empty() ? "all" : join(i.wanted)), 0});
      continue;
    }
    const auto functions = table(i.lvl);
    array_value found{PMIX_INFO, {}};
    if (i.functions) {
      std::vector<std::string> names;
      for (const auto& f : functions) names.push_back(f.function);
      if (!names.empty())
        found.elements.push_back(info_element(key_of(i.lvl, true), value::string(join(names))));
    } else {
      for (const auto& f : functions)
        if (wanted(i, f.function))
          found.elements.push_back(info_element(f.function, value::string(join(f.attributes))));
    }
    if (!found.elements.empty())
      out.push_back(info{PMIX_QUERY_ATTRIBUTE_SUPPORT, value::array(std::move(found)), 0});
  }
  return rest;
}

void materialize(pmix_info_t* results, size_t nresults) {
  for (size_t r = 0; results != nullptr && r < nresults; ++r) {
    auto& v = results[r].value;
    if (!PMIX_CHECK_KEY(&results[r], PMIX_QUERY_ATTRIBUTE_SUPPORT) || v.type != PMIX_DATA_ARRAY ||
        v.data.darray == nullptr || v.data.darray->type != PMIX_INFO)
      continue;
    auto* entries = static_cast<pmix_info_t*>(v.data.darray->array);
    for (size_t e = 0; entries != nullptr && e < v.data.darray->size; ++e)
      if (!is_functions_key(entries[e].key) && entries[e].value.type == PMIX_STRING)
        to_regattrs(entries[e].value);
  }
}

pmix_status_t register_host(const std::string& function, std::vector<std::string> attributes) {
  auto& r = host_registry();
  std::lock_guard<std::mutex> guard{r.mutex};
  for (const auto& f : r.functions)
    if (f.function == function) return PMIX_ERR_REPEAT_ATTR_REGISTRATION;
  r.functions.push_back(registered{function, std::move(attributes)});
  return PMIX_SUCCESS;
}

void clear_host() {
  auto& r = host_registry();
  std::lock_guard<std::mutex> guard{r.mutex};
  r.functions.clear();
}

pmix_status_t answer_for_server(const pmix_info_t* qualifiers, size_t nqualifiers, pmix_info_t** results,
                                size_t* nresults) {
  *results = nullptr;
  *nresults = 0;
  info_list quals, out;
  if (convert::from_c(qualifiers, nqualifiers, quals) != PMIX_SUCCESS) return PMIX_ERR_BAD_PARAM;
  answer(quals, all_levels, out);
  if (out.empty()) return PMIX_ERR_NOT_FOUND;
  *results = convert::new_infos(out);
  *nresults = out.size();
  return PMIX_SUCCESS;
}

}  // namespace pmix::api::attribute_support

extern "C" {

// As OpenPMIx 4.2.2: any initialized process may register (a client's own
// registrations are never asked for: its queries go to its server); a
// function registered twice is refused. Unlike it, attributes unknown to
// the dictionary are kept (answered by name, type PMIX_UNDEF), and a key
// string names its attribute.
PMIX_EXPORT pmix_status_t PMIx_Register_attributes(char* function, char* attrs[]) {
  if (!pmix::api::current_session()) return PMIX_ERR_INIT;
  if (function == nullptr || function[0] == '\0') {
    pmix::log::error("api", "PMIx_Register_attributes: no function name");
    return PMIX_ERR_BAD_PARAM;
  }
  std::vector<std::string> names;
  for (char** a = attrs; a != nullptr && *a != nullptr; ++a)
    if (**a != '\0') names.emplace_back(*a);
  return pmix::api::attribute_support::register_host(function, std::move(names));
}

}  // extern "C"
