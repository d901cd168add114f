/* Issue 37: the function forms of the helper macros
 * (api/include/pmix_function_macros.h), selected by defining
 * PMIX_CXX_FUNCTION_MACROS before <pmix.h> (the build passes it with -D).
 * Strict C11 through libpmix.so.2. First, each redefined macro's expansion
 * names the exported function OpenPMIx 5.0's form calls; then each macro is
 * used and its result checked: values, statuses, and the pointers 5.0's
 * forms set to NULL. Exit status 0 on success; each failed check prints its
 * line. */
#ifndef PMIX_CXX_FUNCTION_MACROS
#error "build this test with -DPMIX_CXX_FUNCTION_MACROS"
#endif
#include <pmix.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/api/c_expect.h"

#ifndef PMIX_FUNCTION_MACROS_H
#error "pmix.h did not include pmix_function_macros.h"
#endif
#ifdef PMIx_Heartbeat
#error "PMIx_Heartbeat is still a macro"
#endif

#define STR(x) #x
#define XSTR(x) STR(x)

struct expansion {
    const char *macro;
    const char *text;     /* the macro's expansion with its parameter names */
    const char *function; /* the exported function it must call */
};

static const struct expansion expansions[] = {
    {"PMIX_LOAD_KEY", XSTR(PMIX_LOAD_KEY(a, b)), "PMIx_Load_key"},
    {"PMIX_CHECK_KEY", XSTR(PMIX_CHECK_KEY(a, b)), "PMIx_Check_key"},
    {"PMIX_CHECK_RESERVED_KEY", XSTR(PMIX_CHECK_RESERVED_KEY(a)), "PMIx_Check_reserved_key"},
    {"PMIX_LOAD_NSPACE", XSTR(PMIX_LOAD_NSPACE(a, b)), "PMIx_Load_nspace"},
    {"PMIX_CHECK_NSPACE", XSTR(PMIX_CHECK_NSPACE(a, b)), "PMIx_Check_nspace"},
    {"PMIX_NSPACE_INVALID", XSTR(PMIX_NSPACE_INVALID(a)), "PMIx_Nspace_invalid"},
    {"PMIX_LOAD_PROCID", XSTR(PMIX_LOAD_PROCID(a, b, c)), "PMIx_Load_procid"},
    {"PMIX_XFER_PROCID", XSTR(PMIX_XFER_PROCID(a, b)), "PMIx_Xfer_procid"},
    {"PMIX_PROCID_XFER", XSTR(PMIX_PROCID_XFER(a, b)), "PMIx_Xfer_procid"},
    {"PMIX_CHECK_PROCID", XSTR(PMIX_CHECK_PROCID(a, b)), "PMIx_Check_procid"},
    {"PMIX_CHECK_RANK", XSTR(PMIX_CHECK_RANK(a, b)), "PMIx_Check_rank"},
    {"PMIX_PROCID_INVALID", XSTR(PMIX_PROCID_INVALID(a)), "PMIx_Procid_invalid"},
    {"PMIX_ARGV_COUNT", XSTR(PMIX_ARGV_COUNT(r, a)), "PMIx_Argv_count"},
    {"PMIX_ARGV_APPEND", XSTR(PMIX_ARGV_APPEND(r, a, b)), "PMIx_Argv_append_nosize"},
    {"PMIX_ARGV_PREPEND", XSTR(PMIX_ARGV_PREPEND(r, a, b)), "PMIx_Argv_prepend_nosize"},
    {"PMIX_ARGV_APPEND_UNIQUE", XSTR(PMIX_ARGV_APPEND_UNIQUE(r, a, b)), "PMIx_Argv_append_unique_nosize"},
    {"PMIX_ARGV_FREE", XSTR(PMIX_ARGV_FREE(a)), "PMIx_Argv_free"},
    {"PMIX_ARGV_SPLIT", XSTR(PMIX_ARGV_SPLIT(a, b, c)), "PMIx_Argv_split"},
    {"PMIX_ARGV_JOIN", XSTR(PMIX_ARGV_JOIN(a, b, c)), "PMIx_Argv_join"},
    {"PMIX_ARGV_COPY", XSTR(PMIX_ARGV_COPY(a, b)), "PMIx_Argv_copy"},
    {"PMIX_SETENV", XSTR(PMIX_SETENV(r, a, b, c)), "PMIx_Setenv"},
    {"PMIX_VALUE_CONSTRUCT", XSTR(PMIX_VALUE_CONSTRUCT(m)), "PMIx_Value_construct"},
    {"PMIX_VALUE_DESTRUCT", XSTR(PMIX_VALUE_DESTRUCT(m)), "PMIx_Value_destruct"},
    {"PMIX_VALUE_CREATE", XSTR(PMIX_VALUE_CREATE(m, n)), "PMIx_Value_create"},
    {"PMIX_VALUE_RELEASE", XSTR(PMIX_VALUE_RELEASE(m)), "PMIx_Value_free"},
    {"PMIX_VALUE_FREE", XSTR(PMIX_VALUE_FREE(m, n)), "PMIx_Value_free"},
    {"PMIX_CHECK_TRUE", XSTR(PMIX_CHECK_TRUE(a)), "PMIx_Value_true"},
    {"PMIX_CHECK_BOOL", XSTR(PMIX_CHECK_BOOL(a)), "PMIx_Value_true"},
    {"PMIX_VALUE_LOAD", XSTR(PMIX_VALUE_LOAD(v, d, t)), "PMIx_Value_load"},
    {"PMIX_VALUE_UNLOAD", XSTR(PMIX_VALUE_UNLOAD(r, k, d, s)), "PMIx_Value_unload"},
    {"PMIX_VALUE_XFER", XSTR(PMIX_VALUE_XFER(r, v, s)), "PMIx_Value_xfer"},
    {"PMIX_VALUE_XFER_DIRECT", XSTR(PMIX_VALUE_XFER_DIRECT(r, v, s)), "PMIx_Value_xfer"},
    {"PMIX_INFO_CONSTRUCT", XSTR(PMIX_INFO_CONSTRUCT(m)), "PMIx_Info_construct"},
    {"PMIX_INFO_DESTRUCT", XSTR(PMIX_INFO_DESTRUCT(m)), "PMIx_Info_destruct"},
    {"PMIX_INFO_CREATE", XSTR(PMIX_INFO_CREATE(m, n)), "PMIx_Info_create"},
    {"PMIX_INFO_FREE", XSTR(PMIX_INFO_FREE(m, n)), "PMIx_Info_free"},
    {"PMIX_INFO_REQUIRED", XSTR(PMIX_INFO_REQUIRED(m)), "PMIx_Info_required"},
    {"PMIX_INFO_OPTIONAL", XSTR(PMIX_INFO_OPTIONAL(m)), "PMIx_Info_optional"},
    {"PMIX_INFO_IS_REQUIRED", XSTR(PMIX_INFO_IS_REQUIRED(m)), "PMIx_Info_is_required"},
    {"PMIX_INFO_IS_OPTIONAL", XSTR(PMIX_INFO_IS_OPTIONAL(m)), "PMIx_Info_is_optional"},
    {"PMIX_INFO_PROCESSED", XSTR(PMIX_INFO_PROCESSED(m)), "PMIx_Info_processed"},
    {"PMIX_INFO_WAS_PROCESSED", XSTR(PMIX_INFO_WAS_PROCESSED(m)), "PMIx_Info_was_processed"},
    {"PMIX_INFO_SET_END", XSTR(PMIX_INFO_SET_END(m)), "PMIx_Info_set_end"},
    {"PMIX_INFO_IS_END", XSTR(PMIX_INFO_IS_END(m)), "PMIx_Info_is_end"},
    {"PMIX_INFO_SET_QUALIFIER", XSTR(PMIX_INFO_SET_QUALIFIER(i)), "PMIx_Info_qualifier"},
    {"PMIX_INFO_IS_QUALIFIER", XSTR(PMIX_INFO_IS_QUALIFIER(i)), "PMIx_Info_is_qualifier"},
    {"PMIX_INFO_SET_PERSISTENT", XSTR(PMIX_INFO_SET_PERSISTENT(ii)), "PMIx_Info_persistent"},
    {"PMIX_INFO_IS_PERSISTENT", XSTR(PMIX_INFO_IS_PERSISTENT(ii)), "PMIx_Info_is_persistent"},
    {"PMIX_INFO_LOAD", XSTR(PMIX_INFO_LOAD(i, k, d, t)), "PMIx_Info_load"},
    {"PMIX_INFO_XFER", XSTR(PMIX_INFO_XFER(d, s)), "PMIx_Info_xfer"},
    {"PMIX_INFO_TRUE", XSTR(PMIX_INFO_TRUE(m)), "PMIx_Info_true"},
    {"PMIX_INFO_LIST_START", XSTR(PMIX_INFO_LIST_START(p)), "PMIx_Info_list_start"},
    {"PMIX_INFO_LIST_ADD", XSTR(PMIX_INFO_LIST_ADD(r, p, a, v, t)), "PMIx_Info_list_add"},
    {"PMIX_INFO_LIST_INSERT", XSTR(PMIX_INFO_LIST_INSERT(r, p, i)), "PMIx_Info_list_insert"},
    {"PMIX_INFO_LIST_XFER", XSTR(PMIX_INFO_LIST_XFER(r, p, a)), "PMIx_Info_list_xfer"},
    {"PMIX_INFO_LIST_CONVERT", XSTR(PMIX_INFO_LIST_CONVERT(r, p, m)), "PMIx_Info_list_convert"},
    {"PMIX_INFO_LIST_RELEASE", XSTR(PMIX_INFO_LIST_RELEASE(p)), "PMIx_Info_list_release"},
    {"PMIX_PDATA_LOAD", XSTR(PMIX_PDATA_LOAD(m, p, k, v, t)), "PMIx_Value_load"},
    {"PMIX_PDATA_XFER", XSTR(PMIX_PDATA_XFER(d, s)), "PMIx_Value_xfer"},
    {"PMIX_PDATA_CONSTRUCT", XSTR(PMIX_PDATA_CONSTRUCT(m)), "PMIx_Pdata_construct"},
    {"PMIX_PDATA_DESTRUCT", XSTR(PMIX_PDATA_DESTRUCT(m)), "PMIx_Pdata_destruct"},
    {"PMIX_PDATA_CREATE", XSTR(PMIX_PDATA_CREATE(m, n)), "PMIx_Pdata_create"},
    {"PMIX_PDATA_FREE", XSTR(PMIX_PDATA_FREE(m, n)), "PMIx_Pdata_free"},
    {"PMIX_PDATA_RELEASE", XSTR(PMIX_PDATA_RELEASE(m)), "PMIx_Pdata_free"},
    {"PMIX_TOPOLOGY_CONSTRUCT", XSTR(PMIX_TOPOLOGY_CONSTRUCT(m)), "PMIx_Topology_construct"},
    {"PMIX_TOPOLOGY_CREATE", XSTR(PMIX_TOPOLOGY_CREATE(m, n)), "PMIx_Topology_create"},
    {"PMIX_TOPOLOGY_DESTRUCT", XSTR(PMIX_TOPOLOGY_DESTRUCT(x)), "PMIx_Topology_destruct"},
    {"PMIX_CPUSET_CONSTRUCT", XSTR(PMIX_CPUSET_CONSTRUCT(m)), "PMIx_Cpuset_construct"},
    {"PMIX_CPUSET_CREATE", XSTR(PMIX_CPUSET_CREATE(m, n)), "PMIx_Cpuset_create"},
    {"PMIX_COORD_CREATE", XSTR(PMIX_COORD_CREATE(m, n, d)), "PMIx_Coord_create"},
    {"PMIX_COORD_CONSTRUCT", XSTR(PMIX_COORD_CONSTRUCT(m)), "PMIx_Coord_construct"},
    {"PMIX_COORD_DESTRUCT", XSTR(PMIX_COORD_DESTRUCT(m)), "PMIx_Coord_destruct"},
    {"PMIX_COORD_FREE", XSTR(PMIX_COORD_FREE(m, n)), "PMIx_Coord_free"},
    {"PMIX_GEOMETRY_CONSTRUCT", XSTR(PMIX_GEOMETRY_CONSTRUCT(m)), "PMIx_Geometry_construct"},
    {"PMIX_GEOMETRY_DESTRUCT", XSTR(PMIX_GEOMETRY_DESTRUCT(m)), "PMIx_Geometry_destruct"},
    {"PMIX_GEOMETRY_CREATE", XSTR(PMIX_GEOMETRY_CREATE(m, n)), "PMIx_Geometry_create"},
    {"PMIX_GEOMETRY_FREE", XSTR(PMIX_GEOMETRY_FREE(m, n)), "PMIx_Geometry_free"},
    {"PMIX_DEVICE_DIST_CONSTRUCT", XSTR(PMIX_DEVICE_DIST_CONSTRUCT(m)), "PMIx_Device_distance_construct"},
    {"PMIX_DEVICE_DIST_DESTRUCT", XSTR(PMIX_DEVICE_DIST_DESTRUCT(m)), "PMIx_Device_distance_destruct"},
    {"PMIX_DEVICE_DIST_CREATE", XSTR(PMIX_DEVICE_DIST_CREATE(m, n)), "PMIx_Device_distance_create"},
    {"PMIX_DEVICE_DIST_FREE", XSTR(PMIX_DEVICE_DIST_FREE(m, n)), "PMIx_Device_distance_free"},
    {"PMIX_BYTE_OBJECT_CONSTRUCT", XSTR(PMIX_BYTE_OBJECT_CONSTRUCT(m)), "PMIx_Byte_object_construct"},
    {"PMIX_BYTE_OBJECT_DESTRUCT", XSTR(PMIX_BYTE_OBJECT_DESTRUCT(m)), "PMIx_Byte_object_destruct"},
    {"PMIX_BYTE_OBJECT_CREATE", XSTR(PMIX_BYTE_OBJECT_CREATE(m, n)), "PMIx_Byte_object_create"},
    {"PMIX_BYTE_OBJECT_FREE", XSTR(PMIX_BYTE_OBJECT_FREE(m, n)), "PMIx_Byte_object_free"},
    {"PMIX_BYTE_OBJECT_LOAD", XSTR(PMIX_BYTE_OBJECT_LOAD(b, d, s)), "PMIx_Byte_object_load"},
    {"PMIX_ENDPOINT_CONSTRUCT", XSTR(PMIX_ENDPOINT_CONSTRUCT(m)), "PMIx_Endpoint_construct"},
    {"PMIX_ENDPOINT_DESTRUCT", XSTR(PMIX_ENDPOINT_DESTRUCT(m)), "PMIx_Endpoint_destruct"},
    {"PMIX_ENDPOINT_CREATE", XSTR(PMIX_ENDPOINT_CREATE(m, n)), "PMIx_Endpoint_create"},
    {"PMIX_ENDPOINT_FREE", XSTR(PMIX_ENDPOINT_FREE(m, n)), "PMIx_Endpoint_free"},
    {"PMIX_ENVAR_CONSTRUCT", XSTR(PMIX_ENVAR_CONSTRUCT(m)), "PMIx_Envar_construct"},
    {"PMIX_ENVAR_DESTRUCT", XSTR(PMIX_ENVAR_DESTRUCT(m)), "PMIx_Envar_destruct"},
    {"PMIX_ENVAR_CREATE", XSTR(PMIX_ENVAR_CREATE(m, n)), "PMIx_Envar_create"},
    {"PMIX_ENVAR_FREE", XSTR(PMIX_ENVAR_FREE(m, n)), "PMIx_Envar_free"},
    {"PMIX_ENVAR_LOAD", XSTR(PMIX_ENVAR_LOAD(m, e, v, s)), "PMIx_Envar_load"},
    {"PMIX_DATA_BUFFER_CREATE", XSTR(PMIX_DATA_BUFFER_CREATE(m)), "PMIx_Data_buffer_create"},
    {"PMIX_DATA_BUFFER_RELEASE", XSTR(PMIX_DATA_BUFFER_RELEASE(m)), "PMIx_Data_buffer_release"},
    {"PMIX_DATA_BUFFER_CONSTRUCT", XSTR(PMIX_DATA_BUFFER_CONSTRUCT(m)), "PMIx_Data_buffer_construct"},
    {"PMIX_DATA_BUFFER_DESTRUCT", XSTR(PMIX_DATA_BUFFER_DESTRUCT(m)), "PMIx_Data_buffer_destruct"},
    {"PMIX_DATA_BUFFER_LOAD", XSTR(PMIX_DATA_BUFFER_LOAD(b, d, s)), "PMIx_Data_buffer_load"},
    {"PMIX_DATA_BUFFER_UNLOAD", XSTR(PMIX_DATA_BUFFER_UNLOAD(b, d, s)), "PMIx_Data_buffer_unload"},
    {"PMIX_PROC_CREATE", XSTR(PMIX_PROC_CREATE(m, n)), "PMIx_Proc_create"},
    {"PMIX_PROC_CONSTRUCT", XSTR(PMIX_PROC_CONSTRUCT(m)), "PMIx_Proc_construct"},
    {"PMIX_PROC_DESTRUCT", XSTR(PMIX_PROC_DESTRUCT(m)), "PMIx_Proc_destruct"},
    {"PMIX_PROC_FREE", XSTR(PMIX_PROC_FREE(m, n)), "PMIx_Proc_free"},
    {"PMIX_PROC_RELEASE", XSTR(PMIX_PROC_RELEASE(m)), "PMIx_Proc_free"},
    {"PMIX_PROC_LOAD", XSTR(PMIX_PROC_LOAD(m, n, r)), "PMIx_Proc_load"},
    {"PMIX_MULTICLUSTER_NSPACE_CONSTRUCT", XSTR(PMIX_MULTICLUSTER_NSPACE_CONSTRUCT(t, c, n)), "PMIx_Multicluster_nspace_construct"},
    {"PMIX_MULTICLUSTER_NSPACE_PARSE", XSTR(PMIX_MULTICLUSTER_NSPACE_PARSE(t, c, n)), "PMIx_Multicluster_nspace_parse"},
    {"PMIX_PROC_INFO_CREATE", XSTR(PMIX_PROC_INFO_CREATE(m, n)), "PMIx_Proc_info_create"},
    {"PMIX_PROC_INFO_CONSTRUCT", XSTR(PMIX_PROC_INFO_CONSTRUCT(m)), "PMIx_Proc_info_construct"},
    {"PMIX_PROC_INFO_DESTRUCT", XSTR(PMIX_PROC_INFO_DESTRUCT(m)), "PMIx_Proc_info_destruct"},
    {"PMIX_PROC_INFO_FREE", XSTR(PMIX_PROC_INFO_FREE(m, n)), "PMIx_Proc_info_free"},
    {"PMIX_PROC_INFO_RELEASE", XSTR(PMIX_PROC_INFO_RELEASE(m)), "PMIx_Proc_info_free"},
    {"PMIX_PROC_STATS_CONSTRUCT", XSTR(PMIX_PROC_STATS_CONSTRUCT(m)), "PMIx_Proc_stats_construct"},
    {"PMIX_PROC_STATS_DESTRUCT", XSTR(PMIX_PROC_STATS_DESTRUCT(m)), "PMIx_Proc_stats_destruct"},
    {"PMIX_PROC_STATS_CREATE", XSTR(PMIX_PROC_STATS_CREATE(m, n)), "PMIx_Proc_stats_create"},
    {"PMIX_PROC_STATS_FREE", XSTR(PMIX_PROC_STATS_FREE(m, n)), "PMIx_Proc_stats_free"},
    {"PMIX_PROC_STATS_RELEASE", XSTR(PMIX_PROC_STATS_RELEASE(m)), "PMIx_Proc_stats_free"},
    {"PMIX_DISK_STATS_CONSTRUCT", XSTR(PMIX_DISK_STATS_CONSTRUCT(m)), "PMIx_Disk_stats_construct"},
    {"PMIX_DISK_STATS_DESTRUCT", XSTR(PMIX_DISK_STATS_DESTRUCT(m)), "PMIx_Disk_stats_destruct"},
    {"PMIX_DISK_STATS_CREATE", XSTR(PMIX_DISK_STATS_CREATE(m, n)), "PMIx_Disk_stats_create"},
    {"PMIX_DISK_STATS_FREE", XSTR(PMIX_DISK_STATS_FREE(m, n)), "PMIx_Disk_stats_free"},
    {"PMIX_DISK_STATS_RELEASE", XSTR(PMIX_DISK_STATS_RELEASE(m)), "PMIx_Disk_stats_free"},
    {"PMIX_NET_STATS_CONSTRUCT", XSTR(PMIX_NET_STATS_CONSTRUCT(m)), "PMIx_Net_stats_construct"},
    {"PMIX_NET_STATS_DESTRUCT", XSTR(PMIX_NET_STATS_DESTRUCT(m)), "PMIx_Net_stats_destruct"},
    {"PMIX_NET_STATS_CREATE", XSTR(PMIX_NET_STATS_CREATE(m, n)), "PMIx_Net_stats_create"},
    {"PMIX_NET_STATS_FREE", XSTR(PMIX_NET_STATS_FREE(m, n)), "PMIx_Net_stats_free"},
    {"PMIX_NET_STATS_RELEASE", XSTR(PMIX_NET_STATS_RELEASE(m)), "PMIx_Net_stats_free"},
    {"PMIX_NODE_STATS_CONSTRUCT", XSTR(PMIX_NODE_STATS_CONSTRUCT(m)), "PMIx_Node_stats_construct"},
    {"PMIX_NODE_STATS_DESTRUCT", XSTR(PMIX_NODE_STATS_DESTRUCT(m)), "PMIx_Node_stats_destruct"},
    {"PMIX_NODE_STATS_CREATE", XSTR(PMIX_NODE_STATS_CREATE(m, n)), "PMIx_Node_stats_create"},
    {"PMIX_NODE_STATS_FREE", XSTR(PMIX_NODE_STATS_FREE(m, n)), "PMIx_Node_stats_free"},
    {"PMIX_NODE_STATS_RELEASE", XSTR(PMIX_NODE_STATS_RELEASE(m)), "PMIx_Node_stats_free"},
    {"PMIX_APP_CONSTRUCT", XSTR(PMIX_APP_CONSTRUCT(m)), "PMIx_App_construct"},
    {"PMIX_APP_DESTRUCT", XSTR(PMIX_APP_DESTRUCT(m)), "PMIx_App_destruct"},
    {"PMIX_APP_CREATE", XSTR(PMIX_APP_CREATE(m, n)), "PMIx_App_create"},
    {"PMIX_APP_INFO_CREATE", XSTR(PMIX_APP_INFO_CREATE(m, n)), "PMIx_App_info_create"},
    {"PMIX_APP_RELEASE", XSTR(PMIX_APP_RELEASE(m)), "PMIx_App_free"},
    {"PMIX_APP_FREE", XSTR(PMIX_APP_FREE(m, n)), "PMIx_App_free"},
    {"PMIX_QUERY_CONSTRUCT", XSTR(PMIX_QUERY_CONSTRUCT(m)), "PMIx_Query_construct"},
    {"PMIX_QUERY_DESTRUCT", XSTR(PMIX_QUERY_DESTRUCT(m)), "PMIx_Query_destruct"},
    {"PMIX_QUERY_CREATE", XSTR(PMIX_QUERY_CREATE(m, n)), "PMIx_Query_create"},
    {"PMIX_QUERY_QUALIFIERS_CREATE", XSTR(PMIX_QUERY_QUALIFIERS_CREATE(m, n)), "PMIx_Query_qualifiers_create"},
    {"PMIX_QUERY_RELEASE", XSTR(PMIX_QUERY_RELEASE(m)), "PMIx_Query_release"},
    {"PMIX_QUERY_FREE", XSTR(PMIX_QUERY_FREE(m, n)), "PMIx_Query_free"},
    {"PMIX_REGATTR_CONSTRUCT", XSTR(PMIX_REGATTR_CONSTRUCT(a)), "PMIx_Regattr_construct"},
    {"PMIX_REGATTR_LOAD", XSTR(PMIX_REGATTR_LOAD(a, n, k, t, v)), "PMIx_Regattr_load"},
    {"PMIX_REGATTR_DESTRUCT", XSTR(PMIX_REGATTR_DESTRUCT(a)), "PMIx_Regattr_destruct"},
    {"PMIX_REGATTR_CREATE", XSTR(PMIX_REGATTR_CREATE(m, n)), "PMIx_Regattr_create"},
    {"PMIX_REGATTR_FREE", XSTR(PMIX_REGATTR_FREE(m, n)), "PMIx_Regattr_free"},
    {"PMIX_REGATTR_XFER", XSTR(PMIX_REGATTR_XFER(a, b)), "PMIx_Regattr_xfer"},
    {"PMIX_DATA_ARRAY_INIT", XSTR(PMIX_DATA_ARRAY_INIT(m, t)), "PMIx_Data_array_init"},
    {"PMIX_DATA_ARRAY_CONSTRUCT", XSTR(PMIX_DATA_ARRAY_CONSTRUCT(m, n, t)), "PMIx_Data_array_construct"},
    {"PMIX_DATA_ARRAY_DESTRUCT", XSTR(PMIX_DATA_ARRAY_DESTRUCT(m)), "PMIx_Data_array_destruct"},
    {"PMIX_DATA_ARRAY_CREATE", XSTR(PMIX_DATA_ARRAY_CREATE(m, n, t)), "PMIx_Data_array_create"},
    {"PMIX_DATA_ARRAY_FREE", XSTR(PMIX_DATA_ARRAY_FREE(m)), "PMIx_Data_array_free"},
};

