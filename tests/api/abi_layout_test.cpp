// The sizes the rest of the project relies on, stated explicitly (the
// generated comparison in abi_test.cpp covers everything else).
#include <doctest/doctest.h>
#include <pmix_server.h>

#include <cstddef>

TEST_SUITE("abi_layout") {
  TEST_CASE("core structs have the OpenPMIx 4.2.2 sizes") {
    CHECK(sizeof(pmix_value_t) == 32);
    CHECK(offsetof(pmix_value_t, type) == 0);
    CHECK(offsetof(pmix_value_t, data) == 8);
    CHECK(sizeof(pmix_info_t) == 552);
    CHECK(offsetof(pmix_info_t, key) == 0);
    CHECK(offsetof(pmix_info_t, flags) == 512);
    CHECK(offsetof(pmix_info_t, value) == 520);
    CHECK(sizeof(pmix_proc_t) == 260);
    CHECK(offsetof(pmix_proc_t, rank) == 256);
    // 4.2.2's 28 slots (224 bytes) and OpenPMIx 6.0's four more
    CHECK(sizeof(pmix_server_module_t) == 32 * sizeof(void*));
  }

  TEST_CASE("the 28 server module slots are in the 4.2.2 order") {
    const size_t slot = sizeof(void*);
    CHECK(offsetof(pmix_server_module_t, client_connected) == 0 * slot);
    CHECK(offsetof(pmix_server_module_t, client_finalized) == 1 * slot);
    CHECK(offsetof(pmix_server_module_t, abort) == 2 * slot);
    CHECK(offsetof(pmix_server_module_t, fence_nb) == 3 * slot);
    CHECK(offsetof(pmix_server_module_t, direct_modex) == 4 * slot);
    CHECK(offsetof(pmix_server_module_t, publish) == 5 * slot);
    CHECK(offsetof(pmix_server_module_t, lookup) == 6 * slot);
    CHECK(offsetof(pmix_server_module_t, unpublish) == 7 * slot);
    CHECK(offsetof(pmix_server_module_t, spawn) == 8 * slot);
    CHECK(offsetof(pmix_server_module_t, connect) == 9 * slot);
    CHECK(offsetof(pmix_server_module_t, disconnect) == 10 * slot);
    CHECK(offsetof(pmix_server_module_t, register_events) == 11 * slot);
    CHECK(offsetof(pmix_server_module_t, deregister_events) == 12 * slot);
    CHECK(offsetof(pmix_server_module_t, listener) == 13 * slot);
    CHECK(offsetof(pmix_server_module_t, notify_event) == 14 * slot);
    CHECK(offsetof(pmix_server_module_t, query) == 15 * slot);
    CHECK(offsetof(pmix_server_module_t, tool_connected) == 16 * slot);
    CHECK(offsetof(pmix_server_module_t, log) == 17 * slot);
    CHECK(offsetof(pmix_server_module_t, allocate) == 18 * slot);
    CHECK(offsetof(pmix_server_module_t, job_control) == 19 * slot);
    CHECK(offsetof(pmix_server_module_t, monitor) == 20 * slot);
    CHECK(offsetof(pmix_server_module_t, get_credential) == 21 * slot);
    CHECK(offsetof(pmix_server_module_t, validate_credential) == 22 * slot);
    CHECK(offsetof(pmix_server_module_t, iof_pull) == 23 * slot);
    CHECK(offsetof(pmix_server_module_t, push_stdin) == 24 * slot);
    CHECK(offsetof(pmix_server_module_t, group) == 25 * slot);
    CHECK(offsetof(pmix_server_module_t, fabric) == 26 * slot);
    CHECK(offsetof(pmix_server_module_t, client_connected2) == 27 * slot);
    // OpenPMIx 6.0's (and master's) order after them
    CHECK(offsetof(pmix_server_module_t, tool_connected2) == 28 * slot);
    CHECK(offsetof(pmix_server_module_t, log2) == 29 * slot);
    CHECK(offsetof(pmix_server_module_t, session_control) == 30 * slot);
    CHECK(offsetof(pmix_server_module_t, resource_block) == 31 * slot);
  }

  TEST_CASE("later releases' enum constants and types keep the value union's size") {
    CHECK(PMIX_GROUP_CONSTRUCT == 0);
    CHECK(PMIX_GROUP_DESTRUCT == 1);
    CHECK(PMIX_GROUP_NONE == 2);
    CHECK(PMIX_GROUP_CANCEL == 3);
    CHECK(sizeof(pmix_group_operation_t) == sizeof(int));
    // master's layouts of the new types
    CHECK(sizeof(pmix_device_t) == 24);
    CHECK(sizeof(pmix_resource_unit_t) == 16);
    CHECK(sizeof(pmix_node_pid_t) == 16);
    CHECK(offsetof(pmix_node_pid_t, pid) == 12);
    CHECK(sizeof(pmix_regex2_t) == 24);
  }
}
