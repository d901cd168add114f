/*
 * pmix_function_macros.h - the function forms of the helper macros.
 *
 * By default our headers keep OpenPMIx 4.2.2's macros inline, so that a
 * program built against them also runs on OpenPMIx 4.2.2's libpmix.so.2.
 * A program that defines PMIX_CXX_FUNCTION_MACROS before including <pmix.h>
 * gets this file instead (pmix.h includes it last): each macro that
 * OpenPMIx 5.0 turned into a call of an exported function calls that
 * function, with 5.0's argument order, assignments and NULL-setting. Such a
 * program needs a library that exports those functions (ours, or OpenPMIx
 * 4.2.3 and later). Macros that stay inline in 5.0 stay inline here.
 */
#ifndef PMIX_FUNCTION_MACROS_H
#define PMIX_FUNCTION_MACROS_H

#include <pmix.h>

/* ----- Keys, namespaces and process ids -------------------------------- */

#undef PMIX_LOAD_KEY
#define PMIX_LOAD_KEY(a, b) PMIx_Load_key((a), (b))
#undef PMIX_CHECK_KEY
#define PMIX_CHECK_KEY(a, b) PMIx_Check_key((a)->key, (b))
#undef PMIX_CHECK_RESERVED_KEY
#define PMIX_CHECK_RESERVED_KEY(a) PMIx_Check_reserved_key((a))
#undef PMIX_LOAD_NSPACE
#define PMIX_LOAD_NSPACE(a, b) PMIx_Load_nspace((a), (b))
#undef PMIX_CHECK_NSPACE
#define PMIX_CHECK_NSPACE(a, b) PMIx_Check_nspace((a), (b))
#undef PMIX_NSPACE_INVALID
#define PMIX_NSPACE_INVALID(a) PMIx_Nspace_invalid((a))
#undef PMIX_LOAD_PROCID
#define PMIX_LOAD_PROCID(a, b, c) PMIx_Load_procid((a), (b), (c))
#undef PMIX_XFER_PROCID
#define PMIX_XFER_PROCID(a, b) PMIx_Xfer_procid((a), (b))
#undef PMIX_PROCID_XFER
#define PMIX_PROCID_XFER(a, b) PMIx_Xfer_procid((a), (b))
#undef PMIX_CHECK_PROCID
#define PMIX_CHECK_PROCID(a, b) PMIx_Check_procid((a), (b))
#undef PMIX_CHECK_RANK
#define PMIX_CHECK_RANK(a, b) PMIx_Check_rank((a), (b))
#undef PMIX_PROCID_INVALID
#define PMIX_PROCID_INVALID(a) PMIx_Procid_invalid((a))

/* ----- argv-style arrays and environments ------------------------------ */

/* r receives the count or the status; a is the array itself, except for
 * APPEND_UNIQUE, which takes its address. */
#undef PMIX_ARGV_COUNT
#define PMIX_ARGV_COUNT(r, a) ((r) = PMIx_Argv_count((a)))
#undef PMIX_ARGV_APPEND
#define PMIX_ARGV_APPEND(r, a, b) ((r) = PMIx_Argv_append_nosize((char ***)&(a), (b)))
#undef PMIX_ARGV_PREPEND
#define PMIX_ARGV_PREPEND(r, a, b) ((r) = PMIx_Argv_prepend_nosize((char ***)&(a), (b)))
#undef PMIX_ARGV_APPEND_UNIQUE
#define PMIX_ARGV_APPEND_UNIQUE(r, a, b) ((r) = PMIx_Argv_append_unique_nosize((a), (b)))
#undef PMIX_ARGV_FREE
#define PMIX_ARGV_FREE(a)                                                       \
    do {                                                                        \
        PMIx_Argv_free((a));                                                    \
        (a) = NULL;                                                             \
    } while (0)
