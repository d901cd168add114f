/* A host of the test's own built against Debian's OpenPMIx 4.2.2 server
 * library (issue 36): it serves clients of ours with OpenPMIx's server, as
 * an RM built on OpenPMIx does. One node, one job of N ranks of a program:
 *
 *   openpmix_host <tmpdir> <nprocs> <program> [args...]
 *
 * Every rank gets the environment PMIx_server_setup_fork gives; the host
 * waits for all of them (and for the processes they spawn) and exits 0 when
 * all exited 0, else with the first failure's status. It writes rendezvous
 * files in <tmpdir> (tool and system support), so tools find it there.
 * What each up-call does (printed on stderr as "host: ..."):
 *   fence_nb          hands the node's data back (one node: all of it)
 *   publish/lookup/unpublish  a table of its own
 *   spawn             starts the applications as a new namespace
 *   connect/disconnect, register/deregister events, notify   succeed
 *   query             PMIX_QUERY_NAMESPACES: the namespaces it registered;
 *                     PMIX_QUERY_PROC_TABLE: the processes of one of them
 *   log               prints each string it is given
 *   job_control       one result, "host.jctrl" = true
 *   get/validate_credential  "host-credential-<uid>" and its uid
 *   iof_pull          agrees, then delivers one line from rank 0's stdout
 *   push_stdin        prints what it is given for whom
 *   allocate          answers PMIX_ALLOC_ID "host-alloc-<directive>"
 *   group             a context id (42) when one is asked for
 *   abort             prints the status, then ends every process
 *   tool_connected    names the tool "openpmix-host-tool.<n>", rank 0 */
#define _GNU_SOURCE
#include <pmix.h>
#include <pmix_server.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define SAY(...)                        \
    do {                                \
        fprintf(stderr, "host: " __VA_ARGS__); \
        fputc('\n', stderr);            \
    } while (0)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t children[256];
static int nchildren;
/* Each process started: its identity and program (PMIX_QUERY_PROC_TABLE). */
static struct {
    pmix_proc_t proc;
    char exe[256];
} started[256];
static int abort_status = -1;
static char nspaces[1024] = "openpmix-host";
static int nspawned, ntools;

/* ---- waiting for the server library's callbacks ---- */
typedef struct {
    pthread_mutex_t m;
    pthread_cond_t c;
    bool done;
    pmix_status_t status;
} wait_t;
#define WAIT_INIT {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, PMIX_SUCCESS}

static void op_done(pmix_status_t status, void *cbdata)
{
    wait_t *w = cbdata;
    pthread_mutex_lock(&w->m);
    w->status = status;
    w->done = true;
    pthread_cond_signal(&w->c);
    pthread_mutex_unlock(&w->m);
}

static pmix_status_t wait_op(wait_t *w)
{
    pthread_mutex_lock(&w->m);
    while (!w->done) pthread_cond_wait(&w->c, &w->m);
    pthread_mutex_unlock(&w->m);
    return w->status;
}

