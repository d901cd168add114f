/* fault_client: a PMIx client that walks the lifecycle steps the fault
 * matrix covers (tests/faults/matrix_test.sh), printing each call's status:
 *
 *   init, put/commit, fence with data, get of a peer's fenced key, fence
 *   without data, get of a peer's unfenced key (direct modex), finalize
 *
 * With FAULT_CLIENT_TOOL=PROGRAM, rank 0 also runs `PROGRAM --uri <its
 * server's URI>` between the two fences, without the client's PMIX_*
 * environment, so a tool attaches while the job runs (printed as "op tool"
 * with the tool's exit status).
 *
 * Under faults any call may fail; what must not happen is silence: a call
 * that never returns. A watchdog (FAULT_CLIENT_WATCHDOG seconds, default 20)
 * reports the call it is stuck in and exits 4. Exit status 0 when every
 * call returned (whatever its status), 4 on silence.
 * Public API only. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pmix.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Runs the tool against our server and waits for it. */
static int run_tool(const char *program)
{
    const char *uri = getenv("PMIX_CXX_SERVER_URI");
    if (uri == NULL) return -1;
    char server[1024];
    snprintf(server, sizeof server, "%s", uri);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        char names[64][64];
        int n = 0;
        for (char **e = environ; *e != NULL && n < 64; ++e) {
            const char *eq = strchr(*e, '=');
            if (strncmp(*e, "PMIX_", 5) == 0 && eq != NULL && (size_t) (eq - *e) < sizeof names[0]) {
                memcpy(names[n], *e, (size_t) (eq - *e));
                names[n++][eq - *e] = '\0';
            }
        }
        for (int k = 0; k < n; ++k) unsetenv(names[k]);
        int out = open("/dev/null", O_WRONLY);
        if (out >= 0) dup2(out, 1);
        execl(program, program, "--uri", server, (char *) NULL);
        _exit(127);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static volatile const char *current = "start";
static pmix_proc_t me;

static void watchdog(int sig)
{
    (void) sig;
    char line[160];
    int n = snprintf(line, sizeof line, "SILENT %s:%u %s\n", me.nspace, me.rank, current);
    if (n > 0 && write(1, line, (size_t) n) < 0) _exit(4);
    _exit(4);
}

static pmix_status_t report(const char *op, pmix_status_t rc)
{
    printf("op %s rank=%u status=%s\n", op, me.rank, PMIx_Error_string(rc));
    fflush(stdout);
    return rc;
}

int main(void)
{
    const char *w = getenv("FAULT_CLIENT_WATCHDOG");
    signal(SIGALRM, watchdog);
    alarm(w != NULL ? (unsigned) atoi(w) : 20);
    current = "init";
    if (report("init", PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS) {
        /* Nothing else can be asked without a connection. */
        return 0;
    }
    pmix_value_t *v = NULL;
    pmix_proc_t wild = me;
    wild.rank = PMIX_RANK_WILDCARD;
    uint32_t size = 1;
    if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS && v != NULL) {
        size = v->data.uint32;
        PMIX_VALUE_RELEASE(v);
    }
    pmix_proc_t peer = me;
    peer.rank = (me.rank + 1) % size;

    pmix_value_t val;
    PMIX_VALUE_LOAD(&val, &me.rank, PMIX_UINT32);
    current = "put";
    report("put", PMIx_Put(PMIX_GLOBAL, "fault.fenced", &val));
    current = "commit";
    report("commit", PMIx_Commit());

    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    current = "fence_data";
    report("fence_data", PMIx_Fence(NULL, 0, &collect, 1));
    PMIX_INFO_DESTRUCT(&collect);

    current = "get";
    v = NULL;
    report("get", PMIx_Get(&peer, "fault.fenced", NULL, 0, &v));
    if (v != NULL) PMIX_VALUE_RELEASE(v);

    const char *tool = getenv("FAULT_CLIENT_TOOL");
    if (tool != NULL && me.rank == 0) {
        current = "tool";
        printf("op tool rank=%u exit=%d\n", me.rank, run_tool(tool));
        fflush(stdout);
    }

    current = "fence";
    report("fence", PMIx_Fence(NULL, 0, NULL, 0));

    /* Put after the last fence: a peer's get is served by direct modex. */
    current = "put_late";
    report("put_late", PMIx_Put(PMIX_GLOBAL, "fault.late", &val));
    report("commit_late", PMIx_Commit());
    pmix_info_t bound;
    int seconds = 5;
    PMIX_INFO_LOAD(&bound, PMIX_TIMEOUT, &seconds, PMIX_INT);
    current = "dmodex";
    v = NULL;
    report("dmodex", PMIx_Get(&peer, "fault.late", &bound, 1, &v));
    if (v != NULL) PMIX_VALUE_RELEASE(v);
    PMIX_INFO_DESTRUCT(&bound);

    current = "finalize";
    report("finalize", PMIx_Finalize(NULL, 0));
    alarm(0);
    return 0;
}