#undef PMIX_ARGV_SPLIT
#define PMIX_ARGV_SPLIT(a, b, c) ((a) = PMIx_Argv_split((b), (c)))
#undef PMIX_ARGV_JOIN
#define PMIX_ARGV_JOIN(a, b, c) ((a) = PMIx_Argv_join((b), (c)))
#undef PMIX_ARGV_COPY
#define PMIX_ARGV_COPY(a, b) ((a) = PMIx_Argv_copy((b)))
#undef PMIX_SETENV
#define PMIX_SETENV(r, a, b, c) ((r) = PMIx_Setenv((a), (b), true, (c)))

/* ----- Values ---------------------------------------------------------- */

#undef PMIX_VALUE_CONSTRUCT
#define PMIX_VALUE_CONSTRUCT(m) PMIx_Value_construct((m))
#undef PMIX_VALUE_DESTRUCT
#define PMIX_VALUE_DESTRUCT(m) PMIx_Value_destruct((m))
#undef PMIX_VALUE_CREATE
#define PMIX_VALUE_CREATE(m, n) ((m) = PMIx_Value_create((n)))
#undef PMIX_VALUE_RELEASE
#define PMIX_VALUE_RELEASE(m)                                                   \
    do {                                                                        \
        PMIx_Value_free((m), 1);                                                \
        (m) = NULL;                                                             \
    } while (0)
#undef PMIX_VALUE_FREE
#define PMIX_VALUE_FREE(m, n)                                                   \
    do {                                                                        \
        PMIx_Value_free((m), (n));                                              \
        (m) = NULL;                                                             \
    } while (0)
#undef PMIX_CHECK_TRUE
#define PMIX_CHECK_TRUE(a) (PMIx_Value_true((a)) == PMIX_BOOL_TRUE)
#undef PMIX_CHECK_BOOL
#define PMIX_CHECK_BOOL(a) (PMIx_Value_true((a)) != PMIX_NON_BOOL)
#undef PMIX_VALUE_LOAD
#define PMIX_VALUE_LOAD(v, d, t) PMIx_Value_load((v), (d), (t))
#undef PMIX_VALUE_UNLOAD
#define PMIX_VALUE_UNLOAD(r, k, d, s) ((r) = PMIx_Value_unload((k), (d), (s)))
/* A NULL v gets a new (unconstructed) value first. */
#undef PMIX_VALUE_XFER
#define PMIX_VALUE_XFER(r, v, s)                                                \
    do {                                                                        \
        if (NULL == (v)) {                                                      \
            (v) = (pmix_value_t *)pmix_malloc(sizeof(pmix_value_t));            \
        }                                                                       \
        if (NULL == (v)) {                                                      \
            (r) = PMIX_ERR_NOMEM;                                               \
        } else {                                                                \
            (r) = PMIx_Value_xfer((v), (s));                                    \
        }                                                                       \
    } while (0)
#undef PMIX_VALUE_XFER_DIRECT
#define PMIX_VALUE_XFER_DIRECT(r, v, s) ((r) = PMIx_Value_xfer((v), (s)))

/* ----- Infos and info lists -------------------------------------------- */

#undef PMIX_INFO_CONSTRUCT
#define PMIX_INFO_CONSTRUCT(m) PMIx_Info_construct((m))
#undef PMIX_INFO_DESTRUCT
#define PMIX_INFO_DESTRUCT(m) PMIx_Info_destruct((m))
#undef PMIX_INFO_CREATE
#define PMIX_INFO_CREATE(m, n) ((m) = PMIx_Info_create((n)))
#undef PMIX_INFO_FREE
#define PMIX_INFO_FREE(m, n)                                                    \
    do {                                                                        \
        PMIx_Info_free((m), (n));                                               \
        (m) = NULL;                                                             \
    } while (0)