/* ---- starting a job of `n` processes in namespace `ns` ---- */
static pmix_status_t start_job(const char *ns, int n, char *const argv[])
{
    char host[256];
    gethostname(host, sizeof host);
    /* OPENPMIX_HOST_REMOTE=k: the first job has k more ranks on a node
       named "othernode", which this host does not start. */
    const char *remote_env = getenv("OPENPMIX_HOST_REMOTE");
    const int remote = remote_env != NULL && strcmp(ns, "openpmix-host") == 0 ? atoi(remote_env) : 0;
    const int total = n + remote;
    char peers[1024] = "", ppn[2048] = "", nodes[512] = "";
    for (int r = 0; r < n; r++) snprintf(peers + strlen(peers), sizeof peers - strlen(peers), "%s%d", r ? "," : "", r);
    snprintf(ppn, sizeof ppn, "%s", peers);
    snprintf(nodes, sizeof nodes, "%s%s", host, remote > 0 ? ",othernode" : "");
    for (int r = n; r < total; r++)
        snprintf(ppn + strlen(ppn), sizeof ppn - strlen(ppn), "%s%d", r == n ? ";" : ",", r);
    char *node_map = NULL, *proc_map = NULL;
    PMIx_generate_regex(nodes, &node_map);
    PMIx_generate_ppn(ppn, &proc_map);
    uint32_t size = (uint32_t)total, here = (uint32_t)n, zero = 0;
    size_t ninfo = 9 + (size_t)total;
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, ninfo);
    PMIX_INFO_LOAD(&info[0], PMIX_UNIV_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[1], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[2], PMIX_LOCAL_SIZE, &here, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[3], PMIX_NODE_SIZE, &here, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[4], PMIX_MAX_PROCS, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[5], PMIX_LOCAL_PEERS, peers, PMIX_STRING);
    PMIX_INFO_LOAD(&info[6], PMIX_NODE_MAP, node_map, PMIX_REGEX);
    PMIX_INFO_LOAD(&info[7], PMIX_PROC_MAP, proc_map, PMIX_REGEX);
    PMIX_INFO_LOAD(&info[8], PMIX_APPNUM, &zero, PMIX_UINT32);
    for (int r = 0; r < total; r++) {
        pmix_data_array_t *d;
        PMIX_DATA_ARRAY_CREATE(d, 4, PMIX_INFO);
        pmix_info_t *p = d->array;
        pmix_rank_t rank = (pmix_rank_t)r;
        uint16_t local = (uint16_t)(r < n ? r : r - n);
        PMIX_INFO_LOAD(&p[0], PMIX_RANK, &rank, PMIX_PROC_RANK);
        PMIX_INFO_LOAD(&p[1], PMIX_LOCAL_RANK, &local, PMIX_UINT16);
        PMIX_INFO_LOAD(&p[2], PMIX_NODE_RANK, &local, PMIX_UINT16);
        PMIX_INFO_LOAD(&p[3], PMIX_HOSTNAME, r < n ? host : "othernode", PMIX_STRING);
        PMIX_INFO_LOAD(&info[9 + r], PMIX_PROC_DATA, d, PMIX_DATA_ARRAY);
        PMIX_DATA_ARRAY_FREE(d);
    }
    free(node_map);
    free(proc_map);
    wait_t w = WAIT_INIT;
    pmix_status_t rc = PMIx_server_register_nspace(ns, n, info, ninfo, op_done, &w);
    if (rc == PMIX_SUCCESS) rc = wait_op(&w);
    PMIX_INFO_FREE(info, ninfo);
    if (rc != PMIX_SUCCESS) {
        SAY("register_nspace %s: %s", ns, PMIx_Error_string(rc));
        return rc;
    }
    for (int r = 0; r < n; r++) {
        pmix_proc_t proc;
        PMIX_PROC_LOAD(&proc, ns, (pmix_rank_t)r);
        wait_t c = WAIT_INIT;
        rc = PMIx_server_register_client(&proc, getuid(), getgid(), NULL, op_done, &c);
        if (rc == PMIX_SUCCESS) rc = wait_op(&c);
        if (rc != PMIX_SUCCESS) {
            SAY("register_client %s:%d: %s", ns, r, PMIx_Error_string(rc));
            return rc;
        }
        /* The environment: ours, then what the server adds. */
        size_t count = 0;
        while (environ[count] != NULL) count++;
        char **env = calloc(count + 1, sizeof(char *));
        for (size_t k = 0; k < count; k++) env[k] = strdup(environ[k]);
        rc = PMIx_server_setup_fork(&proc, &env);
        if (rc != PMIX_SUCCESS) {
            SAY("setup_fork %s:%d: %s", ns, r, PMIx_Error_string(rc));
            return rc;
        }
        pid_t pid = fork();
        if (pid == 0) {
            execve(argv[0], argv, env);
            perror("execve");
            _exit(127);
        }
        for (char **e = env; *e != NULL; e++) free(*e);
        free(env);
        pthread_mutex_lock(&lock);
        if (pid > 0 && nchildren < 256) {
            started[nchildren].proc = proc;
            snprintf(started[nchildren].exe, sizeof started[nchildren].exe, "%s", argv[0]);
            children[nchildren++] = pid;
        }
        pthread_mutex_unlock(&lock);
    }
    return PMIX_SUCCESS;
}

