#include "common/host.hpp"

#include <unistd.h>

#include <climits>

namespace pmix {

std::string host_name() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

}  // namespace pmix
