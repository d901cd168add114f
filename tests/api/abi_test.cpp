// Compares our public headers with the installed OpenPMIx 4.2.2 headers:
// every constant we define (value), every struct we define (size, member
// offsets and sizes), and which names exist on only one side.
#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "tests/api/abi_entry.h"
#include "tests/api/abi_names.inc"

namespace {

// Constants of later OpenPMIx releases (issue 37), with the values its
// master gives them: with the keys below, the only constants ours alone.
const std::map<std::string, long long> kLaterValues = {
    {"PMIX_DEVICE", 70},
    {"PMIX_RESBLOCK_DIRECTIVE", 71},
    {"PMIX_RESOURCE_UNIT", 72},
    {"PMIX_NODE_PID", 73},
    {"PMIX_REGEX2", 74},
    {"PMIX_ALLOC_INHERIT", 75},
    {"PMIX_ALLOC_INHERIT_NONE", 1},
    {"PMIX_ALLOC_INHERIT_CHILD", 2},
    {"PMIX_ALLOC_INHERIT_DEFAULT", 3},
    {"PMIX_ALLOC_INHERIT_CHILD_DEFAULT", 4},
    {"PMIX_RESOURCE_BLOCK_DEFINE", 1},
    {"PMIX_RESOURCE_BLOCK_EXTEND", 2},
    {"PMIX_RESOURCE_BLOCK_REMOVE", 3},
    {"PMIX_RESOURCE_BLOCK_DELETE", 4},
    {"PMIX_RESOURCE_BLOCK_EXTERNAL", 128},
    {"PMIX_DEVTYPE_MEMORY", 0x40},
    {"PMIX_DEVTYPE_CORE", 0x80},
    {"PMIX_DEVTYPE_HWT", 0x100},
    {"PMIX_DEVTYPE_CPU", 0x200},
    {"PMIX_DEVTYPE_NODE", 0x400},
    {"PMIX_ERR_LOST_PRECISION", -202},
    {"PMIX_ERR_CHANGE_SIGN", -203},
    {"PMIX_ERR_IOF_XOFF", -405},
};
// Attribute keys of later releases.
const std::set<std::string> kLaterKeys = {
    "PMIX_SERVER_SYS_CONTROLLER",      "PMIX_SERVER_ALLOW_FOREIGN_TOOLS",
    "PMIX_ALLOW_CLIENT_CLONES",        "PMIX_EXTERNAL_AUX_EVENT_BASE",
    "PMIX_MYSERVER_ALT_URIS",          "PMIX_PROGRESS_THREAD_FLUSH",
    "PMIX_PROGRESS_THREAD_NAME",
};
// Names newer than OpenPMIx 4.2.2: the only constants allowed to be ours
// alone; those of the table (not the enum constants, whose values
// abi_layout_test checks) are the keys and kLaterValues.
const std::set<std::string> kNewerThan422 = [] {
  std::set<std::string> names = kLaterKeys;
  for (const auto& [name, value] : kLaterValues) names.insert(name);
  names.insert("PMIX_GROUP_NONE");
  names.insert("PMIX_GROUP_CANCEL");
  names.insert("PMIX_CXX_SERVER_MODULE_SLOTS");  // ours: how far a host's module goes
  names.insert("PMIX_CXX_HOST_FREES_FENCE_DATA");  // ours: the host frees fence_nb's data
  names.insert("PMIX_CXX_PROGRESS_FD");  // ours: the host's loop runs the server
  return names;
}();
// Structs that grew after 4.2.2: the host module's four OpenPMIx 6.0 slots
// (read only when the host says its struct has them, pmix_server.h).
const std::set<std::string> kGrown = {"sizeof(pmix_server_module_t)"};
// Types and struct members of later releases: ours alone, not compared.
const std::set<std::string> kLaterTypes = {
    "pmix_device_t", "pmix_resource_unit_t", "pmix_node_pid_t", "pmix_regex2_t",
    "pmix_alloc_inheritance_t", "pmix_resource_block_directive_t",
    "pmix_server_tool_connection2_fn_t", "pmix_server_log2_fn_t", "pmix_server_session_control_fn_t",
    "pmix_server_resource_block_fn_t",
};
const std::set<std::string> kLaterMembers = {
    "pmix_value_t.data.rbdir",   "pmix_value_t.data.inheritance", "pmix_value_t.data.device",
    "pmix_value_t.data.resunit", "pmix_value_t.data.nodepid",     "pmix_value_t.data.regex2",
    "pmix_server_module_t.tool_connected2", "pmix_server_module_t.log2",
    "pmix_server_module_t.session_control", "pmix_server_module_t.resource_block",
};
// Functions we declare that 4.2.2 does not: a newer OpenPMIx server
// extension, and the buffer calls of newer releases (4.2.2 has macros).
// Functions ours declares and 4.2.2's does not: each must be one a newer
// OpenPMIx declares (issue 37: tests/install/openpmix_functions, the lists
// read from its tags v4.2.9, v5.0.11, v6.1.0 and master).
std::set<std::string> newer_functions() {
  std::set<std::string> out;
  for (const char* tag : {"v4.2.9", "v5.0.11", "v6.1.0", "master"}) {
    std::ifstream in(std::string{"tests/install/openpmix_functions/"} + tag + ".txt");
    REQUIRE_MESSAGE(in, tag);
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && line[0] != '#') out.insert(line);
  }
  return out;
}

