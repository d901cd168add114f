/* Issue 37: the struct families, names, value and info-list helpers and
 * multicluster names of OpenPMIx 4.2.9 to master, called from C (strict
 * C11) through libpmix.so.2, each checked against what OpenPMIx's man page
 * (or, where it says nothing, its behaviour) gives. Run under the address
 * sanitizer too, where a _destruct or _free that leaves memory behind fails
 * as a leak. Exit status 0 on success; each failed check prints its line. */
#include <pmix.h>
#include <pmix_server.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/api/c_expect.h"

static char *text_copy(const char *s) { return strdup(s); }

static void test_coord_geometry(void)
{
    pmix_coord_t *c = PMIx_Coord_create(3, 2); /* 2 coordinates of 3 values */
    EXPECT(c != NULL);
    EXPECT(c[0].dims == 3 && c[1].dims == 3 && c[1].coord != NULL && c[1].coord[2] == 0);
    EXPECT(c[0].view == PMIX_COORD_VIEW_UNDEF);
    c[1].coord[2] = 7;
    PMIx_Coord_free(c, 2);
    EXPECT(PMIx_Coord_create(3, 0) == NULL);

    pmix_coord_t one;
    PMIx_Coord_construct(&one);
    EXPECT(one.coord == NULL && one.dims == 0);
    one.coord = calloc(2, sizeof(uint32_t));
    one.dims = 2;
    PMIx_Coord_destruct(&one);
    EXPECT(one.coord == NULL);

    pmix_geometry_t *g = PMIx_Geometry_create(2);
    EXPECT(g != NULL && g[1].uuid == NULL && g[1].ncoords == 0);
    g[0].uuid = text_copy("u");
    g[0].osname = text_copy("eth0");
    g[0].coordinates = PMIx_Coord_create(2, 3);
    g[0].ncoords = 3;
    PMIx_Geometry_free(g, 2);
    pmix_geometry_t one_g;
    PMIx_Geometry_construct(&one_g);
    one_g.osname = text_copy("ib0");
    PMIx_Geometry_destruct(&one_g);
    EXPECT(one_g.osname == NULL);
}

static void test_devices(void)
{
    pmix_device_distance_t *d = PMIx_Device_distance_create(2);
    EXPECT(d != NULL && d[1].mindist == UINT16_MAX && d[1].maxdist == UINT16_MAX);
    d[0].uuid = text_copy("gpu-0");
    d[1].osname = text_copy("mlx5_0");
    PMIx_Device_distance_free(d, 2);
    pmix_device_distance_t dd;
    PMIx_Device_distance_construct(&dd);
    EXPECT(dd.mindist == UINT16_MAX && dd.uuid == NULL);
    dd.uuid = text_copy("x");
    PMIx_Device_distance_destruct(&dd);
    EXPECT(dd.uuid == NULL);

    pmix_device_t *dev = PMIx_Device_create(2);
    EXPECT(dev != NULL && dev[1].type == PMIX_DEVTYPE_UNKNOWN && dev[1].uuid == NULL);
    dev[0].uuid = text_copy("gpu-1");
    dev[0].osname = text_copy("card1");
    dev[0].type = PMIX_DEVTYPE_GPU;
    PMIx_Device_free(dev, 2);
    pmix_device_t one;
    PMIx_Device_construct(&one);
    one.osname = text_copy("nvme0");
    PMIx_Device_destruct(&one);
    EXPECT(one.osname == NULL);

    pmix_endpoint_t *e = PMIx_Endpoint_create(1);
    EXPECT(e != NULL && e[0].endpt.bytes == NULL);
    e[0].uuid = text_copy("ep");
    e[0].endpt.bytes = malloc(4);
    e[0].endpt.size = 4;
    PMIx_Endpoint_free(e, 1);
    pmix_endpoint_t ep;
    PMIx_Endpoint_construct(&ep);
    ep.osname = text_copy("hfi1_0");
    PMIx_Endpoint_destruct(&ep);
    EXPECT(ep.osname == NULL);
}

