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
 *   multinode_client paced ROUNDS MS
 *                                  ROUNDS rounds of put, commit and collecting fence, MS ms
 *                                  apart; every rank checks every other rank's value of the
 *                                  last round (a job that lasts while a daemon is stopped)
 *   multinode_client fencebench ITERS BYTES
 *                                  ITERS collecting fences, each after a put of BYTES;
 *                                  rank 0 prints "fence_us <median> <min>"
 *   multinode_client abort CODE    rank 1 calls PMIx_Abort(CODE); the others wait in a fence
 *   multinode_client store         publish / lookup / unpublish across nodes: the last rank
 *                                  looks up (PMIX_WAIT) a key rank 0 publishes only after a
 *                                  fence; PROC_LOCAL and NAMESPACE ranges, a duplicate, a
 *                                  wait that times out, an unpublish seen from another node
 *   multinode_client notify RANGE  rank 0 notifies an event (RANGE: session, global,
 *                                  namespace); every other rank must get it
 *   multinode_client spawn N       rank 0 spawns N processes of "multinode_client child
 *                                  SIZE" (SIZE: the parent job's); prints "spawned NSPACE"
 *   multinode_client child SIZE    a spawned process: put / fence / get among its job,
 *                                  checks its parent and the parent job's size (SIZE)
 *   multinode_client iof           rank 0 pulls the stdout of the last rank (another node)
 *                                  with PMIx_IOF_pull; that rank then prints a line, which
 *                                  rank 0 must get: "pulled from rank R: <line>"
 *   multinode_client deadstore     ranks not on node 0 publish a new key every 100 ms
 *                                  until a publish fails (node 0, the store's, is killed);
 *                                  prints "publish failed: <status> after <s> s rank R"
 *                                  and waits for the job's end
 *   multinode_client stdin         rank 0 pushes two lines to the last rank's stdin
 *                                  (PMIx_IOF_push), then the end of its input, then one
 *                                  more line, which must be refused (PMIX_ERR_IOF_COMPLETE);
 *                                  the last rank echoes what it reads: "stdin rank R node N:
 *                                  <line>", and "stdin rank R node N: <eof>" at its end
 *   multinode_client readstdin     the last rank echoes its stdin like that (pmixrun --stdin)
 *   multinode_client deadstdin     rank 0 pushes a line to the last rank every 100 ms until
 *                                  a push fails (that rank's node is killed); prints "push
 *                                  failed: <status> after <s> s" (since the last success)
 *   multinode_client group         every rank constructs a group of all ranks with a context
 *                                  id and PMIX_GROUP_INFO {PMIX_GROUP_LOCAL_CID 1000+rank}, as
 *                                  Open MPI does (pmixd's group up-call joins the nodes), fences
 *                                  over the group's name, destructs it, then reads every rank's
 *                                  PMIX_GROUP_LOCAL_CID qualified by the context id; prints
 *                                  "group ctx=<id>"
 *   multinode_client deadspawn     rank 0 notifies every 100 ms until a notify fails (a
 *                                  node is killed), prints "notify failed: <status>", then
 *                                  spawns and prints "spawn failed: <status> after <s> s"
 *
 * Output: "FAIL <mode>: ..." per failed check, "OK <mode> rank=R node=N" per passing
 * process; exit status 1 on any failure. */
#define _GNU_SOURCE
#include <pmix.h>
#include <pmix_tool.h> /* PMIx_IOF_pull */
#include <signal.h>
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

static void group_case(uint32_t size)
{
    pmix_proc_t *procs = calloc(size, sizeof(pmix_proc_t));
    for (uint32_t r = 0; r < size; ++r)
        PMIX_LOAD_PROCID(&procs[r], me.nspace, r);
    pmix_info_t dirs[3];
    bool yes = true;
    int timeout = 60;
    size_t cid = 1000 + me.rank;
    pmix_data_array_t *array = NULL;
    PMIX_DATA_ARRAY_CREATE(array, 1, PMIX_INFO);
    PMIX_INFO_LOAD((pmix_info_t *) array->array, PMIX_GROUP_LOCAL_CID, &cid, PMIX_SIZE);
    PMIX_INFO_LOAD(&dirs[0], PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&dirs[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
    PMIX_INFO_LOAD(&dirs[2], PMIX_GROUP_INFO, array, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(array);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t rc = PMIx_Group_construct("mngroup", procs, size, dirs, 3, &results, &nresults);
    size_t ctx = 0;
    if (rc != PMIX_SUCCESS)
        FAIL("group construct: %s", PMIx_Error_string(rc));
    else if (nresults == 0 || !PMIX_CHECK_KEY(&results[0], PMIX_GROUP_CONTEXT_ID))
        FAIL("group construct: no context id first among %zu results", nresults);
    else
        ctx = results[0].value.data.size;
    if (results != NULL)
        PMIX_INFO_FREE(results, nresults);
    for (int k = 0; k < 3; ++k)
        PMIX_INFO_DESTRUCT(&dirs[k]);
    printf("group ctx=%zu\n", ctx);
    pmix_proc_t whole;
    PMIX_LOAD_PROCID(&whole, "mngroup", PMIX_RANK_WILDCARD);
    if ((rc = PMIx_Fence(&whole, 1, NULL, 0)) != PMIX_SUCCESS)
        FAIL("fence over the group: %s", PMIx_Error_string(rc));
    if ((rc = PMIx_Group_destruct("mngroup", NULL, 0)) != PMIX_SUCCESS)
        FAIL("group destruct: %s", PMIx_Error_string(rc));
    pmix_info_t q;
    PMIX_INFO_LOAD(&q, PMIX_GROUP_CONTEXT_ID, &ctx, PMIX_SIZE);
    PMIX_INFO_SET_QUALIFIER(&q);
    for (uint32_t r = 0; r < size; ++r) {
        pmix_value_t *v = NULL;
        rc = PMIx_Get(&procs[r], PMIX_GROUP_LOCAL_CID, &q, 1, &v);
        if (rc != PMIX_SUCCESS)
            FAIL("rank %u's PMIX_GROUP_LOCAL_CID: %s", r, PMIx_Error_string(rc));
        else if (v->type != PMIX_SIZE || v->data.size != 1000 + r)
            FAIL("rank %u's PMIX_GROUP_LOCAL_CID: type %d value %zu", r, (int) v->type, v->data.size);
        if (v != NULL)
            PMIX_VALUE_RELEASE(v);
    }
    PMIX_INFO_DESTRUCT(&q);
    free(procs);
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

static int publish_str(const char *key, const char *text, pmix_data_range_t range)
{
    pmix_info_t info[2];
    PMIX_INFO_LOAD(&info[0], key, text, PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_RANGE, &range, PMIX_DATA_RANGE);
    pmix_status_t rc = PMIx_Publish(info, 2);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    return rc;
}

/* Looks `key` up without waiting; the value's text in `out` (or ""). */
static pmix_status_t lookup_str(const char *key, char *out, size_t len)
{
    pmix_pdata_t pd;
    PMIX_PDATA_CONSTRUCT(&pd);
    PMIX_LOAD_KEY(pd.key, key);
    pmix_status_t rc = PMIx_Lookup(&pd, 1, NULL, 0);
    out[0] = '\0';
    if (rc == PMIX_SUCCESS && pd.value.type == PMIX_STRING)
        snprintf(out, len, "%s", pd.value.data.string);
    PMIX_PDATA_DESTRUCT(&pd);
    return rc;
}

static volatile int waited_done = 0;
static volatile pmix_status_t waited_status = PMIX_SUCCESS;
static char waited_text[128];

static void waited_cb(pmix_status_t status, pmix_pdata_t data[], size_t ndata, void *cbdata)
{
    (void) cbdata;
    waited_status = status;
    if (status == PMIX_SUCCESS && ndata == 1 && data[0].value.type == PMIX_STRING)
        snprintf(waited_text, sizeof waited_text, "%s", data[0].value.data.string);
    __atomic_store_n(&waited_done, 1, __ATOMIC_SEQ_CST);
}

#define EVENT_CODE (PMIX_EXTERNAL_ERR_BASE - 11)
static volatile int events_seen = 0;
static volatile uint32_t event_from = UINT32_MAX;

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                     pmix_info_t results[], size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                     void *cbdata)
{
    (void) id; (void) info; (void) ninfo; (void) results; (void) nresults;
    if (status == EVENT_CODE) {
        event_from = source->rank;
        __atomic_add_fetch(&events_seen, 1, __ATOMIC_SEQ_CST);
    }
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void wait_until(volatile int *flag, double seconds)
{
    double end = now_us() + seconds * 1e6;
    while (!__atomic_load_n(flag, __ATOMIC_SEQ_CST) && now_us() < end)
        usleep(10000);
}

static volatile int pulled = 0;
static char pulled_line[640];

static void on_output(size_t ref, pmix_iof_channel_t channel, pmix_proc_t *source, pmix_byte_object_t *payload,
                      pmix_info_t info[], size_t ninfo)
{
    (void) ref; (void) info; (void) ninfo;
    if (payload == NULL || payload->bytes == NULL || !(channel & PMIX_FWD_STDOUT_CHANNEL))
        return;
    char text[256];
    size_t n = payload->size < sizeof text - 1 ? payload->size : sizeof text - 1;
    memcpy(text, payload->bytes, n);
    text[n] = '\0';
    if (strstr(text, "iof line from rank") != NULL && !__atomic_load_n(&pulled, __ATOMIC_SEQ_CST)) {
        char *nl = strchr(text, '\n');
        if (nl != NULL)
            *nl = '\0';
        snprintf(pulled_line, sizeof pulled_line, "%s:%u %s", source->nspace, source->rank, text);
        __atomic_store_n(&pulled, 1, __ATOMIC_SEQ_CST);
    }
}

/* The last rank: echoes each line of its stdin, then its end. */
static void echo_stdin(uint32_t node)
{
    char line[512];
    while (fgets(line, sizeof line, stdin) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        printf("stdin rank %u node %u: %s\n", me.rank, node, line);
        fflush(stdout);
    }
    printf("stdin rank %u node %u: <eof>\n", me.rank, node);
    fflush(stdout);
}

static pmix_status_t push_text(pmix_rank_t rank, const char *text)
{
    pmix_proc_t target;
    PMIX_LOAD_PROCID(&target, me.nspace, rank);
    if (text == NULL)
        return PMIx_IOF_push(&target, 1, NULL, NULL, 0, NULL, NULL);
    pmix_byte_object_t bo;
    bo.bytes = (char *) text;
    bo.size = strlen(text);
    return PMIx_IOF_push(&target, 1, &bo, NULL, 0, NULL, NULL);
}

static pmix_data_range_t range_named(const char *name)
{
    if (strcmp(name, "global") == 0)
        return PMIX_RANGE_GLOBAL;
    if (strcmp(name, "namespace") == 0)
        return PMIX_RANGE_NAMESPACE;
    return PMIX_RANGE_SESSION;
}

static volatile sig_atomic_t term_requested;
static void note_term(int sig) {
    (void) sig;
    term_requested = 1;
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
    } else if (strcmp(mode, "group") == 0) {
        group_case(size);
        if ((rc = fence(0)) != PMIX_SUCCESS)
            FAIL("closing fence: %s", PMIx_Error_string(rc));
    } else if (strcmp(mode, "stall") == 0) {
        if (node == nodes - 1) {
            printf("stalling rank %u on node %u\n", me.rank, node);
            fflush(stdout);
            sleep(120);
        } else {
            /* The first rank whose fence fails exits 3, and pmixrun then
             * terminates the job: a rank not yet scheduled to read its own
             * answer would die of that SIGTERM before saying what its fence
             * returned. Its SIGTERM only notes the request (a handler, not
             * a mask: the library's threads would take a masked one), and
             * it exits right after its line (a fence that never returned
             * still ends by pmixd's SIGKILL, 5 s later, without it). */
            struct sigaction noted;
            memset(&noted, 0, sizeof noted);
            noted.sa_handler = note_term;
            sigemptyset(&noted.sa_mask);
            sigaction(SIGTERM, &noted, NULL);
            printf("entering fence rank %u\n", me.rank);
            fflush(stdout);
            double t0 = now_us();
            rc = fence(1);
            printf("fence failed: %s after %.1f s rank %u\n", PMIx_Error_string(rc), (now_us() - t0) / 1e6,
                   me.rank);
            fflush(stdout);
            code = rc == PMIX_SUCCESS ? 1 : 3;
        }
    } else if (strcmp(mode, "paced") == 0 && argc >= 4) {
        int rounds = atoi(argv[2]);
        long ms = atol(argv[3]);
        for (int k = 0; k < rounds && failures == 0; ++k) {
            if (k > 0)
                usleep((useconds_t) (ms * 1000));
            put_and_commit(node, 0);
            if ((rc = fence(1)) != PMIX_SUCCESS)
                FAIL("fence %d: %s", k, PMIx_Error_string(rc));
        }
        if (failures == 0)
            check_all(size);
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
    } else if (strcmp(mode, "store") == 0) {
        const pmix_rank_t last = size - 1;
        char text[128];
        if (me.rank == last) {
            /* Asked before rank 0 publishes (that is after the fence): the lookup waits. */
            pmix_info_t winfo;
            bool yes = true;
            PMIX_INFO_LOAD(&winfo, PMIX_WAIT, &yes, PMIX_BOOL);
            char *keys[] = {"mn.pub", NULL};
            rc = PMIx_Lookup_nb(keys, &winfo, 1, waited_cb, NULL);
            PMIX_INFO_DESTRUCT(&winfo);
            if (rc != PMIX_SUCCESS)
                FAIL("lookup_nb with wait: %s", PMIx_Error_string(rc));
        }
        if (fence(0) != PMIX_SUCCESS)
            FAIL("fence 1");
        /* Rank 0 publishes as soon as its own fence returns, which can be
           before this rank's does (the nodes are released one after
           another): an answer here is early only if it does not carry the
           published value, which nothing had before the publish. */
        if (me.rank == last && __atomic_load_n(&waited_done, __ATOMIC_SEQ_CST) &&
            (waited_status != PMIX_SUCCESS || strncmp(waited_text, "published by rank 0", 19) != 0))
            FAIL("the waiting lookup was answered before the publish: %s '%s'", PMIx_Error_string(waited_status),
                 waited_text);
        if (me.rank == 0) {
            snprintf(text, sizeof text, "published by rank 0 on node %u", node);
            if ((rc = publish_str("mn.pub", text, PMIX_RANGE_SESSION)) != PMIX_SUCCESS)
                FAIL("publish mn.pub: %s", PMIx_Error_string(rc));
            if ((rc = publish_str("mn.mine", "rank 0's own", PMIX_RANGE_PROC_LOCAL)) != PMIX_SUCCESS)
                FAIL("publish mn.mine: %s", PMIx_Error_string(rc));
            if ((rc = publish_str("mn.ns", "namespace-wide", PMIX_RANGE_NAMESPACE)) != PMIX_SUCCESS)
                FAIL("publish mn.ns: %s", PMIx_Error_string(rc));
            if ((rc = lookup_str("mn.mine", text, sizeof text)) != PMIX_SUCCESS || strcmp(text, "rank 0's own") != 0)
                FAIL("rank 0 looks up its own mn.mine: %s '%s'", PMIx_Error_string(rc), text);
        }
        if (me.rank == last) {
            wait_until(&waited_done, 30);
            char want[128];
            snprintf(want, sizeof want, "published by rank 0 on node %u", get_u32(0, PMIX_NODEID));
            if (!waited_done || waited_status != PMIX_SUCCESS || strcmp(waited_text, want) != 0)
                FAIL("the waiting lookup: done=%d %s '%s'", waited_done, PMIx_Error_string(waited_status), waited_text);
            else
                printf("lookup waited rank %u node %u: %s\n", me.rank, node, waited_text);
            fflush(stdout);
        }
        if (fence(0) != PMIX_SUCCESS)
            FAIL("fence 2");
        if (me.rank == last) {
            if ((rc = lookup_str("mn.mine", text, sizeof text)) != PMIX_ERR_NOT_FOUND)
                FAIL("rank 0's PROC_LOCAL mn.mine is seen from rank %u: %s", me.rank, PMIx_Error_string(rc));
            if ((rc = lookup_str("mn.ns", text, sizeof text)) != PMIX_SUCCESS || strcmp(text, "namespace-wide") != 0)
                FAIL("NAMESPACE mn.ns: %s '%s'", PMIx_Error_string(rc), text);
            pmix_info_t tinfo[2];
            bool yes = true;
            int secs = 1;
            PMIX_INFO_LOAD(&tinfo[0], PMIX_WAIT, &yes, PMIX_BOOL);
            PMIX_INFO_LOAD(&tinfo[1], PMIX_TIMEOUT, &secs, PMIX_INT);
            pmix_pdata_t pd;
            PMIX_PDATA_CONSTRUCT(&pd);
            PMIX_LOAD_KEY(pd.key, "mn.never");
            double t0 = now_us();
            rc = PMIx_Lookup(&pd, 1, tinfo, 2);
            double took = (now_us() - t0) / 1e6;
            if (rc != PMIX_ERR_TIMEOUT || took < 0.9 || took > 10)
                FAIL("a wait for a key never published: %s after %.1f s", PMIx_Error_string(rc), took);
            PMIX_PDATA_DESTRUCT(&pd);
            PMIX_INFO_DESTRUCT(&tinfo[0]);
            PMIX_INFO_DESTRUCT(&tinfo[1]);
        }
        if (me.rank == 1 && (rc = publish_str("mn.pub", "again", PMIX_RANGE_SESSION)) != PMIX_ERR_DUPLICATE_KEY)
            FAIL("a second publish of mn.pub: %s", PMIx_Error_string(rc));
        if (fence(0) != PMIX_SUCCESS)
            FAIL("fence 3");
        if (me.rank == 0) {
            char *keys[] = {"mn.pub", NULL};
            if ((rc = PMIx_Unpublish(keys, NULL, 0)) != PMIX_SUCCESS)
                FAIL("unpublish mn.pub: %s", PMIx_Error_string(rc));
        }
        if (fence(0) != PMIX_SUCCESS)
            FAIL("fence 4");
        if (me.rank == last && (rc = lookup_str("mn.pub", text, sizeof text)) != PMIX_ERR_NOT_FOUND)
            FAIL("mn.pub after its unpublish: %s '%s'", PMIx_Error_string(rc), text);
    } else if (strcmp(mode, "notify") == 0 && argc >= 3) {
        pmix_status_t code = EVENT_CODE;
        rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_event, NULL, NULL);
        if (rc < 0)
            FAIL("register handler: %s", PMIx_Error_string(rc));
        if (fence(0) != PMIX_SUCCESS)
            FAIL("fence 1");
        if (me.rank == 0) {
            rc = PMIx_Notify_event(EVENT_CODE, &me, range_named(argv[2]), NULL, 0, NULL, NULL);
            if (rc != PMIX_SUCCESS)
                FAIL("notify (%s): %s", argv[2], PMIx_Error_string(rc));
        } else {
            wait_until(&events_seen, 20);
            if (events_seen != 1 || event_from != 0)
                FAIL("event from rank 0: seen %d times, from %u", events_seen, event_from);
            else
                printf("event rank %u node %u from rank 0\n", me.rank, node);
            fflush(stdout);
        }
        if (fence(0) != PMIX_SUCCESS)
            FAIL("fence 2");
    } else if (strcmp(mode, "spawn") == 0 && argc >= 3) {
        if (me.rank == 0) {
            char sz[16];
            snprintf(sz, sizeof sz, "%u", size);
            char *child_argv[] = {argv[0], "child", sz, NULL};
            pmix_app_t app;
            PMIX_APP_CONSTRUCT(&app);
            app.cmd = strdup(argv[0]);
            app.argv = child_argv;
            app.maxprocs = atoi(argv[2]);
            pmix_nspace_t child;
            rc = PMIx_Spawn(NULL, 0, &app, 1, child);
            app.argv = NULL;
            free(app.cmd);
            app.cmd = NULL;
            if (rc != PMIX_SUCCESS)
                FAIL("spawn: %s", PMIx_Error_string(rc));
            else
                printf("spawned %s\n", child);
            fflush(stdout);
            /* The parent job stays until every child has published that it is done. */
            int n = atoi(argv[2]);
            pmix_pdata_t *pd;
            PMIX_PDATA_CREATE(pd, (size_t) n);
            for (int k = 0; k < n; ++k)
                snprintf(pd[k].key, sizeof pd[k].key, "mn.childdone%d", k);
            pmix_info_t winfo;
            bool yes = true;
            PMIX_INFO_LOAD(&winfo, PMIX_WAIT, &yes, PMIX_BOOL);
            if (rc == PMIX_SUCCESS && (rc = PMIx_Lookup(pd, (size_t) n, &winfo, 1)) != PMIX_SUCCESS)
                FAIL("lookup of the children's keys: %s", PMIx_Error_string(rc));
            PMIX_INFO_DESTRUCT(&winfo);
            PMIX_PDATA_FREE(pd, (size_t) n);
        }
        if (fence(0) != PMIX_SUCCESS)
            FAIL("the parent job's closing fence");
    } else if (strcmp(mode, "child") == 0 && argc >= 3) {
        pmix_value_t *v = NULL;
        rc = PMIx_Get(&me, PMIX_PARENT_ID, NULL, 0, &v);
        if (rc != PMIX_SUCCESS || v == NULL || v->type != PMIX_PROC)
            FAIL("PMIX_PARENT_ID: %s", PMIx_Error_string(rc));
        char parent[PMIX_MAX_NSLEN + 1] = "";
        if (v != NULL && v->type == PMIX_PROC) {
            snprintf(parent, sizeof parent, "%s", v->data.proc->nspace);
            if (v->data.proc->rank != 0)
                FAIL("parent rank %u, not 0", v->data.proc->rank);
        }
        if (v != NULL)
            PMIX_VALUE_RELEASE(v);
        if (strncmp(me.nspace, parent, strlen(parent)) != 0 || me.nspace[strlen(parent)] != '.')
            FAIL("nspace %s is not the parent's %s plus a suffix", me.nspace, parent);
        pmix_proc_t pw;
        PMIX_LOAD_PROCID(&pw, parent, PMIX_RANK_WILDCARD);
        rc = PMIx_Get(&pw, PMIX_JOB_SIZE, NULL, 0, &v);
        if (rc != PMIX_SUCCESS || v == NULL || v->type != PMIX_UINT32 || v->data.uint32 != (uint32_t) atoi(argv[2]))
            FAIL("the parent job's size: %s", PMIx_Error_string(rc));
        if (v != NULL)
            PMIX_VALUE_RELEASE(v);
        put_and_commit(node, 0);
        if ((rc = fence(1)) != PMIX_SUCCESS)
            FAIL("fence among the spawned: %s", PMIx_Error_string(rc));
        check_all(size);
        char key[64];
        snprintf(key, sizeof key, "mn.childdone%u", me.rank);
        if (failures == 0 && (rc = publish_str(key, "done", PMIX_RANGE_SESSION)) != PMIX_SUCCESS)
            FAIL("publish %s: %s", key, PMIx_Error_string(rc));
    } else if (strcmp(mode, "iof") == 0) {
        const pmix_rank_t last = size - 1;
        if (me.rank == 0) {
            pmix_proc_t src;
            PMIX_LOAD_PROCID(&src, me.nspace, last);
            rc = PMIx_IOF_pull(&src, 1, NULL, 0, PMIX_FWD_STDOUT_CHANNEL, on_output, NULL, NULL);
            if (rc < 0)
                FAIL("IOF_pull of rank %u: %s", last, PMIx_Error_string(rc));
        }
        if (fence(0) != PMIX_SUCCESS)
            FAIL("fence 1");
        if (me.rank == last) {
            printf("iof line from rank %u on node %u\n", me.rank, node);
            fflush(stdout);
        }
        if (me.rank == 0) {
            wait_until(&pulled, 20);
            if (!pulled)
                FAIL("rank %u's line never arrived", last);
            else
                printf("pulled from rank %u: %s\n", last, pulled_line);
            fflush(stdout);
        }
        if (fence(0) != PMIX_SUCCESS)
            FAIL("fence 2");
    } else if (strcmp(mode, "stdin") == 0) {
        const pmix_rank_t last = size - 1;
        if (me.rank == 0) {
            char text[128];
            for (int k = 1; k <= 2; ++k) {
                snprintf(text, sizeof text, "pushed line %d from rank %u on node %u\n", k, me.rank, node);
                if ((rc = push_text(last, text)) != PMIX_SUCCESS)
                    FAIL("push of line %d to rank %u: %s", k, last, PMIx_Error_string(rc));
            }
            if ((rc = push_text(last, NULL)) != PMIX_SUCCESS)
                FAIL("push of the end of input to rank %u: %s", last, PMIx_Error_string(rc));
            rc = push_text(last, "too late\n");
            printf("push after the end: %s\n", PMIx_Error_string(rc));
            fflush(stdout);
            if (rc != PMIX_ERR_IOF_COMPLETE)
                FAIL("a push after the end of input: %s, not PMIX_ERR_IOF_COMPLETE", PMIx_Error_string(rc));
        }
        if (me.rank == last)
            echo_stdin(node);
        if (fence(0) != PMIX_SUCCESS)
            FAIL("fence");
    } else if (strcmp(mode, "readstdin") == 0) {
        if (me.rank == size - 1)
            echo_stdin(node);
        if (fence(0) != PMIX_SUCCESS)
            FAIL("fence");
    } else if (strcmp(mode, "deadstdin") == 0) {
        const pmix_rank_t last = size - 1;
        if (me.rank == last) {
            echo_stdin(node);
            sleep(120);
        } else if (me.rank != 0) {
            sleep(120);
        } else {
            double last_ok = now_us();
            for (int i = 0;; ++i) {
                char text[64];
                snprintf(text, sizeof text, "line %d\n", i);
                rc = push_text(last, text);
                if (rc != PMIX_SUCCESS)
                    break;
                last_ok = now_us();
                usleep(100000);
            }
            printf("push failed: %s after %.1f s\n", PMIx_Error_string(rc), (now_us() - last_ok) / 1e6);
            fflush(stdout);
            sleep(60);
            code = 3;
        }
    } else if (strcmp(mode, "deadstore") == 0) {
        if (node == 0) {
            sleep(120);
        } else {
            double last_ok = now_us();
            for (int i = 0;; ++i) {
                char key[64];
                snprintf(key, sizeof key, "mn.k%u.%d", me.rank, i);
                rc = publish_str(key, "x", PMIX_RANGE_SESSION);
                if (rc != PMIX_SUCCESS)
                    break;
                last_ok = now_us();
                usleep(100000);
            }
            printf("publish failed: %s after %.1f s rank %u\n", PMIx_Error_string(rc), (now_us() - last_ok) / 1e6,
                   me.rank);
            fflush(stdout);
            /* A failure would make this node's launcher end its ranks before they print: the job's end
             * (the lost node) ends this one. */
            sleep(60);
            code = 3;
        }
    } else if (strcmp(mode, "deadspawn") == 0) {
        if (me.rank != 0) {
            sleep(120);
        } else {
            for (;;) {
                rc = PMIx_Notify_event(EVENT_CODE, &me, PMIX_RANGE_SESSION, NULL, 0, NULL, NULL);
                if (rc != PMIX_SUCCESS)
                    break;
                usleep(100000);
            }
            printf("notify failed: %s\n", PMIx_Error_string(rc));
            fflush(stdout);
            char *child_argv[] = {argv[0], "child", "1", NULL};
            pmix_app_t app;
            PMIX_APP_CONSTRUCT(&app);
            app.cmd = strdup(argv[0]);
            app.argv = child_argv;
            app.maxprocs = 1;
            pmix_nspace_t child;
            double t0 = now_us();
            rc = PMIx_Spawn(NULL, 0, &app, 1, child);
            app.argv = NULL;
            free(app.cmd);
            app.cmd = NULL;
            printf("spawn failed: %s after %.1f s\n", PMIx_Error_string(rc), (now_us() - t0) / 1e6);
            fflush(stdout);
            sleep(60);
            code = 3;
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