/* ---- the up-calls ---- */
static pmix_status_t client_connected(const pmix_proc_t *proc, void *object, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)object; (void)cbfunc; (void)cbdata;
    SAY("connected %s:%u", proc->nspace, proc->rank);
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t client_finalized(const pmix_proc_t *proc, void *object, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)object; (void)cbfunc; (void)cbdata;
    SAY("finalized %s:%u", proc->nspace, proc->rank);
    return PMIX_OPERATION_SUCCEEDED;
}

static void *kill_all(void *arg)
{
    (void)arg;
    usleep(200 * 1000);
    pthread_mutex_lock(&lock);
    for (int k = 0; k < nchildren; k++) kill(children[k], SIGKILL);
    pthread_mutex_unlock(&lock);
    return NULL;
}

static pmix_status_t do_abort(const pmix_proc_t *proc, void *object, int status, const char msg[],
                              pmix_proc_t procs[], size_t nprocs, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)object; (void)procs; (void)nprocs; (void)cbfunc; (void)cbdata;
    SAY("abort by %s:%u status %d: %s", proc->nspace, proc->rank, status, msg ? msg : "");
    pthread_mutex_lock(&lock);
    if (abort_status < 0) abort_status = status;
    pthread_mutex_unlock(&lock);
    pthread_t t;
    pthread_create(&t, NULL, kill_all, NULL);
    pthread_detach(t);
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t fence_nb(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[], size_t ninfo,
                              char *data, size_t ndata, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    (void)procs; (void)info; (void)ninfo;
    SAY("fence of %zu procs, %zu bytes", nprocs, ndata);
    char *copy = malloc(ndata + 1);
    memcpy(copy, data, ndata);
    cbfunc(PMIX_SUCCESS, copy, ndata, cbdata, free, copy);
    return PMIX_SUCCESS;
}

/* Published data: key, value, publisher. */
static struct {
    pmix_info_t item;
    pmix_proc_t owner;
    bool used;
} published[64];

static pmix_status_t publish(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
                             pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < ninfo; i++) {
        if (strncmp(info[i].key, "pmix.", 5) == 0) continue; /* directives */
        for (int k = 0; k < 64; k++)
            if (!published[k].used) {
                PMIX_INFO_XFER(&published[k].item, &info[i]);
                published[k].owner = *proc;
                published[k].used = true;
                SAY("publish %s by %s:%u", info[i].key, proc->nspace, proc->rank);
                break;
            }
    }
    pthread_mutex_unlock(&lock);
    cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

static pmix_status_t lookup(const pmix_proc_t *proc, char **keys, const pmix_info_t info[], size_t ninfo,
                            pmix_lookup_cbfunc_t cbfunc, void *cbdata)
{
    (void)proc; (void)info; (void)ninfo;
    pmix_pdata_t found[64];
    size_t n = 0;
    pthread_mutex_lock(&lock);
    for (int k = 0; keys[k] != NULL; k++)
        for (int j = 0; j < 64 && n < 64; j++)
            if (published[j].used && strcmp(published[j].item.key, keys[k]) == 0) {
                PMIX_PDATA_CONSTRUCT(&found[n]);
                found[n].proc = published[j].owner;
                PMIX_LOAD_KEY(found[n].key, keys[k]);
                PMIx_Value_xfer(&found[n].value, &published[j].item.value);
                n++;
            }
    pthread_mutex_unlock(&lock);
    SAY("lookup: %zu found", n);
    cbfunc(n > 0 ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, found, n, cbdata);
    for (size_t k = 0; k < n; k++) PMIX_PDATA_DESTRUCT(&found[k]);
    return PMIX_SUCCESS;
}

static pmix_status_t unpublish(const pmix_proc_t *proc, char **keys, const pmix_info_t info[], size_t ninfo,
                               pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)info; (void)ninfo;
    pthread_mutex_lock(&lock);
    for (int j = 0; j < 64; j++) {
        if (!published[j].used || !PMIX_CHECK_PROCID(&published[j].owner, proc)) continue;
        bool match = keys == NULL;
        for (int k = 0; keys != NULL && keys[k] != NULL; k++)
            if (strcmp(keys[k], published[j].item.key) == 0) match = true;
        if (match) {
            PMIX_INFO_DESTRUCT(&published[j].item);
            published[j].used = false;
        }
    }
    pthread_mutex_unlock(&lock);
    cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