static void test_new_structs(void)
{
    pmix_resource_unit_t *u = PMIx_Resource_unit_create(3);
    EXPECT(u != NULL && u[2].type == PMIX_DEVTYPE_UNKNOWN && u[2].count == 0);
    u[0].type = PMIX_DEVTYPE_GPU;
    u[0].count = 4;
    char *text = PMIx_Resource_unit_string(&u[0]);
    EXPECT(text != NULL && strcmp(text, "TYPE: GPU  COUNT: 4") == 0);
    free(text);
    u[1].type = PMIX_DEVTYPE_CORE;
    u[1].count = 16;
    text = PMIx_Resource_unit_string(&u[1]);
    EXPECT(text != NULL && strcmp(text, "TYPE: CORE  COUNT: 16") == 0);
    free(text);
    PMIx_Resource_unit_destruct(&u[0]);
    EXPECT(u[0].count == 0 && u[0].type == PMIX_DEVTYPE_UNKNOWN);
    PMIx_Resource_unit_free(u, 3);

    pmix_node_pid_t *np = PMIx_Node_pid_create(2);
    EXPECT(np != NULL && np[1].nodeid == UINT32_MAX && np[1].pid == -1 && np[1].hostname == NULL);
    np[0].hostname = text_copy("node07");
    PMIx_Node_pid_free(np, 2);
    pmix_node_pid_t one;
    PMIx_Node_pid_construct(&one);
    one.hostname = text_copy("n1");
    PMIx_Node_pid_destruct(&one);
    EXPECT(one.hostname == NULL);

    pmix_regex2_t *r = PMIx_Regex2_create(1);
    EXPECT(r != NULL && r->type == NULL && r->bytes == NULL && r->len == 0);
    r->type = text_copy("raw");
    r->bytes = (uint8_t *) text_copy("n1,n2");
    r->len = 6;
    PMIx_Regex2_free(r, 1);
    pmix_regex2_t rx;
    PMIx_Regex2_construct(&rx);
    rx.bytes = malloc(3);
    rx.len = 3;
    PMIx_Regex2_destruct(&rx);
    EXPECT(rx.bytes == NULL && rx.len == 0);

    EXPECT(PMIx_Device_create(0) == NULL && PMIx_Node_pid_create(0) == NULL && PMIx_Regex2_create(0) == NULL);
}

static void test_stats_and_info(void)
{
    pmix_proc_info_t *pi = PMIx_Proc_info_create(2);
    EXPECT(pi != NULL && pi[1].hostname == NULL);
    pi[0].hostname = text_copy("h");
    pi[0].executable_name = text_copy("/bin/true");
    PMIx_Proc_info_free(pi, 2);
    pmix_proc_info_t one;
    PMIx_Proc_info_construct(&one);
    one.hostname = text_copy("h2");
    PMIx_Proc_info_destruct(&one);
    EXPECT(one.hostname == NULL);

    pmix_proc_stats_t *ps = PMIx_Proc_stats_create(1);
    EXPECT(ps != NULL);
    ps[0].node = text_copy("n");
    ps[0].cmd = text_copy("a.out");
    PMIx_Proc_stats_free(ps, 1);
    pmix_proc_stats_t ps1;
    PMIx_Proc_stats_construct(&ps1);
    ps1.cmd = text_copy("b.out");
    PMIx_Proc_stats_destruct(&ps1);
    EXPECT(ps1.cmd == NULL);

    pmix_node_stats_t *ns = PMIx_Node_stats_create(1);
    EXPECT(ns != NULL && ns[0].diskstats == NULL);
    ns[0].node = text_copy("n");
    ns[0].diskstats = PMIx_Disk_stats_create(2);
    ns[0].ndiskstats = 2;
    ns[0].diskstats[1].disk = text_copy("sda");
    ns[0].netstats = PMIx_Net_stats_create(1);
    ns[0].nnetstats = 1;
    ns[0].netstats[0].net_interface = text_copy("eth0");
    PMIx_Node_stats_free(ns, 1);
    pmix_disk_stats_t ds;
    PMIx_Disk_stats_construct(&ds);
    ds.disk = text_copy("sdb");
    PMIx_Disk_stats_destruct(&ds);
    EXPECT(ds.disk == NULL);
    pmix_net_stats_t nst;
    PMIx_Net_stats_construct(&nst);
    nst.net_interface = text_copy("lo");
    PMIx_Net_stats_destruct(&nst);
    EXPECT(nst.net_interface == NULL);
    pmix_disk_stats_t *dsa = PMIx_Disk_stats_create(1);
    PMIx_Disk_stats_free(dsa, 1);
    pmix_net_stats_t *nsa = PMIx_Net_stats_create(1);
    PMIx_Net_stats_free(nsa, 1);
    pmix_node_stats_t nd;
    PMIx_Node_stats_construct(&nd);
    nd.node = text_copy("n9");
    PMIx_Node_stats_destruct(&nd);
    EXPECT(nd.node == NULL);

    pmix_topology_t *t = PMIx_Topology_create(2);
    EXPECT(t != NULL && t[0].source == NULL && t[1].topology == NULL);
    PMIx_Topology_free(t, 2);
    pmix_topology_t tt;
    PMIx_Topology_construct(&tt);
    EXPECT(tt.source == NULL && tt.topology == NULL);

    /* A cpuset made by parsing, released by _free. */
    pmix_cpuset_t *cs = PMIx_Cpuset_create(2);
    EXPECT(cs != NULL && cs[1].bitmap == NULL);
    EXPECT(PMIx_Parse_cpuset_string("hwloc:0-1", &cs[0]) == PMIX_SUCCESS);
    EXPECT(cs[0].bitmap != NULL);
    PMIx_Cpuset_free(cs, 2);
    pmix_cpuset_t c1;
    PMIx_Cpuset_construct(&c1);
    EXPECT(c1.source == NULL && c1.bitmap == NULL);

    pmix_fabric_t f;
    memset(&f, 0xff, sizeof f);
    PMIx_Fabric_construct(&f);
    EXPECT(f.name == NULL && f.info == NULL && f.ninfo == 0 && f.module == NULL && f.index == 0);
}

