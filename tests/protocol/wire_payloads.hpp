// Wire-level test inputs shared by codec_test and messages_test: one payload
// per field of wire::Value's `data` oneof (a payload must match its data
// type), and values nested as deep as asked.
#pragma once

#include <pmix_common.h>

#include <vector>

#include "protocol/pmix.pb.h"

namespace pmix::test {

struct wire_payload {
  const char* name;
  void (*set)(wire::Value&);
};

inline const std::vector<wire_payload>& wire_payloads() {
  static const std::vector<wire_payload> all = {
      {"flag", [](wire::Value& w) { w.set_flag(true); }},
      {"integer", [](wire::Value& w) { w.set_integer(1); }},
      {"unsigned", [](wire::Value& w) { w.set_unsigned_(1); }},
      {"real", [](wire::Value& w) { w.set_real(1.0); }},
      {"bytes", [](wire::Value& w) { w.set_bytes("b"); }},
      {"empty bytes", [](wire::Value& w) { w.set_bytes(""); }},
      {"proc", [](wire::Value& w) { w.mutable_proc()->set_rank(1); }},
      {"timeval", [](wire::Value& w) { w.mutable_timeval()->set_sec(1); }},
      {"array", [](wire::Value& w) { w.mutable_array()->set_type(PMIX_UINT8); }},
      {"envar", [](wire::Value& w) { w.mutable_envar()->set_name("n"); }},
      {"proc_info", [](wire::Value& w) { w.mutable_proc_info()->set_pid(1); }},
      {"info", [](wire::Value& w) { w.mutable_info()->set_key("k"); }},
  };
  return all;
}

// A value nested `depth` levels deep through data arrays of data arrays.
inline wire::Value nested_arrays(int depth) {
  wire::Value leaf;
  leaf.set_type(PMIX_UINT8);
  leaf.set_unsigned_(7);
  for (int i = 0; i < depth; ++i) {
    wire::Value outer;
    outer.set_type(PMIX_DATA_ARRAY);
    outer.mutable_array()->set_type(i == 0 ? PMIX_UINT8 : PMIX_DATA_ARRAY);
    *outer.mutable_array()->add_elements() = leaf;
    leaf = std::move(outer);
  }
  return leaf;
}

}  // namespace pmix::test