#undef PMIX_INFO_REQUIRED
#define PMIX_INFO_REQUIRED(m) PMIx_Info_required((m))
#undef PMIX_INFO_OPTIONAL
#define PMIX_INFO_OPTIONAL(m) PMIx_Info_optional((m))
#undef PMIX_INFO_IS_REQUIRED
#define PMIX_INFO_IS_REQUIRED(m) PMIx_Info_is_required((m))
#undef PMIX_INFO_IS_OPTIONAL
#define PMIX_INFO_IS_OPTIONAL(m) PMIx_Info_is_optional((m))
#undef PMIX_INFO_PROCESSED
#define PMIX_INFO_PROCESSED(m) PMIx_Info_processed((m))
#undef PMIX_INFO_WAS_PROCESSED
#define PMIX_INFO_WAS_PROCESSED(m) PMIx_Info_was_processed((m))
#undef PMIX_INFO_SET_END
#define PMIX_INFO_SET_END(m) PMIx_Info_set_end((m))
#undef PMIX_INFO_IS_END
#define PMIX_INFO_IS_END(m) PMIx_Info_is_end((m))
#undef PMIX_INFO_SET_QUALIFIER
#define PMIX_INFO_SET_QUALIFIER(i) PMIx_Info_qualifier((i))
#undef PMIX_INFO_IS_QUALIFIER
#define PMIX_INFO_IS_QUALIFIER(i) PMIx_Info_is_qualifier((i))
#undef PMIX_INFO_SET_PERSISTENT
#define PMIX_INFO_SET_PERSISTENT(ii) PMIx_Info_persistent((ii))
#undef PMIX_INFO_IS_PERSISTENT
#define PMIX_INFO_IS_PERSISTENT(ii) PMIx_Info_is_persistent((ii))
#undef PMIX_INFO_LOAD
#define PMIX_INFO_LOAD(i, k, d, t) ((void)PMIx_Info_load((i), (k), (d), (t)))
#undef PMIX_INFO_XFER
#define PMIX_INFO_XFER(d, s) ((void)PMIx_Info_xfer((d), (s)))
#undef PMIX_INFO_TRUE
#define PMIX_INFO_TRUE(m) (PMIx_Info_true((m)) == PMIX_BOOL_TRUE)

#undef PMIX_INFO_LIST_START
#define PMIX_INFO_LIST_START(p) ((p) = PMIx_Info_list_start())
#undef PMIX_INFO_LIST_ADD
#define PMIX_INFO_LIST_ADD(r, p, a, v, t) ((r) = PMIx_Info_list_add((p), (a), (v), (t)))
#undef PMIX_INFO_LIST_INSERT
#define PMIX_INFO_LIST_INSERT(r, p, i) ((r) = PMIx_Info_list_insert((p), (i)))
#undef PMIX_INFO_LIST_XFER
#define PMIX_INFO_LIST_XFER(r, p, a) ((r) = PMIx_Info_list_xfer((p), (a)))
#undef PMIX_INFO_LIST_CONVERT
#define PMIX_INFO_LIST_CONVERT(r, p, m) ((r) = PMIx_Info_list_convert((p), (m)))
#undef PMIX_INFO_LIST_RELEASE
#define PMIX_INFO_LIST_RELEASE(p) PMIx_Info_list_release((p))

/* ----- Published data -------------------------------------------------- */

/* A NULL m or d is left alone; otherwise it is cleared, then filled. */
#undef PMIX_PDATA_LOAD
#define PMIX_PDATA_LOAD(m, p, k, v, t)                                          \
    do {                                                                        \
        if (NULL != (m)) {                                                      \
            memset((m), 0, sizeof(pmix_pdata_t));                               \
            PMIx_Load_nspace((m)->proc.nspace, (p)->nspace);                    \
            (m)->proc.rank = (p)->rank;                                         \
            PMIx_Load_key((m)->key, (k));                                       \
            PMIx_Value_load(&(m)->value, (v), (t));                             \
        }                                                                       \
    } while (0)
#undef PMIX_PDATA_XFER
#define PMIX_PDATA_XFER(d, s)                                                   \
    do {                                                                        \
        if (NULL != (d)) {                                                      \
            memset((d), 0, sizeof(pmix_pdata_t));                               \
            PMIx_Load_nspace((d)->proc.nspace, (s)->proc.nspace);               \
            (d)->proc.rank = (s)->proc.rank;                                    \
            PMIx_Load_key((d)->key, (s)->key);                                  \
            PMIx_Value_xfer(&(d)->value, &(s)->value);                          \
        }                                                                       \
    } while (0)