static void test_expansions(void)
{
    size_t n = sizeof expansions / sizeof expansions[0];
    EXPECT(n == 157);
    for (size_t i = 0; i < n; ++i) {
        if (strstr(expansions[i].text, expansions[i].function) == NULL) {
            fprintf(stderr, "%s expands to %s, without %s\n", expansions[i].macro, expansions[i].text,
                    expansions[i].function);
            ++failures;
        }
    }
}

static char *text_copy(const char *s) { return strdup(s); }

static void test_ids(void)
{
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_LOAD_KEY(info.key, "my.key");
    EXPECT(strcmp(info.key, "my.key") == 0);
    EXPECT(PMIX_CHECK_KEY(&info, "my.key") && !PMIX_CHECK_KEY(&info, "my.other"));
    EXPECT(PMIX_CHECK_RESERVED_KEY("pmix.job.size") && !PMIX_CHECK_RESERVED_KEY("my.key"));

    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, "job-a");
    EXPECT(strcmp(ns, "job-a") == 0);
    EXPECT(PMIX_CHECK_NSPACE(ns, "job-a") && !PMIX_CHECK_NSPACE(ns, "job-b"));
    EXPECT(PMIX_NSPACE_INVALID("") && !PMIX_NSPACE_INVALID(ns));

    pmix_proc_t a, b, c;
    PMIX_LOAD_PROCID(&a, "job-a", 3);
    EXPECT(strcmp(a.nspace, "job-a") == 0 && a.rank == 3);
    PMIX_XFER_PROCID(&b, &a);
    PMIX_PROCID_XFER(&c, &b);
    EXPECT(PMIX_CHECK_PROCID(&a, &b) && PMIX_CHECK_PROCID(&a, &c) && c.rank == 3);
    EXPECT(PMIX_CHECK_RANK(3, 3) && PMIX_CHECK_RANK(PMIX_RANK_WILDCARD, 5) && !PMIX_CHECK_RANK(3, 4));
    EXPECT(!PMIX_PROCID_INVALID(&a));
    c.rank = PMIX_RANK_INVALID;
    EXPECT(PMIX_PROCID_INVALID(&c));
}

