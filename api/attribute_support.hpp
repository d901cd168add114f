// Attribute support (PMIx Standard v4, "Query" and PMIx_Register_attributes):
// which attributes each function supports, at four levels.
//
// - client, server, tool: this library's own, from the one table of what the
//   code accepts (common/supported.hpp); every process answers them itself.
// - host: what the host registered with PMIx_Register_attributes, kept in
//   the host process's libpmix.so.2 (here). A client or tool asks its server
//   for them; the server answers from its process's registrations
//   (host::module::query, through the runtime's library hooks).
//
// Internally (and on the wire) an answer is an info
// PMIX_QUERY_ATTRIBUTE_SUPPORT holding a PMIX_DATA_ARRAY of PMIX_INFO: for an
// *_ATTRIBUTES qualifier one info per function, its key the function's
// name, its value a string of attribute names joined by ','; for a
// *_FUNCTIONS qualifier one info, its key the qualifier, its value the
// function names joined by ','. materialize() turns the attribute strings
// into the PMIX_DATA_ARRAY of PMIX_REGATTR the caller gets (name, key, type).
// docs/tools.md shows the layout.
#pragma once

#include <pmix_common.h>

#include <string>
#include <vector>

#include "common/value.hpp"

namespace pmix::api::attribute_support {

enum level : unsigned { client = 1u, server = 2u, tool = 4u, host = 8u, all_levels = 15u };

// Whether a query asks for attribute support.
bool asked(const query& q);

// Answers one attribute-support query's `qualifiers` for the levels in
// `levels` into `out` (one PMIX_QUERY_ATTRIBUTE_SUPPORT info per qualifier
// that found something). No recognized qualifier asks for everything. The
// qualifiers of the other levels come back, for the server to answer.
info_list answer(const info_list& qualifiers, unsigned levels, info_list& out);

// In results given to the caller: every attribute list of an answer above
// becomes a PMIX_DATA_ARRAY of PMIX_REGATTR. Anything else is left alone.
void materialize(pmix_info_t* results, size_t nresults);

// PMIx_Register_attributes' registry. PMIX_ERR_REPEAT_ATTR_REGISTRATION for a
// function registered before.
pmix_status_t register_host(const std::string& function, std::vector<std::string> attributes);
// Forgets every registration (the library's last user finalized).
void clear_host();

// The runtime's hook (pmix_cxx_library_hooks_t::attribute_support): the
// server process answers a client's query, every level, in the internal
// form. PMIX_ERR_NOT_FOUND when nothing matched.
pmix_status_t answer_for_server(const pmix_info_t* qualifiers, size_t nqualifiers, pmix_info_t** results,
                                size_t* nresults);

}  // namespace pmix::api::attribute_support
