// Sample payloads shared by the wire tests (codec_test, direct_test).
#pragma once

#include "common/value.hpp"

namespace pmix::test {

// A PMIX_PROC_INFO with every field set, a negative exit code included.
inline proc_info_value sample_proc_info() {
  proc_info_value p;
  p.proc = proc_id{"job-7", 3};
  p.hostname = "node001";
  p.executable = "/bin/a.out";
  p.pid = 4242;
  p.exit_code = -9;
  p.state = 255;
  return p;
}

}  // namespace pmix::test
