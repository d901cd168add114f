/* A client built against Debian's OpenPMIx 4.2.2 (libpmix-dev, through
 * pkg-config, as a user builds one): it loads OpenPMIx's libpmix.so.2, not
 * ours, and speaks OpenPMIx's protocol to our server (issue 35). Public API
 * only. Prints one line per call: "<call> <status name> [value]".
 *
 * Without arguments it inits, reads its job data, puts "mykey" =
 * "hello-from-<rank>", commits, fences collecting data, gets every other
 * rank's "mykey", publishes its own key, fences, looks up the next rank's,
 * logs a line, queries the number of process sets, fences and finalizes.
 *
 * "events <mine> <theirs>": inits, registers a handler for code <mine>,
 * fences, notifies <theirs> to its namespace, waits (60 s at most) for one
 * event <mine> ("event <code> from <nspace>.<rank> text=<PMIX_EVENT_TEXT_MESSAGE>"),
 * fences and finalizes.
 *
 * "connect <nspace>": inits, connects its namespace with <nspace> (both
 * whole), reads <nspace>'s job size ("other_size <status> <n>"),
 * disconnects and finalizes.
 *
 * "nocollect": as without arguments, but the fence collects nothing, so
 * each get of a peer's key is a direct modex.
 *
 * "fence-get <rank>:<key>...": inits, puts "mykey" as above, commits, fences
 * collecting data, then gets each <key> of <rank> of its namespace
 * ("get:<rank>:<key> <status> <value>", a string's or a uint16's, uint32's
 * or rank's) and finalizes; "<rank>:<key>:refresh" gets it with
 * PMIX_GET_REFRESH_CACHE, "<rank>:<key>:job" with PMIX_JOB_INFO.
 *
 * "spawn": inits; rank 0 spawns 2 copies of this program ("child"),
 * prints "spawn <status> <nspace>" and the new job's size; all fence and
 * finalize. "child": inits, prints its parent ("parent <status>
 * <nspace>.<rank>"), fences with its own job and finalizes.
 *
 * "abort <rank> <code>": inits, fences; rank <rank> aborts the job with
 * <code>, the others wait in a second fence (ended by the abort).
 *
 * "wait-event <code>": inits, registers a handler for <code>, prints
 * "ready", waits (60 s at most) for one such event (from a tool: pevent),
 * prints it as "events" does, and finalizes.
 *
 * "tool <uri> <nspace>": PMIx_tool_init to the server at <uri> (OpenPMIx's
 * form), a get of <nspace>'s job size ("job_size <status> <n>"), and
 * PMIx_tool_finalize.
 *
 * "extras": the rest of the API, one line each: job control (a cleanup
 * directory), heartbeat monitoring, a credential got and validated, a group
 * of the whole job constructed and destructed, an allocation request, a
 * fabric registration, an IOF pull of the job's stdout and its
 * deregistration. The same binary run on our library (LD_LIBRARY_PATH)
 * must print the same lines. */
#define _GNU_SOURCE /* memmem */
#include <pmix.h>
#include <pmix_tool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int got = 0;
static char seen[600];

static void handler(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                    pmix_info_t results[], size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    const char *text = "-";
    (void) id; (void) results; (void) nresults;
    for (size_t k = 0; k < ninfo; ++k)
        if (PMIX_CHECK_KEY(&info[k], PMIX_EVENT_TEXT_MESSAGE) && info[k].value.type == PMIX_STRING)
            text = info[k].value.data.string;
    pthread_mutex_lock(&lock);
    snprintf(seen, sizeof seen, "event %d from %s.%u text=%s", status, source ? source->nspace : "?",
             source ? source->rank : 0, text);
    got = 1;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void say(const char *call, pmix_status_t rc, const char *value);

/* Waits (60 s at most, only against hangs) for the handler's event and
 * prints it ("no event" if none came). */
static void await_event(void)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 60;
    pthread_mutex_lock(&lock);
    while (!got && pthread_cond_timedwait(&cond, &lock, &until) == 0) {
    }
    printf("%s\n", got ? seen : "no event");
    fflush(stdout);
    pthread_mutex_unlock(&lock);
}
static unsigned get_number(const pmix_proc_t *p, const char *key, const char *label);

