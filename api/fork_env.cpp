#include "api/fork_env.hpp"

#include <cstring>

namespace pmix::server {
namespace {

// The value part of "name=value" in env, or nullptr.
const char* lookup(char** env, const std::string& name) {
  for (char** e = env; e != nullptr && *e != nullptr; ++e)
    if (std::strncmp(*e, name.c_str(), name.size()) == 0 && (*e)[name.size()] == '=') return *e + name.size() + 1;
  return nullptr;
}

void remove(char** env, const std::string& name) {
  if (env == nullptr) return;
  char** out = env;
  for (char** e = env; *e != nullptr; ++e) {
    if (std::strncmp(*e, name.c_str(), name.size()) == 0 && (*e)[name.size()] == '=') {
      std::free(*e);
      continue;
    }
    *out++ = *e;
  }
  *out = nullptr;
}

}  // namespace

pmix_status_t split_env_changes(const info_list& in, std::vector<env_change>& changes, info_list& rest,
                                std::string& error) {
  for (const auto& i : in) {
    env_change c;
    if (i.key == PMIX_UNSET_ENVAR) {
      const auto* name = i.val.as_string();
      if (name == nullptr || name->empty()) {
        error = "PMIX_UNSET_ENVAR must name a variable";
        return PMIX_ERR_BAD_PARAM;
      }
      c.op = env_change::kind::unset;
      c.name = *name;
      changes.push_back(std::move(c));
      continue;
    }
    const bool set = i.key == PMIX_SET_ENVAR, add = i.key == PMIX_ADD_ENVAR;
    const bool prepend = i.key == PMIX_PREPEND_ENVAR, append = i.key == PMIX_APPEND_ENVAR;
    if (!set && !add && !prepend && !append) {
      rest.push_back(i);
      continue;
    }
    const auto* e = std::get_if<std::shared_ptr<const envar_value>>(&i.val.data);
    if (i.val.type != PMIX_ENVAR || e == nullptr || *e == nullptr || (*e)->name.empty()) {
      error = i.key + " must be a pmix_envar_t with a name";
      return PMIX_ERR_BAD_PARAM;
    }
    c.op = set ? env_change::kind::set : add ? env_change::kind::add
           : prepend ? env_change::kind::prepend : env_change::kind::append;
    c.name = (*e)->name;
    c.value = (*e)->value;
    c.separator = (*e)->separator == 0 ? ':' : (*e)->separator;
    changes.push_back(std::move(c));
  }
  return PMIX_SUCCESS;
}

pmix_status_t apply_env_changes(const std::vector<env_change>& changes, char*** env) {
  if (env == nullptr) return PMIX_ERR_BAD_PARAM;
  for (const auto& c : changes) {
    const char* now = lookup(*env, c.name);
    pmix_status_t rc = PMIX_SUCCESS;
    switch (c.op) {
      case env_change::kind::set:
        rc = pmix_setenv(c.name.c_str(), c.value.c_str(), true, env);
        break;
      case env_change::kind::add:
        if (now == nullptr) rc = pmix_setenv(c.name.c_str(), c.value.c_str(), true, env);
        break;
      case env_change::kind::unset:
        remove(*env, c.name);
        break;
      case env_change::kind::prepend:
      case env_change::kind::append: {
        std::string v = c.value;
        if (now != nullptr && *now != '\0')
          v = c.op == env_change::kind::prepend ? c.value + c.separator + now : std::string{now} + c.separator + c.value;
        rc = pmix_setenv(c.name.c_str(), v.c_str(), true, env);
        break;
      }
    }
    if (rc != PMIX_SUCCESS) return rc;
  }
  return PMIX_SUCCESS;
}

info_list harvest_envars(char* const* environ_) {
  info_list out;
  static const char prefix[] = "PMIX_CXX_";
  for (auto e = environ_; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, prefix, sizeof prefix - 1) != 0) continue;
    const char* eq = std::strchr(*e, '=');
    if (eq == nullptr) continue;
    // Not the server's own settings: they concern only this process.
    const std::string name{*e, static_cast<std::size_t>(eq - *e)};
    if (name.compare(0, 16, "PMIX_CXX_SERVER_") == 0) continue;
    value v;
    v.type = PMIX_ENVAR;
    v.data = std::make_shared<const envar_value>(envar_value{name, eq + 1, ':'});
    out.push_back(info{PMIX_SET_ENVAR, std::move(v), 0});
  }
  return out;
}

}  // namespace pmix::server