static void test_names(void)
{
    EXPECT(PMIx_Error_code("PMIX_ERR_NOT_FOUND") == PMIX_ERR_NOT_FOUND);
    EXPECT(PMIx_Error_code("pmix_err_timeout") == PMIX_ERR_TIMEOUT);
    EXPECT(PMIx_Error_code(PMIx_Error_string(PMIX_ERR_UNREACH)) == PMIX_ERR_UNREACH);
    EXPECT(PMIx_Error_code("PMIX_ERR_NOT") == INT32_MIN);  /* exact names only */
    EXPECT(PMIx_Error_code("no such status") == INT32_MIN);
    EXPECT(strcmp(PMIx_Group_operation_string(PMIX_GROUP_CONSTRUCT), "CONSTRUCT") == 0);
    EXPECT(strcmp(PMIx_Group_operation_string(PMIX_GROUP_CANCEL), "CANCEL") == 0);
    EXPECT(strcmp(PMIx_Group_operation_string((pmix_group_operation_t) 42), "UNKNOWN VALUE") == 0);
    EXPECT(strcmp(PMIx_Alloc_inheritance_string(PMIX_ALLOC_INHERIT_CHILD_DEFAULT), "CHILD_DEFAULT") == 0);
    EXPECT(strcmp(PMIx_Alloc_inheritance_string(0), "UNSPECIFIED") == 0);
    EXPECT(strcmp(PMIx_Resource_block_directive_string(PMIX_RESOURCE_BLOCK_EXTEND), "EXTEND") == 0);
    EXPECT(strcmp(PMIx_Resource_block_directive_string(99), "UNSPECIFIED") == 0);
    EXPECT(strcmp(PMIx_Device_type_string(PMIX_DEVTYPE_HWT), "HWT") == 0);
    EXPECT(strcmp(PMIx_Data_type_string(PMIX_RESOURCE_UNIT), "PMIX_RESOURCE_UNIT") == 0);
    EXPECT(strcmp(PMIx_Data_type_string(PMIX_REGEX2), "PMIX_REGEX2") == 0);

    pmix_app_t app;
    PMIx_App_construct(&app);
    app.cmd = text_copy("/bin/hostname");
    PMIx_Argv_append_nosize(&app.argv, "hostname");
    PMIx_Argv_append_nosize(&app.argv, "-s");
    app.maxprocs = 4;
    char *text = PMIx_App_string(&app);
    EXPECT(text != NULL &&
           strcmp(text, "CMD: /bin/hostname\n    ARGV:\n        ARGV[0]: hostname\n        ARGV[1]: -s\n"
                        "    ENV:\n        NONE\n    CWD: NULL\n    MAXPROCS: 4\n    INFO: NONE") == 0);
    free(text);
    PMIx_App_info_create(&app, 1);
    PMIx_Info_load(&app.info[0], PMIX_WDIR, "/tmp", PMIX_STRING);
    text = PMIx_App_string(&app);
    EXPECT(text != NULL && strstr(text, "\n    INFO:\n        INFO[0]: ") != NULL && strstr(text, "/tmp") != NULL);
    free(text);
    PMIx_App_destruct(&app);
}