/* PMIx_Init and a handler for code `mine`; false if the init failed. */
static int init_with_handler(int mine)
{
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    say("init", rc, "");
    if (rc != PMIX_SUCCESS) return 0;
    pmix_status_t code = mine;
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, handler, NULL, NULL);
    say("register", rc >= 0 ? PMIX_SUCCESS : rc, "");
    return 1;
}

static int events(int mine, int theirs)
{
    if (!init_with_handler(mine)) return 0;
    say("fence", PMIx_Fence(NULL, 0, NULL, 0), "");
    pmix_info_t text;
    PMIX_INFO_LOAD(&text, PMIX_EVENT_TEXT_MESSAGE, "from OpenPMIx", PMIX_STRING);
    say("notify", PMIx_Notify_event(theirs, NULL, PMIX_RANGE_NAMESPACE, &text, 1, NULL, NULL), "");
    PMIX_INFO_DESTRUCT(&text);
    await_event();
    say("fence2", PMIx_Fence(NULL, 0, NULL, 0), "");
    say("finalize", PMIx_Finalize(NULL, 0), "");
    return 0;
}

static int tool(const char *uri, const char *nspace)
{
    pmix_proc_t me, job;
    pmix_info_t where;
    PMIX_INFO_LOAD(&where, PMIX_SERVER_URI, uri, PMIX_STRING);
    pmix_status_t rc = PMIx_tool_init(&me, &where, 1);
    PMIX_INFO_DESTRUCT(&where);
    say("tool_init", rc, "");
    if (rc != PMIX_SUCCESS) return 0;
    PMIX_LOAD_PROCID(&job, nspace, PMIX_RANK_WILDCARD);
    get_number(&job, PMIX_JOB_SIZE, "job_size");
    say("tool_finalize", PMIx_tool_finalize(), "");
    return 0;
}

static int wait_event(int mine)
{
    if (!init_with_handler(mine)) return 0;
    printf("ready\n");
    fflush(stdout);
    await_event();
    say("finalize", PMIx_Finalize(NULL, 0), "");
    return 0;
}

static void say(const char *call, pmix_status_t rc, const char *value)
{
    printf("%s %s%s%s\n", call, PMIx_Error_string(rc), value[0] ? " " : "", value);
    fflush(stdout);
}

static unsigned get_number(const pmix_proc_t *p, const char *key, const char *label)
{
    pmix_value_t *v = NULL;
    char text[64];
    unsigned n = 9999;
    pmix_status_t rc = PMIx_Get(p, key, NULL, 0, &v);
    if (rc == PMIX_SUCCESS && v->type == PMIX_UINT32)
        n = v->data.uint32;
    else if (rc == PMIX_SUCCESS && v->type == PMIX_UINT16)
        n = v->data.uint16;
    snprintf(text, sizeof text, "%u", n);
    say(label, rc, text);
    if (v) PMIX_VALUE_RELEASE(v);
    return n;
}

static int connect_with(const char *other)
{
    pmix_proc_t me, procs[2];
    pmix_value_t *v = NULL;
    char text[64];
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    say("init", rc, "");
    if (rc != PMIX_SUCCESS) return 0;
    PMIX_LOAD_PROCID(&procs[0], me.nspace, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&procs[1], other, PMIX_RANK_WILDCARD);
    say("connect", PMIx_Connect(procs, 2, NULL, 0), "");
    rc = PMIx_Get(&procs[1], PMIX_JOB_SIZE, NULL, 0, &v);
    snprintf(text, sizeof text, "%u", rc == PMIX_SUCCESS && v->type == PMIX_UINT32 ? v->data.uint32 : 9999);
    say("other_size", rc, text);
    if (v) PMIX_VALUE_RELEASE(v);
    say("disconnect", PMIx_Disconnect(procs, 2, NULL, 0), "");
    say("finalize", PMIx_Finalize(NULL, 0), "");
    return 0;
}

