/* Every function of docs/local-functions.md called from C (strict C11)
 * through libpmix.so.2, and the libraries they load on demand: neither zlib
 * nor hwloc is in the process before the first call that needs it. Exit
 * status 0 on success; each failed check prints its line. */
#include <pmix.h>
#include <pmix_server.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/api/c_expect.h"

/* Whether a library whose file name contains `name` is mapped here. */
static int mapped(const char *name)
{
    char line[4096];
    int found = 0;
    FILE *maps = fopen("/proc/self/maps", "r");
    if (maps == NULL) {
        return -1;
    }
    while (!found && fgets(line, sizeof line, maps) != NULL) {
        found = strstr(line, name) != NULL;
    }
    fclose(maps);
    return found;
}

static void test_data(void)
{
    uint8_t block[8192];
    uint8_t *packed = NULL, *back = NULL;
    size_t npacked = 0, nback = 0, k;
    int value = 7, *copy = NULL;
    char *text = NULL;
    pmix_info_t info;
    pmix_value_t val;
    pmix_data_buffer_t buffer;
    pmix_byte_object_t payload;
    char bytes[] = "payload";

    for (k = 0; k < sizeof block; ++k) {
        block[k] = (uint8_t)"abc"[k % 3];
    }
    EXPECT(mapped("libz.so") == 0);
    EXPECT(PMIx_Data_compress(block, sizeof block, &packed, &npacked));
    EXPECT(mapped("libz.so") == 1);
    EXPECT(npacked > 4 && npacked < sizeof block);
    EXPECT(PMIx_Data_decompress(packed, npacked, &back, &nback));
    EXPECT(nback == sizeof block && memcmp(back, block, nback) == 0);
    free(packed);
    free(back);

    EXPECT(PMIx_Data_copy((void **)&copy, &value, PMIX_INT) == PMIX_SUCCESS);
    EXPECT(copy != NULL && *copy == 7);
    free(copy);

    EXPECT(PMIx_Data_print(&text, NULL, &value, PMIX_INT) == PMIX_SUCCESS);
    EXPECT(text != NULL && strstr(text, "Value: 7") != NULL);
    free(text);

    PMIX_INFO_LOAD(&info, PMIX_JOB_SIZE, &value, PMIX_INT);
    text = PMIx_Info_string(&info);
    EXPECT(text != NULL && strstr(text, "PMIX_JOB_SIZE") != NULL);
    free(text);
    PMIX_INFO_DESTRUCT(&info);

    PMIX_VALUE_LOAD(&val, "seven", PMIX_STRING);
    text = PMIx_Value_string(&val);
    EXPECT(text != NULL && strstr(text, "seven") != NULL);
    free(text);
    PMIX_VALUE_DESTRUCT(&val);

    payload.bytes = bytes;
    payload.size = sizeof bytes;
    PMIX_DATA_BUFFER_CONSTRUCT(&buffer);
    EXPECT(PMIx_Data_embed(&buffer, &payload) == PMIX_SUCCESS);
    EXPECT(buffer.bytes_used == sizeof bytes);
    EXPECT(payload.bytes == bytes);
    PMIX_DATA_BUFFER_DESTRUCT(&buffer);

    EXPECT(strcmp(PMIx_Get_attribute_string("PMIX_JOB_SIZE"), PMIX_JOB_SIZE) == 0);
    EXPECT(strcmp(PMIx_Get_attribute_name(PMIX_JOB_SIZE), "PMIX_JOB_SIZE") == 0);
}

static int ndist_seen = -1;

static void on_distances(pmix_status_t status, pmix_device_distance_t *dist, size_t ndist, void *cbdata,
                         pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    (void)dist;
    *(pmix_status_t *)cbdata = status;
    ndist_seen = (int)ndist;
    if (release_fn != NULL) {
        release_fn(release_cbdata);
    }
}

static void test_topology(void)
{
    pmix_cpuset_t cpus, parsed;
    pmix_topology_t topo;
    pmix_device_distance_t *dist = NULL;
    size_t ndist = 0;
    pmix_status_t rc, nb_status = PMIX_ERROR;
    pmix_locality_t locality = 0;
    char *text = NULL, *loc = NULL;

    EXPECT(mapped("libhwloc") == 0);
    PMIX_CPUSET_CONSTRUCT(&cpus);
    EXPECT(PMIx_Get_cpuset(&cpus, PMIX_CPUBIND_PROCESS) == PMIX_SUCCESS);
    EXPECT(mapped("libhwloc") == 1);
    EXPECT(PMIx_server_generate_cpuset_string(&cpus, &text) == PMIX_SUCCESS);
    EXPECT(text != NULL && strncmp(text, "hwloc:", 6) == 0);

    PMIX_CPUSET_CONSTRUCT(&parsed);
    EXPECT(PMIx_Parse_cpuset_string("hwloc:0", &parsed) == PMIX_SUCCESS);
    EXPECT(PMIx_server_generate_locality_string(&parsed, &loc) == PMIX_SUCCESS);
    EXPECT(loc != NULL && strstr(loc, "HT0") != NULL);
    EXPECT(PMIx_Get_relative_locality(loc, loc, &locality) == PMIX_SUCCESS);
    EXPECT((locality & PMIX_LOCALITY_SHARE_NODE) != 0);
    EXPECT((locality & PMIX_LOCALITY_SHARE_HWTHREAD) != 0);
    free(loc);
    free(text);

    PMIX_TOPOLOGY_CONSTRUCT(&topo);
    EXPECT(PMIx_Load_topology(&topo) == PMIX_SUCCESS);
    EXPECT(topo.source != NULL && topo.topology != NULL);
    rc = PMIx_Compute_distances(&topo, &cpus, NULL, 0, &dist, &ndist);
    EXPECT(rc == PMIX_SUCCESS || rc == PMIX_ERR_NOT_FOUND || rc == PMIX_ERR_NOT_AVAILABLE);
    EXPECT((rc == PMIX_SUCCESS) == (ndist > 0));
    PMIX_DEVICE_DIST_FREE(dist, ndist);
    EXPECT(PMIx_Compute_distances_nb(&topo, &cpus, NULL, 0, on_distances, &nb_status) == PMIX_SUCCESS);
    EXPECT(nb_status == rc);
    EXPECT(ndist_seen == (int)ndist);

    PMIx_Topology_destruct(&topo);
    PMIx_Cpuset_destruct(&parsed);
    PMIx_Cpuset_destruct(&cpus);
    EXPECT(cpus.source == NULL && cpus.bitmap == NULL);
}

int main(void)
{
    test_data();
    test_topology();
    if (failures != 0) {
        fprintf(stderr, "%d failure(s)\n", failures);
    }
    return failures == 0 ? 0 : 1;
}
