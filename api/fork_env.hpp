// The environment a namespace's clients get beyond the server's own
// variables: changes given with PMIx_server_setup_local_support
// (PMIX_SET_ENVAR, PMIX_ADD_ENVAR, PMIX_UNSET_ENVAR, PMIX_PREPEND_ENVAR,
// PMIX_APPEND_ENVAR), applied by PMIx_server_setup_fork; and what
// PMIx_server_setup_application harvests for them. Plain code
// (tests/api/fork_env_test.cpp).
#pragma once

#include <pmix_common.h>

#include <string>
#include <vector>

#include "common/value.hpp"

namespace pmix::server {

struct env_change {
  enum class kind { set, add, unset, prepend, append };
  kind op = kind::set;
  std::string name;
  std::string value;
  char separator = ':';
};

// Moves the envar entries of `in` into `changes` and the rest into `rest`.
// PMIX_ERR_BAD_PARAM (with `error`) for an entry of the wrong type.
pmix_status_t split_env_changes(const info_list& in, std::vector<env_change>& changes, info_list& rest,
                                std::string& error);

// Applies `changes` in order to an environ-style array.
pmix_status_t apply_env_changes(const std::vector<env_change>& changes, char*** env);

// PMIx_server_setup_application with PMIX_SETUP_APP_ENVARS (or _ALL): the
// settings of our client library that the launching environment holds
// (PMIX_CXX_* variables of `environ`), as PMIX_SET_ENVAR entries, so that
// every node's clients run with the launcher's settings.
info_list harvest_envars(char* const* environ_);

}  // namespace pmix::server