static void test_argv(void)
{
    char **argv = NULL;
    pmix_status_t rc = PMIX_ERROR;
    int count = -1;
    PMIX_ARGV_APPEND(rc, argv, "b");
    EXPECT(rc == PMIX_SUCCESS);
    rc = PMIX_ERROR;
    PMIX_ARGV_PREPEND(rc, argv, "a");
    EXPECT(rc == PMIX_SUCCESS);
    rc = PMIX_ERROR;
    PMIX_ARGV_APPEND_UNIQUE(rc, &argv, "a"); /* there already */
    EXPECT(rc == PMIX_SUCCESS);
    PMIX_ARGV_APPEND_UNIQUE(rc, &argv, "c");
    EXPECT(rc == PMIX_SUCCESS);
    PMIX_ARGV_COUNT(count, argv);
    EXPECT(count == 3);
    char *joined = NULL;
    PMIX_ARGV_JOIN(joined, argv, ':');
    EXPECT(joined != NULL && strcmp(joined, "a:b:c") == 0);
    char **split = NULL;
    PMIX_ARGV_SPLIT(split, joined, ':');
    PMIX_ARGV_COUNT(count, split);
    EXPECT(count == 3 && strcmp(split[2], "c") == 0);
    char **copy = NULL;
    PMIX_ARGV_COPY(copy, argv);
    EXPECT(copy != NULL && copy != argv && strcmp(copy[1], "b") == 0 && copy[3] == NULL);
    /* 5.0's form clears the variable (4.2.2's leaves it dangling). */
    PMIX_ARGV_FREE(argv);
    EXPECT(argv == NULL);
    PMIX_ARGV_FREE(split);
    PMIX_ARGV_FREE(copy);
    EXPECT(split == NULL && copy == NULL);
    free(joined);

    char **env = NULL;
    PMIX_SETENV(rc, "A", "1", &env);
    EXPECT(rc == PMIX_SUCCESS && env != NULL && strcmp(env[0], "A=1") == 0);
    PMIX_SETENV(rc, "A", "2", &env); /* overwrites */
    EXPECT(rc == PMIX_SUCCESS && strcmp(env[0], "A=2") == 0 && env[1] == NULL);
    PMIX_ARGV_FREE(env);
}