static void test_get_number(void)
{
    pmix_value_t v;
    PMIx_Value_construct(&v);
    v.type = PMIX_INT32;
    v.data.int32 = 1234;
    int32_t i32 = 0;
    int16_t i16 = 0;
    int8_t i8 = 0;
    uint32_t u32 = 0;
    double d = 0;
    size_t sz = 0;
    EXPECT(PMIx_Value_get_number(&v, &i32, PMIX_INT32) == PMIX_SUCCESS && i32 == 1234);
    EXPECT(PMIx_Value_get_number(&v, &i16, PMIX_INT16) == PMIX_SUCCESS && i16 == 1234);
    EXPECT(PMIx_Value_get_number(&v, &i8, PMIX_INT8) == PMIX_ERR_LOST_PRECISION);
    EXPECT(PMIx_Value_get_number(&v, &d, PMIX_DOUBLE) == PMIX_SUCCESS && d == 1234.0);
    v.data.int32 = -5;
    EXPECT(PMIx_Value_get_number(&v, &u32, PMIX_UINT32) == PMIX_ERR_CHANGE_SIGN);
    EXPECT(PMIx_Value_get_number(&v, &i8, PMIX_INT8) == PMIX_SUCCESS && i8 == -5);
    v.type = PMIX_DOUBLE;
    v.data.dval = 3.75;
    EXPECT(PMIx_Value_get_number(&v, &sz, PMIX_SIZE) == PMIX_SUCCESS && sz == 3);
    v.data.dval = 1e12;
    EXPECT(PMIx_Value_get_number(&v, &u32, PMIX_UINT32) == PMIX_ERR_LOST_PRECISION);
    v.data.dval = -1.5;
    EXPECT(PMIx_Value_get_number(&v, &u32, PMIX_UINT32) == PMIX_ERR_CHANGE_SIGN);
    v.type = PMIX_UINT64;
    v.data.uint64 = UINT64_MAX;
    EXPECT(PMIx_Value_get_number(&v, &i32, PMIX_INT32) == PMIX_ERR_LOST_PRECISION);
    v.type = PMIX_STRING;
    v.data.string = "12";
    EXPECT(PMIx_Value_get_number(&v, &i32, PMIX_INT32) == PMIX_ERR_BAD_PARAM);
    v.type = PMIX_INT32;
    v.data.int32 = 1;
    EXPECT(PMIx_Value_get_number(&v, &i32, PMIX_STRING) == PMIX_ERR_BAD_PARAM);
    EXPECT(PMIx_Value_get_number(NULL, &i32, PMIX_INT32) == PMIX_ERR_BAD_PARAM);
}

static void test_sizes(void)
{
    pmix_value_t v;
    size_t size = 0;
    PMIx_Value_construct(&v);
    EXPECT(PMIx_Value_get_size(&v, &size) == PMIX_ERR_UNKNOWN_DATA_TYPE);
    v.type = PMIX_UINT64;
    v.data.uint64 = 9;
    EXPECT(PMIx_Value_get_size(&v, &size) == PMIX_SUCCESS && size == sizeof(pmix_value_t) + sizeof(uint64_t));
    PMIx_Value_load(&v, "abcd", PMIX_STRING);
    EXPECT(PMIx_Value_get_size(&v, &size) == PMIX_SUCCESS && size == sizeof(pmix_value_t) + 5);
    PMIx_Value_destruct(&v);
    pmix_byte_object_t bo = {.bytes = "12345678", .size = 8};
    PMIx_Value_load(&v, &bo, PMIX_BYTE_OBJECT);
    EXPECT(PMIx_Value_get_size(&v, &size) == PMIX_SUCCESS &&
           size == sizeof(pmix_value_t) + sizeof(pmix_byte_object_t) + 8);
    PMIx_Value_destruct(&v);
    /* An array of two strings: the array struct, two pointers, both texts. */
    pmix_data_array_t *arr = PMIx_Data_array_create(2, PMIX_STRING);
    ((char **) arr->array)[0] = text_copy("ab");
    ((char **) arr->array)[1] = text_copy("c");
    v.type = PMIX_DATA_ARRAY;
    v.data.darray = arr;
    EXPECT(PMIx_Value_get_size(&v, &size) == PMIX_SUCCESS &&
           size == sizeof(pmix_value_t) + sizeof(pmix_data_array_t) + 2 * sizeof(char *) + 3 + 2);
    PMIx_Value_destruct(&v);

    pmix_info_t info;
    PMIx_Info_construct(&info);
    PMIx_Info_load(&info, "my.key", "xy", PMIX_STRING);
    EXPECT(PMIx_Info_get_size(&info, &size) == PMIX_SUCCESS && size == sizeof(pmix_info_t) + 7 + 3);
    PMIx_Info_destruct(&info);
    EXPECT(PMIx_Info_get_size(NULL, &size) == PMIX_ERR_BAD_PARAM);
}

