/* multinode_client: a PMIx client for jobs across nodes (pmixd). Public API only.
 *
 *   multinode_client putget        every rank puts a value naming itself and its node,
 *                                  commits, fences collecting data, and gets every other
 *                                  rank's value (from the fence's data)
 *   multinode_client dmodex        the same with a fence that does not collect: every get
 *                                  of another node's rank is a direct modex
 *   multinode_client stall         ranks on the last node sleep 120 s; the others print
 *                                  "entering fence" and fence; a failed fence prints
 *                                  "fence failed: <status>" and exits 3
 *   multinode_client fencebench ITERS BYTES
 *                                  ITERS collecting fences, each after a put of BYTES;
 *                                  rank 0 prints "fence_us <median> <min>"
 *   multinode_client abort CODE    rank 1 calls PMIx_Abort(CODE); the others wait in a fence
 *
 * Output: "FAIL <mode>: ..." per failed check, "OK <mode> rank=R node=N" per passing
 * process; exit status 1 on any failure. */
#define _GNU_SOURCE
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pmix_proc_t me;
static const char *mode = "?";
static int failures = 0;

#define FAIL(...)                                                   \
    do {                                                            \
        printf("FAIL %s: %s:%u: ", mode, me.nspace, me.rank);       \
        printf(__VA_ARGS__);                                        \
        printf("\n");                                               \
        fflush(stdout);                                             \
        ++failures;                                                 \
    } while (0)

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static uint32_t get_u32(pmix_rank_t rank, const char *key)
{
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, rank);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &v);
    if (rc != PMIX_SUCCESS || v == NULL) {
        FAIL("get %s of rank %u: %s", key, rank, PMIx_Error_string(rc));
        return UINT32_MAX;
    }
    uint32_t out = v->type == PMIX_UINT32 ? v->data.uint32 : UINT32_MAX;
    PMIX_VALUE_RELEASE(v);
    return out;
}

static void put_and_commit(uint32_t node, size_t extra)
{
    char *text = malloc(64 + extra);
    int n = snprintf(text, 64, "rank %u on node %u ", me.rank, node);
    memset(text + n, 'x', extra);
    text[n + extra] = '\0';
    pmix_value_t v;
    PMIX_VALUE_LOAD(&v, text, PMIX_STRING);
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, "mn.value", &v);
    PMIX_VALUE_DESTRUCT(&v);
    free(text);
    if (rc != PMIX_SUCCESS)
        FAIL("put: %s", PMIx_Error_string(rc));
    rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS)
        FAIL("commit: %s", PMIx_Error_string(rc));
}

static pmix_status_t fence(int collect)
{
    pmix_info_t info;
    bool yes = true;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(NULL, 0, collect ? &info : NULL, collect ? 1 : 0);
    PMIX_INFO_DESTRUCT(&info);
    return rc;
}

static void check_all(uint32_t size)
{
    for (uint32_t r = 0; r < size; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        pmix_value_t *v = NULL;
        pmix_status_t rc = PMIx_Get(&p, "mn.value", NULL, 0, &v);
        if (rc != PMIX_SUCCESS || v == NULL || v->type != PMIX_STRING) {
            FAIL("get mn.value of rank %u: %s", r, PMIx_Error_string(rc));
            continue;
        }
        uint32_t node = get_u32(r, PMIX_NODEID);
        char want[64];
        snprintf(want, sizeof want, "rank %u on node %u ", r, node);
        if (strcmp(v->data.string, want) != 0)
            FAIL("rank %u's value is '%s', not '%s'", r, v->data.string, want);
        PMIX_VALUE_RELEASE(v);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: multinode_client MODE [ARGS]\n");
        return 2;
    }
    mode = argv[1];
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        printf("FAIL %s: PMIx_Init: %s\n", mode, PMIx_Error_string(rc));
        return 1;
    }
    uint32_t size = get_u32(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);
    uint32_t nodes = get_u32(PMIX_RANK_WILDCARD, PMIX_NUM_NODES);
    uint32_t node = get_u32(me.rank, PMIX_NODEID);
    int code = 0;
    if (strcmp(mode, "putget") == 0 || strcmp(mode, "dmodex") == 0) {
        put_and_commit(node, 0);
        rc = fence(strcmp(mode, "putget") == 0);
        if (rc != PMIX_SUCCESS)
            FAIL("fence: %s", PMIx_Error_string(rc));
        check_all(size);
        rc = fence(0);
        if (rc != PMIX_SUCCESS)
            FAIL("closing fence: %s", PMIx_Error_string(rc));
    } else if (strcmp(mode, "stall") == 0) {
        if (node == nodes - 1) {
            printf("stalling rank %u on node %u\n", me.rank, node);
            fflush(stdout);
            sleep(120);
        } else {
            printf("entering fence rank %u\n", me.rank);
            fflush(stdout);
            double t0 = now_us();
            rc = fence(1);
            printf("fence failed: %s after %.1f s rank %u\n", PMIx_Error_string(rc), (now_us() - t0) / 1e6,
                   me.rank);
            fflush(stdout);
            code = rc == PMIX_SUCCESS ? 1 : 3;
        }
    } else if (strcmp(mode, "fencebench") == 0 && argc >= 4) {
        int iters = atoi(argv[2]);
        size_t bytes = (size_t) atol(argv[3]);
        double *t = calloc((size_t) iters, sizeof *t);
        for (int k = 0; k < iters; ++k) {
            put_and_commit(node, bytes);
            double t0 = now_us();
            rc = fence(1);
            t[k] = now_us() - t0;
            if (rc != PMIX_SUCCESS) {
                FAIL("fence %d: %s", k, PMIx_Error_string(rc));
                break;
            }
        }
        if (me.rank == 0 && failures == 0) {
            for (int a = 0; a < iters; ++a)
                for (int b = a + 1; b < iters; ++b)
                    if (t[b] < t[a]) {
                        double x = t[a];
                        t[a] = t[b];
                        t[b] = x;
                    }
            printf("fence_us %.1f %.1f\n", t[iters / 2], t[0]);
        }
        free(t);
    } else if (strcmp(mode, "abort") == 0 && argc >= 3) {
        if (me.rank == 1) {
            PMIx_Abort(atoi(argv[2]), "multinode_client aborts", NULL, 0);
            sleep(60);
        } else {
            fence(0);
        }
    } else {
        FAIL("unknown mode or missing arguments");
    }
    if (failures == 0 && code == 0) {
        printf("OK %s rank=%u node=%u\n", mode, me.rank, node);
        fflush(stdout);
    }
    PMIx_Finalize(NULL, 0);
    return failures > 0 ? 1 : code;
}