static void test_values(void)
{
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    EXPECT(v.type == PMIX_UNDEF);
    EXPECT(PMIX_VALUE_LOAD(&v, "text", PMIX_STRING) == PMIX_SUCCESS);
    EXPECT(v.type == PMIX_STRING && strcmp(v.data.string, "text") == 0);
    pmix_status_t rc = PMIX_ERROR;
    void *data = NULL;
    size_t size = 0;
    PMIX_VALUE_UNLOAD(rc, &v, &data, &size);
    EXPECT(rc == PMIX_SUCCESS && data != NULL && data != v.data.string && strcmp(data, "text") == 0);
    free(data);

    pmix_value_t *copy = NULL;
    rc = PMIX_ERROR;
    PMIX_VALUE_XFER(rc, copy, &v); /* NULL: a new value first */
    EXPECT(rc == PMIX_SUCCESS && copy != NULL && copy->type == PMIX_STRING &&
           strcmp(copy->data.string, "text") == 0 && copy->data.string != v.data.string);
    PMIX_VALUE_RELEASE(copy);
    EXPECT(copy == NULL);

    pmix_value_t direct;
    PMIX_VALUE_CONSTRUCT(&direct);
    rc = PMIX_ERROR;
    PMIX_VALUE_XFER_DIRECT(rc, &direct, &v);
    EXPECT(rc == PMIX_SUCCESS && strcmp(direct.data.string, "text") == 0);
    PMIX_VALUE_DESTRUCT(&direct);
    EXPECT(direct.type == PMIX_UNDEF);
    PMIX_VALUE_DESTRUCT(&v);

    pmix_value_t *values = NULL;
    PMIX_VALUE_CREATE(values, 2);
    EXPECT(values != NULL && values[1].type == PMIX_UNDEF);
    bool yes = true;
    PMIX_VALUE_LOAD(&values[0], &yes, PMIX_BOOL);
    PMIX_VALUE_LOAD(&values[1], "maybe", PMIX_STRING);
    EXPECT(PMIX_CHECK_TRUE(&values[0]) && PMIX_CHECK_BOOL(&values[0]));
    EXPECT(!PMIX_CHECK_TRUE(&values[1]) && !PMIX_CHECK_BOOL(&values[1])); /* not a boolean */
    PMIX_VALUE_FREE(values, 2);
    EXPECT(values == NULL);
}