static void test_info_lists(void)
{
    void *list = PMIx_Info_list_start();
    uint32_t one = 1, two = 2, three = 3;
    EXPECT(PMIx_Info_list_get_size(list) == 0);
    void *next = (void *) 1;
    EXPECT(PMIx_Info_list_get_info(list, NULL, &next) == NULL && next == NULL);
    EXPECT(PMIx_Info_list_add(list, "b", &two, PMIX_UINT32) == PMIX_SUCCESS);
    EXPECT(PMIx_Info_list_prepend(list, "a", &one, PMIX_UINT32) == PMIX_SUCCESS);
    /* Unique: an existing key is kept unless overwrite, never duplicated. */
    EXPECT(PMIx_Info_list_add_unique(list, "a", &three, PMIX_UINT32, false) == PMIX_SUCCESS);
    EXPECT(PMIx_Info_list_add_unique(list, "b", &three, PMIX_UINT32, true) == PMIX_SUCCESS);
    EXPECT(PMIx_Info_list_add_unique(list, "c", &three, PMIX_UINT32, false) == PMIX_SUCCESS);
    pmix_value_t val;
    PMIx_Value_construct(&val);
    PMIx_Value_load(&val, "text", PMIX_STRING);
    EXPECT(PMIx_Info_list_add_value(list, "d", &val) == PMIX_SUCCESS);
    EXPECT(PMIx_Info_list_add_value_unique(list, "d", &val, false) == PMIX_SUCCESS);
    pmix_value_t other;
    PMIx_Value_construct(&other);
    PMIx_Value_load(&other, "other", PMIX_STRING);
    EXPECT(PMIx_Info_list_add_value_unique(list, "c", &other, true) == PMIX_SUCCESS);
    pmix_info_t extra;
    PMIx_Info_construct(&extra);
    PMIx_Info_load(&extra, "e", &one, PMIX_UINT32);
    EXPECT(PMIx_Info_list_xfer_unique(list, &extra, false) == PMIX_SUCCESS);
    EXPECT(PMIx_Info_list_xfer_unique(list, &extra, false) == PMIX_SUCCESS);
    EXPECT(PMIx_Info_list_get_size(list) == 5);

    /* Walk it: a, b (overwritten to 3), c (overwritten to "other"), d, e. */
    const char *keys[] = {"a", "b", "c", "d", "e"};
    size_t n = 0;
    void *at = NULL;
    pmix_info_t *info;
    do {
        info = PMIx_Info_list_get_info(list, at, &next);
        EXPECT(info != NULL);
        if (info == NULL) break;
        EXPECT(n < 5 && strcmp(info->key, keys[n]) == 0);
        if (n == 0) EXPECT(info->value.data.uint32 == 1);
        if (n == 1) EXPECT(info->value.data.uint32 == 3);
        if (n == 2) EXPECT(info->value.type == PMIX_STRING && strcmp(info->value.data.string, "other") == 0);
        if (n == 3) EXPECT(strcmp(info->value.data.string, "text") == 0);
        ++n;
        at = next;
    } while (next != NULL);
    EXPECT(n == 5);

    /* The list holds copies: the caller's values are its own. */
    PMIx_Value_destruct(&val);
    PMIx_Value_destruct(&other);
    PMIx_Info_destruct(&extra);
    pmix_data_array_t darray;
    EXPECT(PMIx_Info_list_convert(list, &darray) == PMIX_SUCCESS && darray.size == 5);
    EXPECT(strcmp(((pmix_info_t *) darray.array)[3].value.data.string, "text") == 0);
    PMIx_Data_array_destruct(&darray);
    EXPECT(PMIx_Info_list_add_unique(NULL, "a", &one, PMIX_UINT32, false) == PMIX_ERR_BAD_PARAM);
    EXPECT(PMIx_Info_list_get_size(NULL) == 0);
    PMIx_Info_list_release(list);
}