#undef PMIX_PDATA_CONSTRUCT
#define PMIX_PDATA_CONSTRUCT(m) PMIx_Pdata_construct((m))
#undef PMIX_PDATA_DESTRUCT
#define PMIX_PDATA_DESTRUCT(m) PMIx_Pdata_destruct((m))
#undef PMIX_PDATA_CREATE
#define PMIX_PDATA_CREATE(m, n) ((m) = PMIx_Pdata_create((n)))
#undef PMIX_PDATA_FREE
#define PMIX_PDATA_FREE(m, n)                                                   \
    do {                                                                        \
        PMIx_Pdata_free((m), (n));                                              \
        (m) = NULL;                                                             \
    } while (0)
#undef PMIX_PDATA_RELEASE
#define PMIX_PDATA_RELEASE(m)                                                   \
    do {                                                                        \
        PMIx_Pdata_free((m), 1);                                                \
        (m) = NULL;                                                             \
    } while (0)

/* ----- Topologies, cpusets, coordinates, geometries, devices ----------- */

#undef PMIX_TOPOLOGY_CONSTRUCT
#define PMIX_TOPOLOGY_CONSTRUCT(m) PMIx_Topology_construct((m))
#undef PMIX_TOPOLOGY_CREATE
#define PMIX_TOPOLOGY_CREATE(m, n) ((m) = PMIx_Topology_create((n)))
#undef PMIX_TOPOLOGY_DESTRUCT
#define PMIX_TOPOLOGY_DESTRUCT(x) PMIx_Topology_destruct((x))
#undef PMIX_CPUSET_CONSTRUCT
#define PMIX_CPUSET_CONSTRUCT(m) PMIx_Cpuset_construct((m))
#undef PMIX_CPUSET_CREATE
#define PMIX_CPUSET_CREATE(m, n) ((m) = PMIx_Cpuset_create((n)))

/* n coordinates of d values each (the function takes dims first). */
#undef PMIX_COORD_CREATE
#define PMIX_COORD_CREATE(m, n, d) ((m) = PMIx_Coord_create((d), (n)))
#undef PMIX_COORD_CONSTRUCT
#define PMIX_COORD_CONSTRUCT(m) PMIx_Coord_construct((m))
#undef PMIX_COORD_DESTRUCT
#define PMIX_COORD_DESTRUCT(m) PMIx_Coord_destruct((m))
#undef PMIX_COORD_FREE
#define PMIX_COORD_FREE(m, n)                                                   \
    do {                                                                        \
        PMIx_Coord_free((m), (n));                                              \
        (m) = NULL;                                                             \
    } while (0)

#undef PMIX_GEOMETRY_CONSTRUCT
#define PMIX_GEOMETRY_CONSTRUCT(m) PMIx_Geometry_construct((m))
#undef PMIX_GEOMETRY_DESTRUCT
#define PMIX_GEOMETRY_DESTRUCT(m) PMIx_Geometry_destruct((m))
#undef PMIX_GEOMETRY_CREATE
#define PMIX_GEOMETRY_CREATE(m, n) ((m) = PMIx_Geometry_create((n)))
#undef PMIX_GEOMETRY_FREE
#define PMIX_GEOMETRY_FREE(m, n)                                                \
    do {                                                                        \
        PMIx_Geometry_free((m), (n));                                           \
        (m) = NULL;                                                             \
    } while (0)

#undef PMIX_DEVICE_DIST_CONSTRUCT
#define PMIX_DEVICE_DIST_CONSTRUCT(m) PMIx_Device_distance_construct((m))
#undef PMIX_DEVICE_DIST_DESTRUCT
#define PMIX_DEVICE_DIST_DESTRUCT(m) PMIx_Device_distance_destruct((m))
#undef PMIX_DEVICE_DIST_CREATE
#define PMIX_DEVICE_DIST_CREATE(m, n) ((m) = PMIx_Device_distance_create((n)))
#undef PMIX_DEVICE_DIST_FREE
#define PMIX_DEVICE_DIST_FREE(m, n)                                             \
    do {                                                                        \
        PMIx_Device_distance_free((m), (n));                                    \
        (m) = NULL;                                                             \
    } while (0)