static int spawn(const char *self)
{
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    say("init", rc, "");
    if (rc != PMIX_SUCCESS) return 0;
    if (me.rank == 0) {
        pmix_app_t app;
        char nspace[PMIX_MAX_NSLEN + 1] = "";
        char *args[] = {(char *) self, "child", NULL};
        PMIX_APP_CONSTRUCT(&app);
        app.cmd = strdup(self);
        app.argv = args;
        app.maxprocs = 2;
        rc = PMIx_Spawn(NULL, 0, &app, 1, nspace);
        app.argv = NULL;
        PMIX_APP_DESTRUCT(&app);
        say("spawn", rc, nspace);
        if (rc == PMIX_SUCCESS) {
            pmix_proc_t job;
            PMIX_LOAD_PROCID(&job, nspace, PMIX_RANK_WILDCARD);
            get_number(&job, PMIX_JOB_SIZE, "child_size");
        }
    }
    say("fence", PMIx_Fence(NULL, 0, NULL, 0), "");
    say("finalize", PMIx_Finalize(NULL, 0), "");
    return 0;
}

static int child(void)
{
    pmix_proc_t me;
    pmix_value_t *v = NULL;
    char text[600] = "";
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    say("init", rc, "");
    if (rc != PMIX_SUCCESS) return 0;
    rc = PMIx_Get(&me, PMIX_PARENT_ID, NULL, 0, &v);
    if (rc == PMIX_SUCCESS && v->type == PMIX_PROC)
        snprintf(text, sizeof text, "%s.%u", v->data.proc->nspace, v->data.proc->rank);
    say("parent", rc, text);
    if (v) PMIX_VALUE_RELEASE(v);
    say("fence", PMIx_Fence(NULL, 0, NULL, 0), "");
    say("finalize", PMIx_Finalize(NULL, 0), "");
    return 0;
}

static int abort_job(unsigned who, int code)
{
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    say("init", rc, "");
    if (rc != PMIX_SUCCESS) return 0;
    say("fence", PMIx_Fence(NULL, 0, NULL, 0), "");
    if (me.rank == who) say("abort", PMIx_Abort(code, "OpenPMIx client aborts", NULL, 0), "");
    say("fence2", PMIx_Fence(NULL, 0, NULL, 0), "");
    say("finalize", PMIx_Finalize(NULL, 0), "");
    return 0;
}

/* Statuses as numbers: the two libraries name them differently. */
static void code(const char *call, pmix_status_t rc, const char *value)
{
    printf("%s %d%s%s\n", call, rc, value[0] ? " " : "", value);
    fflush(stdout);
}

static int iof_seen = -1;

static void on_output(size_t id, pmix_iof_channel_t channel, pmix_proc_t *source, pmix_byte_object_t *payload,
                      pmix_info_t info[], size_t ninfo)
{
    (void) id; (void) channel; (void) info; (void) ninfo;
    pthread_mutex_lock(&lock);
    if (payload != NULL && payload->size > 0 && memmem(payload->bytes, payload->size, "iof-line-from-", 14) != NULL)
        iof_seen = (int) source->rank;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
}

static int dereg_done = 0;
static pmix_status_t dereg_status = PMIX_SUCCESS;

static void on_dereg(pmix_status_t status, void *cbdata)
{
    (void) cbdata;
    pthread_mutex_lock(&lock);
    dereg_status = status;
    dereg_done = 1;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
}