static void test_multicluster(void)
{
    pmix_nspace_t target, cluster, nspace;
    PMIx_Load_nspace(cluster, "clusterA");
    PMIx_Load_nspace(nspace, "job42");
    PMIx_Multicluster_nspace_construct(target, cluster, nspace);
    EXPECT(strcmp(target, "clusterA:job42") == 0);
    pmix_nspace_t c2, n2;
    PMIx_Multicluster_nspace_parse(target, c2, n2);
    EXPECT(strcmp(c2, "clusterA") == 0 && strcmp(n2, "job42") == 0);
    /* Split at the first ':'; without one, all is the cluster. */
    PMIx_Load_nspace(target, "c:ns:with:colons");
    PMIx_Multicluster_nspace_parse(target, c2, n2);
    EXPECT(strcmp(c2, "c") == 0 && strcmp(n2, "ns:with:colons") == 0);
    PMIx_Load_nspace(target, "plain");
    PMIx_Multicluster_nspace_parse(target, c2, n2);
    EXPECT(strcmp(c2, "plain") == 0 && n2[0] == '\0');
    /* Too long together: an empty target. */
    memset(cluster, 'c', 200);
    cluster[200] = '\0';
    memset(nspace, 'n', 100);
    nspace[100] = '\0';
    PMIx_Multicluster_nspace_construct(target, cluster, nspace);
    EXPECT(target[0] == '\0');
}

static void test_regex2_and_cpuset(void)
{
    /* A node list that compresses: the "pmix" form, given back exactly. */
    const char *nodes = "node001,node002,node003,node004,node005,node006,node007,node008";
    pmix_regex2_t rx;
    EXPECT(PMIx_generate_regex2(nodes, NULL, 0, &rx) == PMIX_SUCCESS);
    EXPECT(rx.type != NULL && strcmp(rx.type, "pmix") == 0);
    EXPECT(rx.len > 0 && rx.len < strlen(nodes) && rx.bytes[rx.len - 1] == '\0');
    char *back = NULL;
    EXPECT(PMIx_parse_regex2(&rx, NULL, 0, &back) == PMIX_SUCCESS && back != NULL && strcmp(back, nodes) == 0);
    free(back);
    PMIx_Regex2_destruct(&rx);
    EXPECT(rx.bytes == NULL && rx.type == NULL);
    /* One that does not (a proc map, a short list): "raw", the text and its NUL. */
    const char *ppn = "0-3;4-7";
    EXPECT(PMIx_generate_regex2(ppn, NULL, 0, &rx) == PMIX_SUCCESS);
    EXPECT(strcmp(rx.type, "raw") == 0 && rx.len == strlen(ppn) + 1 && memcmp(rx.bytes, ppn, rx.len) == 0);
    EXPECT(PMIx_parse_regex2(&rx, NULL, 0, &back) == PMIX_SUCCESS && strcmp(back, ppn) == 0);
    free(back);
    /* Bytes without their NUL, and an encoding we do not have. */
    rx.len -= 1;
    EXPECT(PMIx_parse_regex2(&rx, NULL, 0, &back) == PMIX_ERR_BAD_PARAM && back == NULL);
    rx.len += 1;
    free(rx.type);
    rx.type = text_copy("compress");
    EXPECT(PMIx_parse_regex2(&rx, NULL, 0, &back) == PMIX_ERR_NOT_SUPPORTED);
    PMIx_Regex2_destruct(&rx);
    EXPECT(PMIx_generate_regex2(NULL, NULL, 0, &rx) == PMIX_ERR_BAD_PARAM);

    /* The server's cpuset parse and its inverse. */
    pmix_cpuset_t cs;
    PMIx_Cpuset_construct(&cs);
    EXPECT(PMIx_server_generate_cpuset("hwloc:0-1,3", &cs) == PMIX_SUCCESS);
    char *text = NULL;
    EXPECT(PMIx_server_generate_cpuset_string(&cs, &text) == PMIX_SUCCESS && text != NULL &&
           strcmp(text, "hwloc:0-1,3") == 0);
    free(text);
    PMIx_Cpuset_destruct(&cs);
    EXPECT(PMIx_server_generate_cpuset("other:0-1", &cs) == PMIX_ERR_NOT_SUPPORTED);
    EXPECT(PMIx_server_generate_cpuset("no colon", &cs) == PMIX_ERR_BAD_PARAM);
    EXPECT(PMIx_server_generate_cpuset("hwloc:x-y", &cs) == PMIX_ERR_BAD_PARAM);
}

int main(void)
{
    test_coord_geometry();
    test_devices();
    test_new_structs();
    test_stats_and_info();
    test_names();
    test_get_number();
    test_sizes();
    test_info_lists();
    test_multicluster();
    test_regex2_and_cpuset();
    if (failures == 0) printf("later families: all checks passed\n");
    return failures == 0 ? 0 : 1;
}