typedef struct {
    char ns[PMIX_MAX_NSLEN + 1];
    int n;
    char **argv;
    pmix_spawn_cbfunc_t cbfunc;
    void *cbdata;
} spawn_t;

static void *spawner(void *arg)
{
    spawn_t *s = arg;
    pmix_status_t rc = start_job(s->ns, s->n, s->argv);
    SAY("spawned %d of %s: %s", s->n, s->ns, PMIx_Error_string(rc));
    s->cbfunc(rc, s->ns, s->cbdata);
    for (char **a = s->argv; *a != NULL; a++) free(*a);
    free(s->argv);
    free(s);
    return NULL;
}

static pmix_status_t spawn(const pmix_proc_t *proc, const pmix_info_t job_info[], size_t ninfo,
                           const pmix_app_t apps[], size_t napps, pmix_spawn_cbfunc_t cbfunc, void *cbdata)
{
    (void)proc; (void)job_info; (void)ninfo;
    if (napps != 1 || apps[0].cmd == NULL || apps[0].maxprocs < 1) return PMIX_ERR_NOT_SUPPORTED;
    spawn_t *s = calloc(1, sizeof *s);
    pthread_mutex_lock(&lock);
    snprintf(s->ns, sizeof s->ns, "openpmix-host.spawn%d", ++nspawned);
    strncat(nspaces, ",", sizeof nspaces - strlen(nspaces) - 1);
    strncat(nspaces, s->ns, sizeof nspaces - strlen(nspaces) - 1);
    pthread_mutex_unlock(&lock);
    s->n = apps[0].maxprocs;
    int argc = 0;
    while (apps[0].argv != NULL && apps[0].argv[argc] != NULL) argc++;
    s->argv = calloc((size_t)argc + 2, sizeof(char *));
    s->argv[0] = strdup(apps[0].cmd);
    for (int k = 1; k < argc; k++) s->argv[k] = strdup(apps[0].argv[k]);
    s->cbfunc = cbfunc;
    s->cbdata = cbdata;
    pthread_t t;
    pthread_create(&t, NULL, spawner, s); /* register_nspace waits on the server's thread: not here */
    pthread_detach(t);
    return PMIX_SUCCESS;
}

static pmix_status_t connect_procs(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                                   size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)procs; (void)info; (void)ninfo;
    SAY("connect of %zu procs", nprocs);
    cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

static pmix_status_t disconnect_procs(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                                      size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)procs; (void)info; (void)ninfo;
    SAY("disconnect of %zu procs", nprocs);
    cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

static pmix_status_t register_events(pmix_status_t *codes, size_t ncodes, const pmix_info_t info[], size_t ninfo,
                                     pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)codes; (void)ncodes; (void)info; (void)ninfo; (void)cbfunc; (void)cbdata;
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t deregister_events(pmix_status_t *codes, size_t ncodes, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)codes; (void)ncodes; (void)cbfunc; (void)cbdata;
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t notify_event(pmix_status_t code, const pmix_proc_t *source, pmix_data_range_t range,
                                  pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)info; (void)ninfo; (void)cbfunc; (void)cbdata;
    SAY("event %d from %s:%u range %d", code, source->nspace, source->rank, range);
    return PMIX_OPERATION_SUCCEEDED;
}

/* Results handed to an info callback stay the host's until the server
 * releases them (it reads them later, on its own thread). */
typedef struct {
    pmix_info_t *info;
    size_t n;
} results_t;

static void release_results(void *cbdata)
{
    results_t *r = cbdata;
    PMIX_INFO_FREE(r->info, r->n);
    free(r);
}

static results_t *new_results(size_t n)
{
    results_t *r = malloc(sizeof *r);
    r->n = n;
    PMIX_INFO_CREATE(r->info, n);
    return r;
}