static int extras(void)
{
    pmix_proc_t me, job;
    pmix_info_t dir[2], *results = NULL;
    size_t nresults = 0;
    char text[64];
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    code("init", rc, "");
    if (rc != PMIX_SUCCESS) return 0;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);

    char dirname[128];
    snprintf(dirname, sizeof dirname, "/tmp/opmx-cleanup.%d", (int) getpid());
    PMIX_INFO_LOAD(&dir[0], PMIX_REGISTER_CLEANUP_DIR, dirname, PMIX_STRING);
    rc = PMIx_Job_control(NULL, 0, dir, 1, &results, &nresults);
    code("job_control", rc, "");
    PMIX_INFO_DESTRUCT(&dir[0]);
    if (results) PMIX_INFO_FREE(results, nresults);
    results = NULL;

    pmix_info_t mon;
    uint32_t seconds = 30;
    PMIX_INFO_LOAD(&mon, PMIX_MONITOR_HEARTBEAT, NULL, PMIX_POINTER);
    PMIX_INFO_LOAD(&dir[0], PMIX_MONITOR_HEARTBEAT_TIME, &seconds, PMIX_UINT32);
    PMIX_INFO_LOAD(&dir[1], PMIX_MONITOR_ID, "opmx-hb", PMIX_STRING);
    rc = PMIx_Process_monitor(&mon, PMIX_MONITOR_HEARTBEAT_ALERT, dir, 2, &results, &nresults);
    code("monitor", rc, "");
    PMIX_INFO_DESTRUCT(&dir[0]);
    PMIX_INFO_DESTRUCT(&dir[1]);
    if (results) PMIX_INFO_FREE(results, nresults);
    results = NULL;
    PMIX_INFO_LOAD(&mon, PMIX_MONITOR_CANCEL, "opmx-hb", PMIX_STRING);
    rc = PMIx_Process_monitor(&mon, PMIX_SUCCESS, NULL, 0, &results, &nresults);
    code("monitor_cancel", rc, "");
    PMIX_INFO_DESTRUCT(&mon);
    if (results) PMIX_INFO_FREE(results, nresults);
    results = NULL;

    pmix_byte_object_t cred;
    PMIX_BYTE_OBJECT_CONSTRUCT(&cred);
    rc = PMIx_Get_credential(NULL, 0, &cred);
    code("credential", rc, cred.size > 0 ? "nonempty" : "empty");
    if (rc == PMIX_SUCCESS) {
        rc = PMIx_Validate_credential(&cred, NULL, 0, &results, &nresults);
        code("validate", rc, "");
        if (results) PMIX_INFO_FREE(results, nresults);
        results = NULL;
    }
    PMIX_BYTE_OBJECT_DESTRUCT(&cred);

    bool yes = true;
    PMIX_INFO_LOAD(&dir[0], PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
    rc = PMIx_Group_construct("opmx-group", &job, 1, dir, 1, &results, &nresults);
    const char *ctx = "none";
    for (size_t k = 0; k < nresults; ++k)
        if (PMIX_CHECK_KEY(&results[k], PMIX_GROUP_CONTEXT_ID)) ctx = "context-id";
    code("group_construct", rc, ctx);
    PMIX_INFO_DESTRUCT(&dir[0]);
    if (results) PMIX_INFO_FREE(results, nresults);
    results = NULL;
    code("group_destruct", PMIx_Group_destruct("opmx-group", NULL, 0), "");

    uint64_t nodes = 1;
    PMIX_INFO_LOAD(&dir[0], PMIX_ALLOC_NUM_NODES, &nodes, PMIX_UINT64);
    rc = PMIx_Allocation_request(PMIX_ALLOC_EXTEND, dir, 1, &results, &nresults);
    code("allocation", rc, "");
    PMIX_INFO_DESTRUCT(&dir[0]);
    if (results) PMIX_INFO_FREE(results, nresults);
    results = NULL;

    pmix_fabric_t fabric;
    PMIX_FABRIC_CONSTRUCT(&fabric);
    rc = PMIx_Fabric_register(&fabric, NULL, 0);
    code("fabric", rc, "");
    if (rc == PMIX_SUCCESS) PMIx_Fabric_deregister(&fabric);

    /* Rank 0 pulls rank 1's stdout, rank 1 prints a line after the fence,
     * rank 0 waits for it (60 s at most) and deregisters. */
    pmix_proc_t one;
    PMIX_LOAD_PROCID(&one, me.nspace, 1);
    size_t pull = 0;
    if (me.rank == 0) {
        rc = PMIx_IOF_pull(&one, 1, NULL, 0, PMIX_FWD_STDOUT_CHANNEL, on_output, NULL, NULL);
        code("iof_pull", rc >= 0 ? PMIX_SUCCESS : rc, "");
        if (rc >= 0) pull = (size_t) rc;
    }
    code("fence_iof", PMIx_Fence(NULL, 0, NULL, 0), "");
    if (me.rank == 1) {
        printf("iof-line-from-1\n");
        fflush(stdout);
    }
    if (me.rank == 0 && rc >= 0) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 60;  /* only against hangs */
        pthread_mutex_lock(&lock);
        while (iof_seen < 0 && pthread_cond_timedwait(&cond, &lock, &until) == 0) {
        }
        snprintf(text, sizeof text, "%d", iof_seen);
        pthread_mutex_unlock(&lock);
        code("iof_received_from", 0, text);
        /* With a callback: OpenPMIx 4.2.2's blocking form releases its
         * request twice (its reply handler after waking the caller, and the
         * caller), which now and then corrupts its heap and hangs the
         * process, under any server. */
        pthread_mutex_lock(&lock);
        dereg_done = 0;
        pthread_mutex_unlock(&lock);
        rc = PMIx_IOF_deregister(pull, NULL, 0, on_dereg, NULL);
        if (rc == PMIX_SUCCESS) {
            pthread_mutex_lock(&lock);
            while (!dereg_done && pthread_cond_timedwait(&cond, &lock, &until) == 0) {
            }
            rc = dereg_done ? dereg_status : PMIX_ERR_TIMEOUT;
            pthread_mutex_unlock(&lock);
        }
        code("iof_deregister", rc, "");
    }
    code("fence", PMIx_Fence(NULL, 0, NULL, 0), "");
    code("finalize", PMIx_Finalize(NULL, 0), "");
    return 0;
}