static void test_infos(void)
{
    pmix_info_t *infos = NULL;
    PMIX_INFO_CREATE(infos, 3);
    EXPECT(infos != NULL && infos[0].value.type == PMIX_UNDEF);
    EXPECT(PMIX_INFO_IS_END(&infos[2]) && !PMIX_INFO_IS_END(&infos[1]));
    uint32_t n = 7;
    PMIX_INFO_LOAD(&infos[0], "n", &n, PMIX_UINT32);
    EXPECT(strcmp(infos[0].key, "n") == 0 && infos[0].value.data.uint32 == 7);
    PMIX_INFO_XFER(&infos[1], &infos[0]);
    EXPECT(strcmp(infos[1].key, "n") == 0 && infos[1].value.data.uint32 == 7);
    PMIX_INFO_LOAD(&infos[1], "flag", "yes", PMIX_STRING);
    EXPECT(PMIX_INFO_TRUE(&infos[1]) && !PMIX_INFO_TRUE(&infos[0])); /* a number is not a boolean */
    PMIX_INFO_FREE(infos, 3);
    EXPECT(infos == NULL);

    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    EXPECT(info.flags == 0 && info.value.type == PMIX_UNDEF && PMIX_INFO_TRUE(&info)); /* presence */
    PMIX_INFO_REQUIRED(&info);
    EXPECT(PMIX_INFO_IS_REQUIRED(&info) && !PMIX_INFO_IS_OPTIONAL(&info));
    PMIX_INFO_OPTIONAL(&info);
    EXPECT(PMIX_INFO_IS_OPTIONAL(&info) && !PMIX_INFO_IS_REQUIRED(&info));
    EXPECT(!PMIX_INFO_WAS_PROCESSED(&info));
    PMIX_INFO_PROCESSED(&info);
    EXPECT(PMIX_INFO_WAS_PROCESSED(&info));
    PMIX_INFO_SET_END(&info);
    EXPECT(PMIX_INFO_IS_END(&info));
    EXPECT(!PMIX_INFO_IS_QUALIFIER(&info));
    PMIX_INFO_SET_QUALIFIER(&info);
    EXPECT(PMIX_INFO_IS_QUALIFIER(&info));
    bool no = false;
    PMIX_INFO_LOAD(&info, "b", &no, PMIX_BOOL);
    EXPECT(!PMIX_INFO_TRUE(&info));
    PMIX_INFO_DESTRUCT(&info);
    EXPECT(info.value.type == PMIX_UNDEF);

    /* A persistent info's value is not its own: destruct leaves it. */
    char *kept = text_copy("kept");
    PMIX_INFO_CONSTRUCT(&info);
    info.value.type = PMIX_STRING;
    info.value.data.string = kept;
    EXPECT(!PMIX_INFO_IS_PERSISTENT(&info));
    PMIX_INFO_SET_PERSISTENT(&info);
    EXPECT(PMIX_INFO_IS_PERSISTENT(&info));
    PMIX_INFO_DESTRUCT(&info);
    EXPECT(info.value.data.string == kept && strcmp(kept, "kept") == 0);
    free(kept);
}

static void test_info_lists(void)
{
    void *list = NULL;
    pmix_status_t rc = PMIX_ERROR;
    PMIX_INFO_LIST_START(list);
    EXPECT(list != NULL);
    uint32_t one = 1;
    PMIX_INFO_LIST_ADD(rc, list, "a", &one, PMIX_UINT32);
    EXPECT(rc == PMIX_SUCCESS);
    pmix_info_t shared;
    PMIX_INFO_CONSTRUCT(&shared);
    PMIX_INFO_LOAD(&shared, "b", "shared", PMIX_STRING);
    rc = PMIX_ERROR;
    PMIX_INFO_LIST_INSERT(rc, list, &shared);
    EXPECT(rc == PMIX_SUCCESS);
    pmix_info_t copied;
    PMIX_INFO_CONSTRUCT(&copied);
    PMIX_INFO_LOAD(&copied, "c", "copied", PMIX_STRING);
    rc = PMIX_ERROR;
    PMIX_INFO_LIST_XFER(rc, list, &copied);
    EXPECT(rc == PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&copied); /* the list has its own copy */
    pmix_data_array_t darray;
    rc = PMIX_ERROR;
    PMIX_INFO_LIST_CONVERT(rc, list, &darray);
    EXPECT(rc == PMIX_SUCCESS && darray.type == PMIX_INFO && darray.size == 3);
    if (rc == PMIX_SUCCESS && darray.size == 3) {
        pmix_info_t *got = (pmix_info_t *)darray.array;
        EXPECT(strcmp(got[0].key, "a") == 0 && got[0].value.data.uint32 == 1);
        EXPECT(strcmp(got[1].key, "b") == 0 && strcmp(got[1].value.data.string, "shared") == 0);
        EXPECT(strcmp(got[2].key, "c") == 0 && strcmp(got[2].value.data.string, "copied") == 0);
    }
    PMIX_DATA_ARRAY_DESTRUCT(&darray);
    EXPECT(darray.array == NULL && darray.size == 0);
    PMIX_INFO_LIST_RELEASE(list);
    PMIX_INFO_DESTRUCT(&shared); /* inserted, not copied: still the caller's */
    EXPECT(shared.value.type == PMIX_UNDEF);
    rc = PMIX_SUCCESS;
    PMIX_INFO_LIST_ADD(rc, NULL, "a", &one, PMIX_UINT32);
    EXPECT(rc == PMIX_ERR_BAD_PARAM);
}

