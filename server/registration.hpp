// PMIx_server_register_nspace's info, from the host's C arrays to what the
// server actor takes (actors::encoded_registration).
//
// The per-rank PMIX_PROC_DATA arrays, which are nearly all of a large
// registration (five items for each of 10,000 ranks), are written straight
// into their wire form as they are read: no C++ value per item, no second
// encoding later. Each item is still copied through convert::from_c, so what
// is accepted and refused is exactly what the rest of the C API accepts.
// The bytes are the ones the value path writes (tests/api/registration_test).
#pragma once

#include <pmix_common.h>

#include "actors/job_layout.hpp"

namespace pmix::registration {

// PMIX_ERR_BAD_PARAM / PMIX_ERR_NOT_SUPPORTED as convert::from_c. When a
// PMIX_PROC_DATA entry is not of the expected form (a data array of
// PMIX_INFO led by a valid PMIX_RANK), every entry goes into `out.job` as
// values and compute_layout judges them there.
pmix_status_t from_c(const pmix_info_t* info, size_t ninfo, actors::encoded_registration& out);

}  // namespace pmix::registration