static pmix_status_t query(pmix_proc_t *proc, pmix_query_t *queries, size_t nqueries, pmix_info_cbfunc_t cbfunc,
                           void *cbdata)
{
    (void)proc;
    results_t *r = new_results(1);
    pmix_info_t *results = r->info;
    size_t n = 0;
    char host[256];
    gethostname(host, sizeof host);
    for (size_t q = 0; q < nqueries && n == 0; q++)
        for (size_t k = 0; queries[q].keys != NULL && queries[q].keys[k] != NULL && n == 0; k++) {
            pthread_mutex_lock(&lock);
            if (strcmp(queries[q].keys[k], PMIX_QUERY_NAMESPACES) == 0) {
                PMIX_INFO_LOAD(&results[0], PMIX_QUERY_NAMESPACES, nspaces, PMIX_STRING);
                n = 1;
            } else if (strcmp(queries[q].keys[k], PMIX_QUERY_PROC_TABLE) == 0) {
                /* The processes of the namespace the qualifier names. */
                const char *ns = NULL;
                for (size_t m = 0; m < queries[q].nqual; m++)
                    if (PMIX_CHECK_KEY(&queries[q].qualifiers[m], PMIX_NSPACE))
                        ns = queries[q].qualifiers[m].value.data.string;
                size_t count = 0;
                for (int c = 0; c < nchildren; c++)
                    if (ns != NULL && PMIX_CHECK_NSPACE(started[c].proc.nspace, ns)) count++;
                if (count > 0) {
                    pmix_data_array_t darray;
                    darray.type = PMIX_PROC_INFO;
                    darray.size = count;
                    pmix_proc_info_t *table;
                    PMIX_PROC_INFO_CREATE(table, count);
                    darray.array = table;
                    size_t t = 0;
                    for (int c = 0; c < nchildren; c++) {
                        if (!PMIX_CHECK_NSPACE(started[c].proc.nspace, ns)) continue;
                        table[t].proc = started[c].proc;
                        table[t].hostname = strdup(host);
                        table[t].executable_name = strdup(started[c].exe);
                        table[t].pid = children[c];
                        table[t].state = PMIX_PROC_STATE_RUNNING;
                        t++;
                    }
                    PMIX_INFO_LOAD(&results[0], PMIX_QUERY_PROC_TABLE, &darray, PMIX_DATA_ARRAY);
                    PMIX_PROC_INFO_FREE(table, count);
                    n = 1;
                }
            }
            pthread_mutex_unlock(&lock);
        }
    cbfunc(n > 0 ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, results, n, cbdata, release_results, r);
    return PMIX_SUCCESS;
}

static void tool_connected(pmix_info_t *info, size_t ninfo, pmix_tool_connection_cbfunc_t cbfunc, void *cbdata)
{
    (void)info; (void)ninfo;
    pmix_proc_t proc;
    char ns[PMIX_MAX_NSLEN + 1];
    pthread_mutex_lock(&lock);
    snprintf(ns, sizeof ns, "openpmix-host-tool.%d", ++ntools);
    pthread_mutex_unlock(&lock);
    PMIX_PROC_LOAD(&proc, ns, 0);
    SAY("tool connected as %s", ns);
    cbfunc(PMIX_SUCCESS, &proc, cbdata);
}

typedef struct {
    pmix_op_cbfunc_t cbfunc;
    void *cbdata;
} later_t;

static void *complete_later(void *arg)
{
    later_t *l = arg;
    l->cbfunc(PMIX_SUCCESS, l->cbdata);
    free(l);
    return NULL;
}

static void do_log(const pmix_proc_t *client, const pmix_info_t data[], size_t ndata, const pmix_info_t directives[],
                   size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)directives; (void)ndirs;
    for (size_t i = 0; i < ndata; i++)
        if (data[i].value.type == PMIX_STRING)
            SAY("log from %s:%u %s=%s", client->nspace, client->rank, data[i].key, data[i].value.data.string);
    /* Completed from another thread: OpenPMIx 4.2.2's server deadlocks on a
     * log completed inside the up-call. */
    later_t *l = malloc(sizeof *l);
    l->cbfunc = cbfunc;
    l->cbdata = cbdata;
    pthread_t t;
    pthread_create(&t, NULL, complete_later, l);
    pthread_detach(t);
}

static pmix_status_t job_control(const pmix_proc_t *requestor, const pmix_proc_t targets[], size_t ntargets,
                                 const pmix_info_t directives[], size_t ndirs, pmix_info_cbfunc_t cbfunc,
                                 void *cbdata)
{
    (void)targets; (void)directives;
    SAY("job control by %s:%u: %zu targets, %zu directives", requestor->nspace, requestor->rank, ntargets, ndirs);
    results_t *r = new_results(1);
    bool yes = true;
    PMIX_INFO_LOAD(&r->info[0], "host.jctrl", &yes, PMIX_BOOL);
    cbfunc(PMIX_SUCCESS, r->info, 1, cbdata, release_results, r);
    return PMIX_SUCCESS;
}