/* ----- Byte objects, endpoints, environment variables ------------------ */

#undef PMIX_BYTE_OBJECT_CONSTRUCT
#define PMIX_BYTE_OBJECT_CONSTRUCT(m) PMIx_Byte_object_construct((m))
#undef PMIX_BYTE_OBJECT_DESTRUCT
#define PMIX_BYTE_OBJECT_DESTRUCT(m) PMIx_Byte_object_destruct((m))
#undef PMIX_BYTE_OBJECT_CREATE
#define PMIX_BYTE_OBJECT_CREATE(m, n) ((m) = PMIx_Byte_object_create((n)))
#undef PMIX_BYTE_OBJECT_FREE
#define PMIX_BYTE_OBJECT_FREE(m, n)                                             \
    do {                                                                        \
        PMIx_Byte_object_free((m), (n));                                        \
        (m) = NULL;                                                             \
    } while (0)
/* b takes the buffer d over; d and s are cleared. */
#undef PMIX_BYTE_OBJECT_LOAD
#define PMIX_BYTE_OBJECT_LOAD(b, d, s)                                          \
    do {                                                                        \
        PMIx_Byte_object_load((b), (d), (s));                                   \
        (d) = NULL;                                                             \
        (s) = 0;                                                                \
    } while (0)

#undef PMIX_ENDPOINT_CONSTRUCT
#define PMIX_ENDPOINT_CONSTRUCT(m) PMIx_Endpoint_construct((m))
#undef PMIX_ENDPOINT_DESTRUCT
#define PMIX_ENDPOINT_DESTRUCT(m) PMIx_Endpoint_destruct((m))
#undef PMIX_ENDPOINT_CREATE
#define PMIX_ENDPOINT_CREATE(m, n) ((m) = PMIx_Endpoint_create((n)))
#undef PMIX_ENDPOINT_FREE
#define PMIX_ENDPOINT_FREE(m, n)                                                \
    do {                                                                        \
        PMIx_Endpoint_free((m), (n));                                           \
        (m) = NULL;                                                             \
    } while (0)

#undef PMIX_ENVAR_CONSTRUCT
#define PMIX_ENVAR_CONSTRUCT(m) PMIx_Envar_construct((m))
#undef PMIX_ENVAR_DESTRUCT
#define PMIX_ENVAR_DESTRUCT(m) PMIx_Envar_destruct((m))
#undef PMIX_ENVAR_CREATE
#define PMIX_ENVAR_CREATE(m, n) ((m) = PMIx_Envar_create((n)))
#undef PMIX_ENVAR_FREE
#define PMIX_ENVAR_FREE(m, n)                                                   \
    do {                                                                        \
        PMIx_Envar_free((m), (n));                                              \
        (m) = NULL;                                                             \
    } while (0)
#undef PMIX_ENVAR_LOAD
#define PMIX_ENVAR_LOAD(m, e, v, s) PMIx_Envar_load((m), (e), (v), (s))

/* ----- Data buffers ---------------------------------------------------- */

#undef PMIX_DATA_BUFFER_CREATE
#define PMIX_DATA_BUFFER_CREATE(m) ((m) = PMIx_Data_buffer_create())
#undef PMIX_DATA_BUFFER_RELEASE
#define PMIX_DATA_BUFFER_RELEASE(m)                                             \
    do {                                                                        \
        PMIx_Data_buffer_release((m));                                          \
        (m) = NULL;                                                             \
    } while (0)
