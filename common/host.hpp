// This machine's host name, as job maps name nodes.
#pragma once

#include <string>

namespace pmix {

// gethostname(), or "localhost" if it fails.
std::string host_name();

}  // namespace pmix