static void test_pdata(void)
{
    pmix_proc_t owner;
    PMIX_LOAD_PROCID(&owner, "pub", 4);
    pmix_pdata_t *pd = NULL;
    PMIX_PDATA_CREATE(pd, 2);
    EXPECT(pd != NULL && pd[1].value.type == PMIX_UNDEF);
    int n = 42;
    PMIX_PDATA_LOAD(&pd[0], &owner, "k", &n, PMIX_INT);
    EXPECT(strcmp(pd[0].proc.nspace, "pub") == 0 && pd[0].proc.rank == 4 && strcmp(pd[0].key, "k") == 0 &&
           pd[0].value.type == PMIX_INT && pd[0].value.data.integer == 42);
    PMIX_PDATA_XFER(&pd[1], &pd[0]);
    EXPECT(strcmp(pd[1].proc.nspace, "pub") == 0 && pd[1].proc.rank == 4 && strcmp(pd[1].key, "k") == 0 &&
           pd[1].value.data.integer == 42);
    PMIX_PDATA_FREE(pd, 2);
    EXPECT(pd == NULL);

    pmix_pdata_t one;
    PMIX_PDATA_CONSTRUCT(&one);
    EXPECT(one.key[0] == '\0' && one.value.type == PMIX_UNDEF);
    PMIX_PDATA_LOAD(&one, &owner, "s", "text", PMIX_STRING);
    EXPECT(strcmp(one.value.data.string, "text") == 0);
    PMIX_PDATA_DESTRUCT(&one);
    EXPECT(one.value.type == PMIX_UNDEF);

    pmix_pdata_t *single = NULL;
    PMIX_PDATA_CREATE(single, 1);
    PMIX_PDATA_LOAD(single, &owner, "s", "text", PMIX_STRING);
    PMIX_PDATA_RELEASE(single);
    EXPECT(single == NULL);
}

static void test_topology_coords_devices(void)
{
    pmix_topology_t *topos = NULL;
    PMIX_TOPOLOGY_CREATE(topos, 2);
    EXPECT(topos != NULL && topos[1].source == NULL && topos[1].topology == NULL);
    PMIx_Topology_free(topos, 2); /* no PMIX_TOPOLOGY_FREE in 4.2.2's headers, nor ours */
    pmix_topology_t topo;
    memset(&topo, 0xff, sizeof topo);
    PMIX_TOPOLOGY_CONSTRUCT(&topo);
    EXPECT(topo.source == NULL && topo.topology == NULL);
    PMIX_TOPOLOGY_DESTRUCT(&topo);

    pmix_cpuset_t *sets = NULL;
    PMIX_CPUSET_CREATE(sets, 2);
    EXPECT(sets != NULL && sets[1].bitmap == NULL);
    EXPECT(PMIx_Parse_cpuset_string("hwloc:0-1", &sets[0]) == PMIX_SUCCESS && sets[0].bitmap != NULL);
    PMIx_Cpuset_free(sets, 2);
    pmix_cpuset_t set;
    memset(&set, 0xff, sizeof set);
    PMIX_CPUSET_CONSTRUCT(&set);
    EXPECT(set.source == NULL && set.bitmap == NULL);

    /* 2 coordinates of 3 values each: the function takes dims first. */
    pmix_coord_t *coords = NULL;
    PMIX_COORD_CREATE(coords, 2, 3);
    EXPECT(coords != NULL && coords[1].dims == 3 && coords[1].coord != NULL && coords[1].coord[2] == 0);
    PMIX_COORD_FREE(coords, 2);
    EXPECT(coords == NULL);
    pmix_coord_t coord;
    PMIX_COORD_CONSTRUCT(&coord);
    EXPECT(coord.coord == NULL && coord.dims == 0 && coord.view == PMIX_COORD_VIEW_UNDEF);
    coord.coord = calloc(2, sizeof(uint32_t));
    coord.dims = 2;
    PMIX_COORD_DESTRUCT(&coord);
    EXPECT(coord.coord == NULL);

    pmix_geometry_t *geos = NULL;
    PMIX_GEOMETRY_CREATE(geos, 2);
    EXPECT(geos != NULL && geos[1].uuid == NULL && geos[1].ncoords == 0);
    geos[0].osname = text_copy("eth0");
    PMIX_GEOMETRY_FREE(geos, 2);
    EXPECT(geos == NULL);
    pmix_geometry_t geo;
    PMIX_GEOMETRY_CONSTRUCT(&geo);
    EXPECT(geo.uuid == NULL && geo.coordinates == NULL);
    geo.uuid = text_copy("u");
    PMIX_GEOMETRY_DESTRUCT(&geo);
    EXPECT(geo.uuid == NULL);

    pmix_device_distance_t *dists = NULL;
    PMIX_DEVICE_DIST_CREATE(dists, 2);
    EXPECT(dists != NULL && dists[1].mindist == UINT16_MAX && dists[1].maxdist == UINT16_MAX);
    dists[0].uuid = text_copy("gpu-0");
    PMIX_DEVICE_DIST_FREE(dists, 2);
    EXPECT(dists == NULL);
    pmix_device_distance_t dist;
    PMIX_DEVICE_DIST_CONSTRUCT(&dist);
    EXPECT(dist.mindist == UINT16_MAX && dist.osname == NULL);
    dist.osname = text_copy("mlx5_0");
    PMIX_DEVICE_DIST_DESTRUCT(&dist);
    EXPECT(dist.osname == NULL);
}