#undef PMIX_DATA_BUFFER_CONSTRUCT
#define PMIX_DATA_BUFFER_CONSTRUCT(m) PMIx_Data_buffer_construct((m))
#undef PMIX_DATA_BUFFER_DESTRUCT
#define PMIX_DATA_BUFFER_DESTRUCT(m) PMIx_Data_buffer_destruct((m))
#undef PMIX_DATA_BUFFER_LOAD
#define PMIX_DATA_BUFFER_LOAD(b, d, s) PMIx_Data_buffer_load((b), (d), (s))
/* d and s are the variables that receive the bytes and their count. */
#undef PMIX_DATA_BUFFER_UNLOAD
#define PMIX_DATA_BUFFER_UNLOAD(b, d, s)                                        \
    PMIx_Data_buffer_unload((b), (char **)&(d), (size_t *)&(s))

/* ----- Process ids, multicluster names, process information ------------ */

#undef PMIX_PROC_CREATE
#define PMIX_PROC_CREATE(m, n) ((m) = PMIx_Proc_create((n)))
#undef PMIX_PROC_CONSTRUCT
#define PMIX_PROC_CONSTRUCT(m) PMIx_Proc_construct((m))
#undef PMIX_PROC_DESTRUCT
#define PMIX_PROC_DESTRUCT(m) PMIx_Proc_destruct((m))
#undef PMIX_PROC_FREE
#define PMIX_PROC_FREE(m, n)                                                    \
    do {                                                                        \
        PMIx_Proc_free((m), (n));                                               \
        (m) = NULL;                                                             \
    } while (0)
#undef PMIX_PROC_RELEASE
#define PMIX_PROC_RELEASE(m)                                                    \
    do {                                                                        \
        PMIx_Proc_free((m), 1);                                                 \
        (m) = NULL;                                                             \
    } while (0)
#undef PMIX_PROC_LOAD
#define PMIX_PROC_LOAD(m, n, r) PMIx_Proc_load((m), (n), (r))
#undef PMIX_MULTICLUSTER_NSPACE_CONSTRUCT
#define PMIX_MULTICLUSTER_NSPACE_CONSTRUCT(t, c, n)                             \
    PMIx_Multicluster_nspace_construct((t), (c), (n))
#undef PMIX_MULTICLUSTER_NSPACE_PARSE
#define PMIX_MULTICLUSTER_NSPACE_PARSE(t, c, n) PMIx_Multicluster_nspace_parse((t), (c), (n))

#undef PMIX_PROC_INFO_CREATE
#define PMIX_PROC_INFO_CREATE(m, n) ((m) = PMIx_Proc_info_create((n)))
#undef PMIX_PROC_INFO_CONSTRUCT
#define PMIX_PROC_INFO_CONSTRUCT(m) PMIx_Proc_info_construct((m))
#undef PMIX_PROC_INFO_DESTRUCT
#define PMIX_PROC_INFO_DESTRUCT(m) PMIx_Proc_info_destruct((m))
#undef PMIX_PROC_INFO_FREE
#define PMIX_PROC_INFO_FREE(m, n)                                               \
    do {                                                                        \
        PMIx_Proc_info_free((m), (n));                                          \
        (m) = NULL;                                                             \
    } while (0)
#undef PMIX_PROC_INFO_RELEASE
#define PMIX_PROC_INFO_RELEASE(m)                                               \
    do {                                                                        \
        PMIx_Proc_info_free((m), 1);                                            \
        (m) = NULL;                                                             \
    } while (0)

/* ----- Statistics ------------------------------------------------------ */

#undef PMIX_PROC_STATS_CONSTRUCT
#define PMIX_PROC_STATS_CONSTRUCT(m) PMIx_Proc_stats_construct((m))
#undef PMIX_PROC_STATS_DESTRUCT
#define PMIX_PROC_STATS_DESTRUCT(m) PMIx_Proc_stats_destruct((m))
#undef PMIX_PROC_STATS_CREATE
#define PMIX_PROC_STATS_CREATE(m, n) ((m) = PMIx_Proc_stats_create((n)))
#undef PMIX_PROC_STATS_FREE
#define PMIX_PROC_STATS_FREE(m, n)                                              \
    do {                                                                        \
        PMIx_Proc_stats_free((m), (n));                                         \
        (m) = NULL;                                                             \
    } while (0)