static pmix_status_t get_credential(const pmix_proc_t *proc, const pmix_info_t directives[], size_t ndirs,
                                    pmix_credential_cbfunc_t cbfunc, void *cbdata)
{
    (void)proc; (void)directives; (void)ndirs;
    char text[64];
    snprintf(text, sizeof text, "host-credential-%u", (unsigned)getuid());
    pmix_byte_object_t cred = {text, strlen(text)};
    pmix_info_t type;
    PMIX_INFO_LOAD(&type, PMIX_CRED_TYPE, "openpmix-host", PMIX_STRING);
    cbfunc(PMIX_SUCCESS, &cred, &type, 1, cbdata);
    return PMIX_SUCCESS;
}

static pmix_status_t validate_credential(const pmix_proc_t *proc, const pmix_byte_object_t *cred,
                                         const pmix_info_t directives[], size_t ndirs,
                                         pmix_validation_cbfunc_t cbfunc, void *cbdata)
{
    (void)proc; (void)directives; (void)ndirs;
    char text[64];
    snprintf(text, sizeof text, "host-credential-%u", (unsigned)getuid());
    bool ok = cred != NULL && cred->size == strlen(text) && memcmp(cred->bytes, text, cred->size) == 0;
    pmix_info_t ids[2];
    uint32_t uid = getuid(), gid = getgid();
    PMIX_INFO_LOAD(&ids[0], PMIX_USERID, &uid, PMIX_UINT32);
    PMIX_INFO_LOAD(&ids[1], PMIX_GRPID, &gid, PMIX_UINT32);
    cbfunc(ok ? PMIX_SUCCESS : PMIX_ERR_INVALID_CRED, ids, ok ? 2 : 0, cbdata);
    return PMIX_SUCCESS;
}

static void *deliver_output(void *arg)
{
    (void)arg;
    usleep(100 * 1000);
    pmix_proc_t source;
    PMIX_PROC_LOAD(&source, "openpmix-host", 0);
    char text[] = "output from the host\n";
    pmix_byte_object_t bo = {text, strlen(text)};
    wait_t w = WAIT_INIT;
    pmix_status_t rc = PMIx_server_IOF_deliver(&source, PMIX_FWD_STDOUT_CHANNEL, &bo, NULL, 0, op_done, &w);
    if (rc == PMIX_SUCCESS) rc = wait_op(&w);
    SAY("output delivered: %s", PMIx_Error_string(rc));
    return NULL;
}

static pmix_status_t iof_pull(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t directives[], size_t ndirs,
                              pmix_iof_channel_t channels, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)procs; (void)directives; (void)ndirs; (void)cbfunc; (void)cbdata;
    SAY("output pulled from %zu procs, channels %u", nprocs, (unsigned)channels);
    pthread_t t;
    pthread_create(&t, NULL, deliver_output, NULL);
    pthread_detach(t);
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t push_stdin(const pmix_proc_t *source, const pmix_proc_t targets[], size_t ntargets,
                                const pmix_info_t directives[], size_t ndirs, const pmix_byte_object_t *bo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)directives; (void)ndirs;
    SAY("stdin from %s:%u for %zu targets (first %s:%d): %.*s", source->nspace, source->rank, ntargets,
        ntargets > 0 ? targets[0].nspace : "-", ntargets > 0 ? (int)targets[0].rank : -1,
        bo != NULL ? (int)bo->size : 0, bo != NULL && bo->bytes != NULL ? bo->bytes : "");
    cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

static pmix_status_t allocate(const pmix_proc_t *client, pmix_alloc_directive_t directive, const pmix_info_t data[],
                              size_t ndata, pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    (void)data;
    SAY("allocation request %d by %s:%u with %zu items", (int)directive, client->nspace, client->rank, ndata);
    results_t *r = new_results(1);
    char id[64];
    snprintf(id, sizeof id, "host-alloc-%d", (int)directive);
    PMIX_INFO_LOAD(&r->info[0], PMIX_ALLOC_ID, id, PMIX_STRING);
    cbfunc(PMIX_SUCCESS, r->info, 1, cbdata, release_results, r);
    return PMIX_SUCCESS;
}

