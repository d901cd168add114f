// Fuzz target: the reader of OpenPMIx's format (protocol/openpmix.hpp), as
// the server reads what a process linked with OpenPMIx sends (issue 35).
//
// Input: [buffer type byte: even NON_DESC, odd FULLY_DESC] then the buffer.
// It is read as a stream of key/values (the job data, a commit's contents);
// where that stops, as a command, a proc list, an info list, a string, a
// scope, a nested buffer, a query list, an IOF channel, an allocation
// directive and (if none of those) a list of spawn applications.
//
// Invariants: false and an error, never a read past the end (ASan); a
// key/value that reads writes again, and what it writes reads back to the
// same bytes once more (write(read(write(read(x)))) == write(read(x))).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "protocol/openpmix.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace pmix;
using namespace pmix::openpmix;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const auto type = (data[0] & 1) != 0 ? buffer_type::fully_desc : buffer_type::non_desc;
  const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  reader r{bytes, type};
  for (int rounds = 0; rounds < 64 && !r.at_end(); ++rounds) {
    std::string key;
    value v;
    if (r.kval(key, v)) {
      writer once{type};
      if (!once.try_kval(key, v)) continue;  // a type read but not carried back (none today)
      const auto first = once.bytes();
      reader again{first, type};
      std::string key2;
      value v2;
      if (!again.kval(key2, v2) || !again.at_end() || key2 != key) std::abort();
      writer twice{type};
      if (!twice.try_kval(key2, v2) || twice.bytes() != first) std::abort();
      continue;
    }
    if (r.error().empty()) std::abort();  // a refusal always says why
    // Something else, from the start of what is left.
    std::uint8_t cmd;
    std::vector<proc_id> procs;
    info_list infos;
    std::string text;
    std::uint8_t scope;
    std::vector<std::pair<std::vector<std::string>, info_list>> queries;
    std::vector<app> apps;
    std::uint16_t channels;
    reader rest{bytes, type};
    if (!rest.command(cmd) && !rest.procs(procs) && !rest.infos(infos) && !rest.string(text) && !rest.scope(scope) &&
        !rest.buffer(text) && !rest.queries(queries) && !rest.iof_channel(channels) && !rest.alloc_directive(scope)) {
      // An application list that reads writes back as it was read.
      reader as_apps{bytes, type};
      if (as_apps.apps(apps)) {
        writer w{type};
        w.apps(apps);
        reader back{w.bytes(), type};
        std::vector<app> again;
        if (!back.apps(again) || !back.at_end() || again.size() != apps.size()) std::abort();
        writer w2{type};
        w2.apps(again);
        if (w2.bytes() != w.bytes()) std::abort();
      }
    }
    break;
  }
  return 0;
}