// 4.2.2 macros we deliberately leave out: none (PMIx_Heartbeat() is there
// since PMIx_Process_monitor_nb is).
const std::set<std::string> kOmittedMacros = {};

std::set<std::string> to_set(const char* const* names) {
  std::set<std::string> out;
  for (; *names != nullptr; ++names) out.insert(*names);
  return out;
}

std::string describe(const abi_entry& e) {
  switch (e.kind) {
    case ABI_STRING: return std::string("\"") + e.text + "\"";
    case ABI_ABSENT: return "(not defined)";
    default: return std::to_string(e.as_signed) + " / " + std::to_string(e.as_unsigned);
  }
}

bool same(const abi_entry& a, const abi_entry& b) {
  if (a.kind != b.kind) return false;
  if (a.kind == ABI_STRING) return std::strcmp(a.text, b.text) == 0;
  return a.as_signed == b.as_signed && a.as_unsigned == b.as_unsigned;
}

}  // namespace

TEST_SUITE("abi") {
  TEST_CASE("both tables were built from the same generated entries") {
    REQUIRE(abi_ours_count == abi_openpmix_count);
    // ~530 attribute keys, ~400 other constants, ~390 struct sizes and offsets
    CHECK(abi_ours_count > 1300);
  }

  TEST_CASE("every constant, struct size and member offset equals OpenPMIx 4.2.2") {
    REQUIRE(abi_ours_count == abi_openpmix_count);
    int mismatches = 0;
    int compared = 0;
    for (size_t k = 0; k < abi_ours_count; ++k) {
      const abi_entry& ours = abi_ours[k];
      const abi_entry& theirs = abi_openpmix[k];
      REQUIRE(std::strcmp(ours.name, theirs.name) == 0);
      if (theirs.kind == ABI_ABSENT && kNewerThan422.count(ours.name) != 0) {
        continue;
      }
      ++compared;
      if (kGrown.count(ours.name) != 0) {
        CHECK_MESSAGE(ours.as_signed > theirs.as_signed, ours.name);
        continue;
      }
      if (!same(ours, theirs)) {
        ++mismatches;
        MESSAGE(std::string(ours.name) << ": ours " << describe(ours) << ", OpenPMIx " << describe(theirs));
      }
    }
    CHECK(mismatches == 0);
    // + ours alone: PMIX_CXX_SERVER_MODULE_SLOTS, PMIX_CXX_HOST_FREES_FENCE_DATA,
    // PMIX_CXX_PROGRESS_FD.
    CHECK(compared + static_cast<int>(kLaterKeys.size() + kLaterValues.size() + 3) ==
          static_cast<int>(abi_ours_count));
  }

  TEST_CASE("the newer-than-4.2.2 keys have the strings later releases use") {
    std::map<std::string, std::string> keys;
    for (size_t k = 0; k < abi_ours_count; ++k) {
      if (kLaterKeys.count(abi_ours[k].name) != 0) {
        REQUIRE(abi_ours[k].kind == ABI_STRING);
        keys[abi_ours[k].name] = abi_ours[k].text;
      }
    }
    CHECK(keys["PMIX_SERVER_SYS_CONTROLLER"] == "pmix.srv.ctrlr");
    CHECK(keys["PMIX_SERVER_ALLOW_FOREIGN_TOOLS"] == "pmix.srvr.ftools");
    CHECK(keys["PMIX_ALLOW_CLIENT_CLONES"] == "pmix.allow.clones");
    CHECK(keys["PMIX_EXTERNAL_AUX_EVENT_BASE"] == "pmix.evaux");
    CHECK(keys["PMIX_MYSERVER_ALT_URIS"] == "pmix.mysrvr.alturis");
    CHECK(keys["PMIX_PROGRESS_THREAD_FLUSH"] == "pmix.evflush");
    CHECK(keys["PMIX_PROGRESS_THREAD_NAME"] == "pmix.pthrdnm");
  }

  TEST_CASE("the constants of later releases have master's values") {
    std::map<std::string, long long> ours;
    for (size_t k = 0; k < abi_ours_count; ++k)
      if (kLaterValues.count(abi_ours[k].name) != 0 && abi_ours[k].kind == ABI_INTEGER)
        ours[abi_ours[k].name] = abi_ours[k].as_signed;
    for (const auto& [name, value] : kLaterValues) CHECK_MESSAGE(ours[name] == value, name);
  }

  TEST_CASE("no 4.2.2 constant, type or macro is missing from our headers") {
    CHECK(to_set(kConstantsOnlyInOpenPMIx).empty());
    CHECK(to_set(kTypesOnlyInOpenPMIx).empty());
    CHECK(to_set(kMacrosOnlyInOpenPMIx) == kOmittedMacros);
    for (const auto& name : to_set(kConstantsOnlyInOpenPMIx)) MESSAGE("missing constant " << name);
    for (const auto& name : to_set(kTypesOnlyInOpenPMIx)) MESSAGE("missing type " << name);
  }

  TEST_CASE("only the listed newer names are ours alone") {
    CHECK(to_set(kConstantsOnlyInOurs) == kNewerThan422);
    CHECK(to_set(kMacrosOnlyInOurs).empty());
    CHECK(to_set(kTypesOnlyInOurs) == kLaterTypes);
    CHECK(to_set(kMembersOnlyInOurs) == kLaterMembers);
    const auto newer = newer_functions();
    CHECK(newer.size() >= 324);
    for (const auto& name : to_set(abi_functions_only_in_ours))
      CHECK_MESSAGE(newer.count(name) == 1, name << " is ours alone: no OpenPMIx release declares it");
  }

  TEST_CASE("every struct of 4.2.2 is compared and the signatures were checked") {
    std::set<std::string> structs = to_set(kStructsChecked);
    for (const char* name : {"pmix_value_t", "pmix_info_t", "pmix_proc_t", "pmix_server_module_t",
                             "pmix_data_buffer_t", "pmix_node_stats_t", "pmix_regattr_t"}) {
      CHECK_MESSAGE(structs.count(name) == 1, std::string(name));
    }
    // one static assertion per declared function and per callback typedef
    CHECK(abi_signatures_checked >= 100);
  }

  TEST_CASE("every tool function of 4.2.2 is declared, with its 4.2.2 signature") {
    // Declared means checked: each of ours has a static assertion above.
    const auto missing = to_set(abi_functions_only_in_openpmix);
    for (const char* name : {"PMIx_tool_init", "PMIx_tool_finalize", "PMIx_tool_attach_to_server",
                             "PMIx_tool_connect_to_server", "PMIx_tool_disconnect", "PMIx_tool_get_servers",
                             "PMIx_tool_set_server"})
      CHECK_MESSAGE(missing.count(name) == 0, name);
    for (const auto& name : missing) {
      CHECK_MESSAGE(name.rfind("PMIx_tool_", 0) != 0, name);
      MESSAGE("not declared yet: " << name);
    }
  }
}