/* Puts "mykey" = "hello-from-<rank>", commits and fences (collecting data
 * or not). */
static void put_commit_fence(const pmix_proc_t *me, bool collect_data)
{
    char text[64];
    pmix_value_t put;
    snprintf(text, sizeof text, "hello-from-%u", me->rank);
    put.type = PMIX_STRING;
    put.data.string = text;
    say("put", PMIx_Put(PMIX_GLOBAL, "mykey", &put), "");
    say("commit", PMIx_Commit(), "");
    pmix_info_t collect;
    bool yes = collect_data;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    say("fence", PMIx_Fence(NULL, 0, &collect, 1), "");
    PMIX_INFO_DESTRUCT(&collect);
}

static int fence_get(int n, char **wanted)
{
    pmix_proc_t me, peer;
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    say("init", rc, "");
    if (rc != PMIX_SUCCESS)
        return 0;
    put_commit_fence(&me, true);
    for (int k = 0; k < n; ++k) {
        char label[300];
        const char *colon = strchr(wanted[k], ':');
        if (colon == NULL) continue;
        char key[256];
        snprintf(key, sizeof key, "%s", colon + 1);
        char *second = strchr(key, ':');
        pmix_info_t refresh;
        bool yes = true;
        /* ":job" asks with PMIX_JOB_INFO (OpenPMIx's client then reads a
           node-level key such as PMIX_NODEID from the rank's own data),
           any other suffix with PMIX_GET_REFRESH_CACHE */
        PMIX_INFO_LOAD(&refresh, second != NULL && strcmp(second, ":job") == 0 ? PMIX_JOB_INFO : PMIX_GET_REFRESH_CACHE,
                       &yes, PMIX_BOOL);
        if (second != NULL) *second = '\0';
        PMIX_LOAD_PROCID(&peer, me.nspace, (pmix_rank_t) atoi(wanted[k]));
        rc = PMIx_Get(&peer, key, second != NULL ? &refresh : NULL, second != NULL ? 1 : 0, &v);
        PMIX_INFO_DESTRUCT(&refresh);
        snprintf(label, sizeof label, "get:%s", wanted[k]);
        char number[32] = "";
        if (rc == PMIX_SUCCESS && v->type == PMIX_UINT16) snprintf(number, sizeof number, "%u", (unsigned) v->data.uint16);
        if (rc == PMIX_SUCCESS && v->type == PMIX_UINT32) snprintf(number, sizeof number, "%u", v->data.uint32);
        if (rc == PMIX_SUCCESS && v->type == PMIX_PROC_RANK) snprintf(number, sizeof number, "%u", v->data.rank);
        say(label, rc, rc == PMIX_SUCCESS && v->type == PMIX_STRING ? v->data.string : number);
        if (v) PMIX_VALUE_RELEASE(v);
        v = NULL;
    }
    say("finalize", PMIx_Finalize(NULL, 0), "");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "extras") == 0) return extras();
    if (argc == 4 && strcmp(argv[1], "tool") == 0) return tool(argv[2], argv[3]);
    if (argc == 3 && strcmp(argv[1], "wait-event") == 0) return wait_event(atoi(argv[2]));
    if (argc == 3 && strcmp(argv[1], "connect") == 0) return connect_with(argv[2]);
    if (argc == 4 && strcmp(argv[1], "events") == 0) return events(atoi(argv[2]), atoi(argv[3]));
    if (argc == 2 && strcmp(argv[1], "spawn") == 0) return spawn(argv[0]);
    if (argc == 2 && strcmp(argv[1], "child") == 0) return child();
    if (argc == 4 && strcmp(argv[1], "abort") == 0) return abort_job((unsigned) atoi(argv[2]), atoi(argv[3]));
    if (argc >= 3 && strcmp(argv[1], "fence-get") == 0) return fence_get(argc - 2, argv + 2);
    const bool collect_data = !(argc == 2 && strcmp(argv[1], "nocollect") == 0);
    pmix_proc_t me, job, peer;
    pmix_value_t *v = NULL;
    char text[512];
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    snprintf(text, sizeof text, "%s %u", rc == PMIX_SUCCESS ? me.nspace : "-", rc == PMIX_SUCCESS ? me.rank : 0);
    say("init", rc, text);
    if (rc != PMIX_SUCCESS)
        return 0;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    unsigned size = get_number(&job, PMIX_JOB_SIZE, "job_size");
    get_number(&me, PMIX_LOCAL_RANK, "local_rank");
    get_number(&job, PMIX_LOCAL_SIZE, "local_size");
    rc = PMIx_Get(&me, PMIX_HOSTNAME, NULL, 0, &v);
    snprintf(text, sizeof text, "%s", rc == PMIX_SUCCESS && v->type == PMIX_STRING ? v->data.string : "-");
    say("hostname", rc, text);
    if (v) PMIX_VALUE_RELEASE(v);
    v = NULL;

    put_commit_fence(&me, collect_data);
    for (unsigned r = 0; r < size && r < 64; ++r) {
        if (r == me.rank) continue;
        char label[32];
        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        rc = PMIx_Get(&peer, "mykey", NULL, 0, &v);
        snprintf(label, sizeof label, "get:%u", r);
        say(label, rc, rc == PMIX_SUCCESS && v->type == PMIX_STRING ? v->data.string : "");
        if (v) PMIX_VALUE_RELEASE(v);
        v = NULL;
    }
    /* Publish / lookup (through the host's up-calls: under a host without
     * them, answered NOT-SUPPORTED), a log line and a query. */
    pmix_info_t pub;
    char pubkey[64], pubval[64];
    snprintf(pubkey, sizeof pubkey, "opmx.key.%u", me.rank);
    snprintf(pubval, sizeof pubval, "published-by-%u", me.rank);
    PMIX_INFO_LOAD(&pub, pubkey, pubval, PMIX_STRING);
    say("publish", PMIx_Publish(&pub, 1), "");
    PMIX_INFO_DESTRUCT(&pub);
    say("fence2", PMIx_Fence(NULL, 0, NULL, 0), "");
    pmix_pdata_t look;
    PMIX_PDATA_CONSTRUCT(&look);
    snprintf(look.key, sizeof look.key, "opmx.key.%u", (me.rank + 1) % size);
    rc = PMIx_Lookup(&look, 1, NULL, 0);
    say("lookup", rc, rc == PMIX_SUCCESS && look.value.type == PMIX_STRING ? look.value.data.string : "");
    PMIX_PDATA_DESTRUCT(&look);
    pmix_info_t line;
    PMIX_INFO_LOAD(&line, PMIX_LOG_STDERR, "a log line from OpenPMIx\n", PMIX_STRING);
    say("log", PMIx_Log(&line, 1, NULL, 0), "");
    PMIX_INFO_DESTRUCT(&line);
    pmix_query_t query;
    PMIX_QUERY_CONSTRUCT(&query);
    char *keys[] = {PMIX_QUERY_NUM_PSETS, NULL};
    query.keys = keys;
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    rc = PMIx_Query_info(&query, 1, &results, &nresults);
    snprintf(text, sizeof text, "%zu", nresults);
    say("query", rc, text);
    if (results) PMIX_INFO_FREE(results, nresults);
    query.keys = NULL;
    PMIX_QUERY_DESTRUCT(&query);
    say("fence3", PMIx_Fence(NULL, 0, NULL, 0), "");
    say("finalize", PMIx_Finalize(NULL, 0), "");
    return 0;
}