static pmix_status_t group(pmix_group_operation_t op, char grp[], const pmix_proc_t procs[], size_t nprocs,
                           const pmix_info_t directives[], size_t ndirs, pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    (void)procs;
    SAY("group %s %s of %zu procs", op == PMIX_GROUP_CONSTRUCT ? "construct" : "destruct", grp, nprocs);
    bool assign = false;
    for (size_t i = 0; i < ndirs; i++)
        if (PMIX_CHECK_KEY(&directives[i], PMIX_GROUP_ASSIGN_CONTEXT_ID)) assign = PMIX_INFO_TRUE(&directives[i]);
    results_t *r = new_results(1);
    size_t id = 42;
    PMIX_INFO_LOAD(&r->info[0], PMIX_GROUP_CONTEXT_ID, &id, PMIX_SIZE);
    cbfunc(PMIX_SUCCESS, r->info, op == PMIX_GROUP_CONSTRUCT && assign ? 1 : 0, cbdata, release_results, r);
    return PMIX_SUCCESS;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s <tmpdir> <nprocs> <program> [args...]\n", argv[0]);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    static pmix_server_module_t module = {
        .client_connected = client_connected,
        .client_finalized = client_finalized,
        .abort = do_abort,
        .fence_nb = fence_nb,
        .publish = publish,
        .lookup = lookup,
        .unpublish = unpublish,
        .spawn = spawn,
        .connect = connect_procs,
        .disconnect = disconnect_procs,
        .register_events = register_events,
        .deregister_events = deregister_events,
        .notify_event = notify_event,
        .query = query,
        .tool_connected = tool_connected,
        .log = do_log,
        .job_control = job_control,
        .get_credential = get_credential,
        .validate_credential = validate_credential,
        .iof_pull = iof_pull,
        .push_stdin = push_stdin,
        .allocate = allocate,
        .group = group,
    };
    pmix_info_t info[5];
    bool yes = true, no = false;
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, argv[1], PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_SYSTEM_TMPDIR, argv[1], PMIX_STRING);
    PMIX_INFO_LOAD(&info[2], PMIX_SERVER_TOOL_SUPPORT, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[3], PMIX_SERVER_SYSTEM_SUPPORT, &yes, PMIX_BOOL);
    /* OpenPMIx 4.2.2 crashes delivering output without it. */
    PMIX_INFO_LOAD(&info[4], PMIX_IOF_LOCAL_OUTPUT, &no, PMIX_BOOL);
    pmix_status_t rc = PMIx_server_init(&module, info, 5);
    if (rc != PMIX_SUCCESS) {
        SAY("PMIx_server_init: %s", PMIx_Error_string(rc));
        return 1;
    }
    /* What this host supports, for PMIX_QUERY_ATTRIBUTE_SUPPORT (OpenPMIx
     * 4.2.2's server crashes answering it for a host that registered
     * nothing: its own pattrs --host shows it). */
    char *jctrl[] = {PMIX_JOB_CTRL_KILL, NULL};
    char *query_attrs[] = {PMIX_QUERY_NAMESPACES, NULL};
    PMIx_Register_attributes("PMIx_Job_control", jctrl);
    PMIx_Register_attributes("PMIx_Query_info", query_attrs);
    SAY("serving as %s (OpenPMIx %s)", getenv("PMIX_SERVER_URI41") ? getenv("PMIX_SERVER_URI41") : "?",
        PMIx_Get_version());
    rc = start_job("openpmix-host", atoi(argv[2]), argv + 3);
    int status = rc == PMIX_SUCCESS ? 0 : 1;
    for (;;) {
        int st;
        pid_t pid = wait(&st);
        if (pid < 0) {
            /* A spawn may still be starting its processes. */
            usleep(100 * 1000);
            pid = waitpid(-1, &st, WNOHANG);
            if (pid <= 0) break;
        }
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        SAY("process %d exited %d", (int)pid, code);
        if (code != 0 && status == 0) status = code;
    }
    pthread_mutex_lock(&lock);
    if (abort_status >= 0) status = abort_status;
    pthread_mutex_unlock(&lock);
    PMIx_server_finalize();
    SAY("done, status %d", status);
    return status;
}