static void test_bytes_endpoints_envars(void)
{
    pmix_byte_object_t bo;
    PMIX_BYTE_OBJECT_CONSTRUCT(&bo);
    EXPECT(bo.bytes == NULL && bo.size == 0);
    char *data = malloc(4);
    memcpy(data, "abcd", 4);
    char *given = data;
    size_t size = 4;
    PMIX_BYTE_OBJECT_LOAD(&bo, data, size); /* taken over, variables cleared */
    EXPECT(bo.bytes == given && bo.size == 4 && data == NULL && size == 0);
    PMIX_BYTE_OBJECT_DESTRUCT(&bo);
    EXPECT(bo.bytes == NULL && bo.size == 0);
    pmix_byte_object_t *bos = NULL;
    PMIX_BYTE_OBJECT_CREATE(bos, 2);
    EXPECT(bos != NULL && bos[1].bytes == NULL && bos[1].size == 0);
    bos[0].bytes = text_copy("x");
    bos[0].size = 1;
    PMIX_BYTE_OBJECT_FREE(bos, 2);
    EXPECT(bos == NULL);

    pmix_endpoint_t *eps = NULL;
    PMIX_ENDPOINT_CREATE(eps, 2);
    EXPECT(eps != NULL && eps[1].endpt.bytes == NULL && eps[1].uuid == NULL);
    eps[0].uuid = text_copy("ep");
    PMIX_ENDPOINT_FREE(eps, 2);
    EXPECT(eps == NULL);
    pmix_endpoint_t ep;
    PMIX_ENDPOINT_CONSTRUCT(&ep);
    EXPECT(ep.osname == NULL && ep.endpt.size == 0);
    ep.osname = text_copy("hfi1_0");
    PMIX_ENDPOINT_DESTRUCT(&ep);
    EXPECT(ep.osname == NULL);

    pmix_envar_t *evs = NULL;
    PMIX_ENVAR_CREATE(evs, 2);
    EXPECT(evs != NULL && evs[1].envar == NULL && evs[1].value == NULL);
    char name[] = "PATH", value[] = "/bin";
    PMIX_ENVAR_LOAD(&evs[0], name, value, ':');
    EXPECT(evs[0].envar != name && strcmp(evs[0].envar, "PATH") == 0 && strcmp(evs[0].value, "/bin") == 0 &&
           evs[0].separator == ':');
    PMIX_ENVAR_FREE(evs, 2); /* 5.0's form clears the pointer; 4.2.2's does not */
    EXPECT(evs == NULL);
    pmix_envar_t ev;
    PMIX_ENVAR_CONSTRUCT(&ev);
    EXPECT(ev.envar == NULL && ev.value == NULL && ev.separator == '\0');
    PMIX_ENVAR_LOAD(&ev, name, value, ';');
    PMIX_ENVAR_DESTRUCT(&ev);
    EXPECT(ev.envar == NULL && ev.value == NULL);
}

static void test_data_buffers(void)
{
    pmix_data_buffer_t *buf = NULL;
    PMIX_DATA_BUFFER_CREATE(buf);
    EXPECT(buf != NULL && buf->bytes_used == 0);
    int32_t numbers[3] = {5, -6, 7};
    EXPECT(PMIx_Data_pack(NULL, buf, numbers, 3, PMIX_INT32) == PMIX_SUCCESS);
    char *bytes = NULL;
    size_t nbytes = 0;
    PMIX_DATA_BUFFER_UNLOAD(buf, bytes, nbytes);
    EXPECT(bytes != NULL && nbytes > 0 && buf->bytes_used == 0);
    PMIX_DATA_BUFFER_RELEASE(buf);
    EXPECT(buf == NULL);

    pmix_data_buffer_t other;
    PMIX_DATA_BUFFER_CONSTRUCT(&other);
    EXPECT(other.base_ptr == NULL && other.bytes_used == 0);
    PMIX_DATA_BUFFER_LOAD(&other, bytes, nbytes); /* the buffer owns the bytes now */
    EXPECT(other.bytes_used == nbytes);
    int32_t back[3] = {0, 0, 0};
    int32_t count = 3;
    EXPECT(PMIx_Data_unpack(NULL, &other, back, &count, PMIX_INT32) == PMIX_SUCCESS);
    EXPECT(count == 3 && back[0] == 5 && back[1] == -6 && back[2] == 7);
    PMIX_DATA_BUFFER_DESTRUCT(&other);
    EXPECT(other.base_ptr == NULL && other.bytes_used == 0);
}

static void test_procs(void)
{
    pmix_proc_t *procs = NULL;
    PMIX_PROC_CREATE(procs, 2);
    EXPECT(procs != NULL && procs[1].nspace[0] == '\0');
    PMIX_PROC_LOAD(&procs[1], "ns", 5);
    EXPECT(strcmp(procs[1].nspace, "ns") == 0 && procs[1].rank == 5);
    PMIX_PROC_DESTRUCT(&procs[1]); /* a function now; 4.2.2's expands to nothing */
    EXPECT(procs[1].nspace[0] == '\0');
    PMIX_PROC_FREE(procs, 2);
    EXPECT(procs == NULL);
    pmix_proc_t proc;
    memset(&proc, 0xff, sizeof proc);
    PMIX_PROC_CONSTRUCT(&proc);
    EXPECT(proc.nspace[0] == '\0');
    pmix_proc_t *single = NULL;
    PMIX_PROC_CREATE(single, 1);
    PMIX_PROC_RELEASE(single);
    EXPECT(single == NULL);

    pmix_nspace_t target, cluster, nspace, c2, n2;
    PMIX_LOAD_NSPACE(cluster, "clusterA");
    PMIX_LOAD_NSPACE(nspace, "job42");
    PMIX_MULTICLUSTER_NSPACE_CONSTRUCT(target, cluster, nspace);
    EXPECT(strcmp(target, "clusterA:job42") == 0);
    PMIX_MULTICLUSTER_NSPACE_PARSE(target, c2, n2);
    EXPECT(strcmp(c2, "clusterA") == 0 && strcmp(n2, "job42") == 0);

    pmix_proc_info_t *infos = NULL;
    PMIX_PROC_INFO_CREATE(infos, 2);
    EXPECT(infos != NULL && infos[1].hostname == NULL);
    infos[0].hostname = text_copy("h");
    infos[0].executable_name = text_copy("/bin/true");
    PMIX_PROC_INFO_FREE(infos, 2);
    EXPECT(infos == NULL);
    pmix_proc_info_t pi;
    PMIX_PROC_INFO_CONSTRUCT(&pi);
    EXPECT(pi.hostname == NULL && pi.executable_name == NULL);
    pi.hostname = text_copy("h2");
    PMIX_PROC_INFO_DESTRUCT(&pi);
    EXPECT(pi.hostname == NULL);
    pmix_proc_info_t *lone = NULL;
    PMIX_PROC_INFO_CREATE(lone, 1);
    lone->hostname = text_copy("h3");
    PMIX_PROC_INFO_RELEASE(lone);
    EXPECT(lone == NULL);
}