#undef PMIX_PROC_STATS_RELEASE
#define PMIX_PROC_STATS_RELEASE(m)                                              \
    do {                                                                        \
        PMIx_Proc_stats_free((m), 1);                                           \
        (m) = NULL;                                                             \
    } while (0)

#undef PMIX_DISK_STATS_CONSTRUCT
#define PMIX_DISK_STATS_CONSTRUCT(m) PMIx_Disk_stats_construct((m))
#undef PMIX_DISK_STATS_DESTRUCT
#define PMIX_DISK_STATS_DESTRUCT(m) PMIx_Disk_stats_destruct((m))
#undef PMIX_DISK_STATS_CREATE
#define PMIX_DISK_STATS_CREATE(m, n) ((m) = PMIx_Disk_stats_create((n)))
#undef PMIX_DISK_STATS_FREE
#define PMIX_DISK_STATS_FREE(m, n)                                              \
    do {                                                                        \
        PMIx_Disk_stats_free((m), (n));                                         \
        (m) = NULL;                                                             \
    } while (0)
#undef PMIX_DISK_STATS_RELEASE
#define PMIX_DISK_STATS_RELEASE(m)                                              \
    do {                                                                        \
        PMIx_Disk_stats_free((m), 1);                                           \
        (m) = NULL;                                                             \
    } while (0)

#undef PMIX_NET_STATS_CONSTRUCT
#define PMIX_NET_STATS_CONSTRUCT(m) PMIx_Net_stats_construct((m))
#undef PMIX_NET_STATS_DESTRUCT
#define PMIX_NET_STATS_DESTRUCT(m) PMIx_Net_stats_destruct((m))
#undef PMIX_NET_STATS_CREATE
#define PMIX_NET_STATS_CREATE(m, n) ((m) = PMIx_Net_stats_create((n)))
#undef PMIX_NET_STATS_FREE
#define PMIX_NET_STATS_FREE(m, n)                                               \
    do {                                                                        \
        PMIx_Net_stats_free((m), (n));                                          \
        (m) = NULL;                                                             \
    } while (0)
#undef PMIX_NET_STATS_RELEASE
#define PMIX_NET_STATS_RELEASE(m)                                               \
    do {                                                                        \
        PMIx_Net_stats_free((m), 1);                                            \
        (m) = NULL;                                                             \
    } while (0)

#undef PMIX_NODE_STATS_CONSTRUCT
#define PMIX_NODE_STATS_CONSTRUCT(m) PMIx_Node_stats_construct((m))
#undef PMIX_NODE_STATS_DESTRUCT
#define PMIX_NODE_STATS_DESTRUCT(m) PMIx_Node_stats_destruct((m))
#undef PMIX_NODE_STATS_CREATE
#define PMIX_NODE_STATS_CREATE(m, n) ((m) = PMIx_Node_stats_create((n)))
#undef PMIX_NODE_STATS_FREE
#define PMIX_NODE_STATS_FREE(m, n)                                              \
    do {                                                                        \
        PMIx_Node_stats_free((m), (n));                                         \
        (m) = NULL;                                                             \
    } while (0)
#undef PMIX_NODE_STATS_RELEASE
#define PMIX_NODE_STATS_RELEASE(m)                                              \
    do {                                                                        \
        PMIx_Node_stats_free((m), 1);                                           \
        (m) = NULL;                                                             \
    } while (0)

/* ----- Applications, queries, registered attributes ------------------- */

#undef PMIX_APP_CONSTRUCT
#define PMIX_APP_CONSTRUCT(m) PMIx_App_construct((m))
#undef PMIX_APP_DESTRUCT
#define PMIX_APP_DESTRUCT(m) PMIx_App_destruct((m))
#undef PMIX_APP_CREATE
#define PMIX_APP_CREATE(m, n) ((m) = PMIx_App_create((n)))
#undef PMIX_APP_INFO_CREATE
#define PMIX_APP_INFO_CREATE(m, n) PMIx_App_info_create((m), (n))
#undef PMIX_APP_RELEASE
#define PMIX_APP_RELEASE(m)                                                     \
    do {                                                                        \
        PMIx_App_free((m), 1);                                                  \
        (m) = NULL;                                                             \
    } while (0)