static void test_stats(void)
{
    pmix_proc_stats_t *ps = NULL;
    PMIX_PROC_STATS_CREATE(ps, 2);
    EXPECT(ps != NULL && ps[1].node == NULL && ps[1].cmd == NULL);
    ps[0].cmd = text_copy("a.out");
    PMIX_PROC_STATS_FREE(ps, 2);
    EXPECT(ps == NULL);
    pmix_proc_stats_t ps1;
    PMIX_PROC_STATS_CONSTRUCT(&ps1);
    EXPECT(ps1.node == NULL && ps1.cmd == NULL);
    ps1.node = text_copy("n");
    PMIX_PROC_STATS_DESTRUCT(&ps1);
    EXPECT(ps1.node == NULL);
    PMIX_PROC_STATS_CREATE(ps, 1);
    PMIX_PROC_STATS_RELEASE(ps);
    EXPECT(ps == NULL);

    pmix_disk_stats_t *ds = NULL;
    PMIX_DISK_STATS_CREATE(ds, 2);
    EXPECT(ds != NULL && ds[1].disk == NULL);
    ds[1].disk = text_copy("sda");
    PMIX_DISK_STATS_FREE(ds, 2);
    EXPECT(ds == NULL);
    pmix_disk_stats_t ds1;
    PMIX_DISK_STATS_CONSTRUCT(&ds1);
    EXPECT(ds1.disk == NULL);
    ds1.disk = text_copy("sdb");
    PMIX_DISK_STATS_DESTRUCT(&ds1);
    EXPECT(ds1.disk == NULL);
    PMIX_DISK_STATS_CREATE(ds, 1);
    PMIX_DISK_STATS_RELEASE(ds);
    EXPECT(ds == NULL);

    pmix_net_stats_t *nst = NULL;
    PMIX_NET_STATS_CREATE(nst, 2);
    EXPECT(nst != NULL && nst[1].net_interface == NULL);
    nst[0].net_interface = text_copy("eth0");
    PMIX_NET_STATS_FREE(nst, 2);
    EXPECT(nst == NULL);
    pmix_net_stats_t nst1;
    PMIX_NET_STATS_CONSTRUCT(&nst1);
    EXPECT(nst1.net_interface == NULL);
    nst1.net_interface = text_copy("lo");
    PMIX_NET_STATS_DESTRUCT(&nst1);
    EXPECT(nst1.net_interface == NULL);
    PMIX_NET_STATS_CREATE(nst, 1);
    PMIX_NET_STATS_RELEASE(nst);
    EXPECT(nst == NULL);

    pmix_node_stats_t *nds = NULL;
    PMIX_NODE_STATS_CREATE(nds, 1);
    EXPECT(nds != NULL && nds[0].diskstats == NULL && nds[0].netstats == NULL);
    nds[0].node = text_copy("n");
    PMIX_DISK_STATS_CREATE(nds[0].diskstats, 1);
    nds[0].ndiskstats = 1;
    nds[0].diskstats[0].disk = text_copy("sdc");
    PMIX_NODE_STATS_FREE(nds, 1); /* with what it holds */
    EXPECT(nds == NULL);
    pmix_node_stats_t nd;
    PMIX_NODE_STATS_CONSTRUCT(&nd);
    EXPECT(nd.node == NULL && nd.diskstats == NULL);
    nd.node = text_copy("n9");
    PMIX_NODE_STATS_DESTRUCT(&nd);
    EXPECT(nd.node == NULL);
    PMIX_NODE_STATS_CREATE(nds, 1);
    PMIX_NODE_STATS_RELEASE(nds);
    EXPECT(nds == NULL);
}

static void test_apps_queries_regattrs(void)
{
    pmix_app_t *apps = NULL;
    PMIX_APP_CREATE(apps, 2);
    EXPECT(apps != NULL && apps[1].cmd == NULL && apps[1].ninfo == 0);
    apps[0].cmd = text_copy("/bin/true");
    PMIX_APP_INFO_CREATE(&apps[0], 2);
    EXPECT(apps[0].ninfo == 2 && apps[0].info != NULL && PMIX_INFO_IS_END(&apps[0].info[1]));
    PMIX_APP_FREE(apps, 2);
    EXPECT(apps == NULL);
    pmix_app_t app;
    PMIX_APP_CONSTRUCT(&app);
    EXPECT(app.cmd == NULL && app.argv == NULL && app.info == NULL);
    app.cmd = text_copy("/bin/hostname");
    PMIX_APP_DESTRUCT(&app);
    EXPECT(app.cmd == NULL);
    PMIX_APP_CREATE(apps, 1);
    apps->cmd = text_copy("/bin/date");
    PMIX_APP_RELEASE(apps);
    EXPECT(apps == NULL);

    pmix_query_t *queries = NULL;
    PMIX_QUERY_CREATE(queries, 2);
    EXPECT(queries != NULL && queries[1].keys == NULL && queries[1].nqual == 0);
    pmix_status_t rc = PMIX_ERROR;
    PMIX_ARGV_APPEND(rc, queries[0].keys, PMIX_QUERY_NAMESPACES);
    EXPECT(rc == PMIX_SUCCESS);
    PMIX_QUERY_QUALIFIERS_CREATE(&queries[0], 2);
    EXPECT(queries[0].nqual == 2 && queries[0].qualifiers != NULL);
    PMIX_QUERY_FREE(queries, 2);
    EXPECT(queries == NULL);
    pmix_query_t query;
    PMIX_QUERY_CONSTRUCT(&query);
    EXPECT(query.keys == NULL && query.qualifiers == NULL);
    PMIX_QUERY_QUALIFIERS_CREATE(&query, 1);
    PMIX_QUERY_DESTRUCT(&query);
    EXPECT(query.qualifiers == NULL && query.nqual == 0);
    PMIX_QUERY_CREATE(queries, 1);
    PMIX_QUERY_RELEASE(queries);
    EXPECT(queries == NULL);

    pmix_regattr_t *attrs = NULL;
    PMIX_REGATTR_CREATE(attrs, 2);
    EXPECT(attrs != NULL && attrs[1].name == NULL && attrs[1].description == NULL);
    PMIX_REGATTR_LOAD(&attrs[0], "PMIX_TIMEOUT", PMIX_TIMEOUT, PMIX_INT, "seconds");
    int count = 0;
    PMIX_ARGV_COUNT(count, attrs[0].description);
    EXPECT(strcmp(attrs[0].name, "PMIX_TIMEOUT") == 0 && strcmp(attrs[0].string, PMIX_TIMEOUT) == 0 &&
           attrs[0].type == PMIX_INT && count == 1);
    PMIX_REGATTR_XFER(&attrs[1], &attrs[0]);
    EXPECT(attrs[1].name != attrs[0].name && strcmp(attrs[1].name, "PMIX_TIMEOUT") == 0 &&
           attrs[1].type == PMIX_INT);
    PMIX_REGATTR_FREE(attrs, 2);
    EXPECT(attrs == NULL);
    pmix_regattr_t attr;
    PMIX_REGATTR_CONSTRUCT(&attr);
    EXPECT(attr.name == NULL && attr.description == NULL && attr.type == PMIX_UNDEF);
    PMIX_REGATTR_LOAD(&attr, "PMIX_JOB_SIZE", PMIX_JOB_SIZE, PMIX_UINT32, "procs");
    PMIX_REGATTR_DESTRUCT(&attr);
}

static void test_data_arrays(void)
{
    pmix_data_array_t *arr = NULL;
    PMIX_DATA_ARRAY_CREATE(arr, 3, PMIX_INFO);
    EXPECT(arr != NULL && arr->size == 3 && arr->type == PMIX_INFO && arr->array != NULL);
    PMIX_INFO_LOAD(&((pmix_info_t *)arr->array)[1], "k", "v", PMIX_STRING);
    PMIX_DATA_ARRAY_FREE(arr);
    EXPECT(arr == NULL);

    pmix_data_array_t local;
    PMIX_DATA_ARRAY_INIT(&local, PMIX_PROC);
    EXPECT(local.type == PMIX_PROC && local.size == 0 && local.array == NULL);
    PMIX_DATA_ARRAY_CONSTRUCT(&local, 2, PMIX_STRING);
    EXPECT(local.type == PMIX_STRING && local.size == 2 && local.array != NULL);
    ((char **)local.array)[0] = text_copy("x");
    PMIX_DATA_ARRAY_DESTRUCT(&local);
    EXPECT(local.array == NULL && local.size == 0);
}

int main(void)
{
    test_expansions();
    test_ids();
    test_argv();
    test_values();
    test_infos();
    test_info_lists();
    test_pdata();
    test_topology_coords_devices();
    test_bytes_endpoints_envars();
    test_data_buffers();
    test_procs();
    test_stats();
    test_apps_queries_regattrs();
    test_data_arrays();
    /* The exported function (no server: nothing is sent). */
    PMIx_Heartbeat();
    if (failures == 0) printf("function_macros_c_test: all checks passed\n");
    return failures == 0 ? 0 : 1;
}