#undef PMIX_APP_FREE
#define PMIX_APP_FREE(m, n)                                                     \
    do {                                                                        \
        PMIx_App_free((m), (n));                                                \
        (m) = NULL;                                                             \
    } while (0)

#undef PMIX_QUERY_CONSTRUCT
#define PMIX_QUERY_CONSTRUCT(m) PMIx_Query_construct((m))
#undef PMIX_QUERY_DESTRUCT
#define PMIX_QUERY_DESTRUCT(m) PMIx_Query_destruct((m))
#undef PMIX_QUERY_CREATE
#define PMIX_QUERY_CREATE(m, n) ((m) = PMIx_Query_create((n)))
#undef PMIX_QUERY_QUALIFIERS_CREATE
#define PMIX_QUERY_QUALIFIERS_CREATE(m, n) PMIx_Query_qualifiers_create((m), (n))
#undef PMIX_QUERY_RELEASE
#define PMIX_QUERY_RELEASE(m)                                                   \
    do {                                                                        \
        PMIx_Query_release((m));                                                \
        (m) = NULL;                                                             \
    } while (0)
#undef PMIX_QUERY_FREE
#define PMIX_QUERY_FREE(m, n)                                                   \
    do {                                                                        \
        PMIx_Query_free((m), (n));                                              \
        (m) = NULL;                                                             \
    } while (0)

#undef PMIX_REGATTR_CONSTRUCT
#define PMIX_REGATTR_CONSTRUCT(a) PMIx_Regattr_construct((a))
#undef PMIX_REGATTR_LOAD
#define PMIX_REGATTR_LOAD(a, n, k, t, v) PMIx_Regattr_load((a), (n), (k), (t), (v))
#undef PMIX_REGATTR_DESTRUCT
#define PMIX_REGATTR_DESTRUCT(a) PMIx_Regattr_destruct((a))
#undef PMIX_REGATTR_CREATE
#define PMIX_REGATTR_CREATE(m, n) ((m) = PMIx_Regattr_create((n)))
#undef PMIX_REGATTR_FREE
#define PMIX_REGATTR_FREE(m, n)                                                 \
    do {                                                                        \
        PMIx_Regattr_free((m), (n));                                            \
        (m) = NULL;                                                             \
    } while (0)
#undef PMIX_REGATTR_XFER
#define PMIX_REGATTR_XFER(a, b) PMIx_Regattr_xfer((a), (b))

/* ----- Data arrays ----------------------------------------------------- */

#undef PMIX_DATA_ARRAY_INIT
#define PMIX_DATA_ARRAY_INIT(m, t) PMIx_Data_array_init((m), (t))
#undef PMIX_DATA_ARRAY_CONSTRUCT
#define PMIX_DATA_ARRAY_CONSTRUCT(m, n, t) PMIx_Data_array_construct((m), (n), (t))
#undef PMIX_DATA_ARRAY_DESTRUCT
#define PMIX_DATA_ARRAY_DESTRUCT(m) PMIx_Data_array_destruct((m))
#undef PMIX_DATA_ARRAY_CREATE
#define PMIX_DATA_ARRAY_CREATE(m, n, t) ((m) = PMIx_Data_array_create((n), (t)))
#undef PMIX_DATA_ARRAY_FREE
#define PMIX_DATA_ARRAY_FREE(m)                                                 \
    do {                                                                        \
        PMIx_Data_array_free((m));                                              \
        (m) = NULL;                                                             \
    } while (0)

/* ----- Heartbeat ------------------------------------------------------- */

/* PMIx_Heartbeat() calls the exported function (declared in pmix.h). */
#undef PMIx_Heartbeat

#endif /* PMIX_FUNCTION_MACROS_H */
