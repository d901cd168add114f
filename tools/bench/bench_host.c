/*
 * The benchmark host: a PMIx server written only against the standard server
 * API, built twice from this file (against PMIx-CXX and against OpenPMIx
 * 4.2.2) so the same program measures both libraries (tools/bench/compare.py).
 *
 *   bench_host <client> <tmpdir> <mode> [args]
 *
 * Clients are forked; with BENCH_SPAWN=posix in the environment they are
 * started with posix_spawn (fork_exec).
 *
 * Modes (every figure is printed as "figure <name> <value>", every single
 * measurement as "sample <name> <value>"; clients print theirs too):
 *   init                      one PMIx_server_init and one PMIx_server_finalize
 *   cycle <n>                 one client: n PMIx_Init/PMIx_Finalize cycles
 *   cycle-in <ranks> <n>      the same cycles by rank 0 of a job of <ranks>
 *                             ranks, all on this node, the others never
 *                             started: a process's own cost as its job grows
 *   cycle-hosted <ranks> <n>  the same cycles by rank 0 of a job of <ranks>
 *                             ranks, 100 a node (this node the first), every
 *                             rank's data registered as Slurm does
 *                             (register-hosted): a process's cost as the
 *                             whole job grows
 *   cycle-cyclic <ranks> <nodes> <n>  the same cycles by rank 0 of a job of
 *                             <ranks> ranks placed round-robin on <nodes>
 *                             nodes (by the maps alone): this node's local
 *                             peers are 0, nodes, 2 x nodes, ...
 *   cycle-blocked <ranks> <nodes> <n>  the same job with its ranks placed in
 *                             blocks: this node's are 0, 1, 2, ...
 *   startup <n>               n clients started at once: each times PMIx_Init
 *   gated <n>                 n clients started, then all released at once:
 *                             each times PMIx_Init (no fork meanwhile: the
 *                             server's own answer to n inits at once)
 *   ready <n>                 n clients started at once, each doing what
 *                             MPI_Init does once (init, Put, Commit, collecting
 *                             fence): the time until every one is ready, the
 *                             whole job's, and the CPU time of this process
 *                             (the server, and forking) and of the clients
 *   ready-bare <n>            the same figures for n processes of bench_bare
 *                             (beside the client program), which link no
 *                             PMIx and only say they are ready: what starting
 *                             and ending the processes costs by itself
 *   fence <n> <iters> <0|1>   n clients fence iters times (1: PMIX_COLLECT_DATA)
 *   get <iters>               two clients: PMIx_Get of a peer's 64-byte key and
 *                             of a job-level key
 *   register-nspace <ranks>   one namespace of <ranks> ranks (100 per node,
 *                             per-rank data for each): time and memory
 *   register-hosted <ranks>   the same namespace registered as Slurm and ORTE
 *                             do: job keys plus a PMIX_PROC_INFO_ARRAY per rank
 *                             holding PMIX_RANK, PMIX_LOCAL_RANK, PMIX_NODE_RANK
 *   register-maps <ranks> <per-node>  the same by its node and proc maps
 *                             alone, every rank's data derived from them (as
 *                             pmixsim's nodes register a job)
 *   maps-get <ranks> <per-node>  the job of register-maps, with rank 0 of this
 *                             node started: its first PMIx_Get of a rank's
 *                             PMIX_HOSTNAME on the last node (which the job
 *                             data leaves to the maps): time and memory
 *   register-local <ranks>    the same with every rank on this node (one node
 *                             of <ranks> processes: PMIX_LOCAL_SIZE <ranks>,
 *                             the local peers string of all of them)
 *   datafence <n> <iters>     n clients: Put a 64-byte key, Commit, collecting
 *                             fence, iters times; every rank times every fence
 *   datafence-bare <n> <iters>  no PMIx, no server: fence_floor (beside the
 *                             client program) with n processes, each writing
 *                             64 bytes to it and sleeping on one futex word
 *                             it wakes, iters times: the samples datafence
 *                             prints, the floor under its fence of n
 *   dmodex <n>                n clients: Put, Commit, a fence without data, then each
 *                             times a PMIx_Get of every other rank's key (direct modex)
 *   uds-rtt <iters>           no PMIx: one byte's round trip between this
 *                             process and a child over a Unix socket pair, the
 *                             unit of the fence's limit (N round trips)
 *   cpu-gaps <ms>             no PMIx: one busy thread pinned to each CPU of
 *                             this process for <ms> ms; every stretch of more
 *                             than 1 ms in which it did not run (another
 *                             process of higher priority, or the hypervisor,
 *                             had its CPU): what a fence waits on when a rank
 *                             or the server is queued on that CPU
 *   register-clients <ranks>  one namespace with <ranks> local ranks, then a
 *                             PMIx_server_register_client for each
 *   rss <a> <b>               one client cycling init/finalize; the server's
 *                             resident memory after 0, a and b cycles
 */
#define _GNU_SOURCE
#include <pmix.h>
#include <pmix_server.h>

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec * 1e6 + (double) t.tv_nsec / 1e3;
}

/* Bytes the allocator has handed out and not got back (glibc's main and
 * thread arenas): unlike the resident size, exact to the byte, so a leak of a
 * few bytes per cycle shows. */
static long heap_bytes(void) {
    struct mallinfo2 m = mallinfo2();
    return (long) m.uordblks + (long) m.hblkhd;
}

/* The server's resident anonymous memory in kB (RssAnon: heap and stacks;
 * code pages mapped in the first time a path runs are not memory it keeps). */
static long rss_kb(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    if (NULL == f) return -1;
    while (NULL != fgets(line, sizeof line, f))
        if (0 == strncmp(line, "RssAnon:", 8)) kb = strtol(line + 8, NULL, 10);
    fclose(f);
    return kb;
}

static void die(const char *what, pmix_status_t rc) {
    fprintf(stderr, "bench_host: %s: %s\n", what, PMIx_Error_string(rc));
    exit(1);
}

/* ---- completion of non-blocking server calls ----------------------------- */

typedef struct {
    pthread_mutex_t m;
    pthread_cond_t cv;
    int pending;
    pmix_status_t status;
} waitgroup_t;

static void wg_init(waitgroup_t *w, int n) {
    pthread_mutex_init(&w->m, NULL);
    pthread_cond_init(&w->cv, NULL);
    w->pending = n;
    w->status = PMIX_SUCCESS;
}

static void wg_done(pmix_status_t status, void *cbdata) {
    waitgroup_t *w = cbdata;
    pthread_mutex_lock(&w->m);
    if (PMIX_SUCCESS != status) w->status = status;
    if (--w->pending == 0) pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->m);
}

static pmix_status_t wg_wait(waitgroup_t *w) {
    pthread_mutex_lock(&w->m);
    while (w->pending > 0) pthread_cond_wait(&w->cv, &w->m);
    pthread_mutex_unlock(&w->m);
    return w->status;
}

/* ---- the host module --------------------------------------------------------- */

static void free_data(void *cbdata) { free(cbdata); }

/* One node: the fence's data is all the data. The copy stays ours until the
 * library releases it. */
static pmix_status_t on_fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                              size_t ninfo, char *data, size_t ndata, pmix_modex_cbfunc_t cbfunc,
                              void *cbdata) {
    char *copy = NULL;
    (void) procs, (void) nprocs, (void) info, (void) ninfo;
    if (ndata > 0) {
        copy = malloc(ndata);
        if (NULL == copy) return PMIX_ERR_NOMEM;
        memcpy(copy, data, ndata);
    }
    cbfunc(PMIX_SUCCESS, copy, ndata, cbdata, free_data, copy);
    return PMIX_SUCCESS;
}

static pmix_status_t on_connected(const pmix_proc_t *p, void *o, pmix_op_cbfunc_t cb, void *d) {
    (void) p, (void) o, (void) cb, (void) d;
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t on_finalized(const pmix_proc_t *p, void *o, pmix_op_cbfunc_t cb, void *d) {
    (void) p, (void) o, (void) cb, (void) d;
    return PMIX_OPERATION_SUCCEEDED;
}

/* ---- job registration ---------------------------------------------------------- */

static char hostname[256];

/* Set by register_job: how long PMIx_server_register_nspace took (until its
 * callback) and how much the server's resident memory grew meanwhile (the
 * host's own info arrays are built before and freed after). */
static double last_register_ms;
static long last_register_kb;
/* Set: register_job_shaped places rank r on node r % nodes (round-robin,
 * as srun -m cyclic or mpirun --map-by node), not in blocks. */
static int cyclic_layout;

/* A namespace of `size` ranks, `per_node` per node; this node holds the
 * first `local` ranks. Per-rank data as a resource manager registers it. */
static void register_job_shaped(const char *nspace, uint32_t size, uint32_t per_node, uint32_t local,
                                int hosted);
static void register_job(const char *nspace, uint32_t size, uint32_t per_node, uint32_t local) {
    register_job_shaped(nspace, size, per_node, local, 0);
}

/* hosted: the per-rank arrays as hosts send them (3 items under
 * PMIX_PROC_INFO_ARRAY); else 5 items under PMIX_PROC_DATA, with the node id
 * and host name; 2: no per-rank arrays, the server derives each rank's
 * host, node id and local and node ranks from the two maps. */
static void register_job_shaped(const char *nspace, uint32_t size, uint32_t per_node, uint32_t local,
                                int hosted) {
    uint32_t nnodes = (size + per_node - 1) / per_node;
    size_t len = 0;
    char *nodes = calloc(1, (size_t) nnodes * 300 + 1);
    char *ppn = calloc(1, (size_t) size * 12 + 2 * nnodes + 1);
    for (uint32_t n = 0; n < nnodes; ++n) {
        if (0 == n) len += (size_t) sprintf(nodes + len, "%s", hostname);
        else len += (size_t) sprintf(nodes + len, ",benchnode%u", n);
    }
    len = 0;
    for (uint32_t n = 0; n < nnodes; ++n) {
        uint32_t first = n * per_node, last = first + per_node - 1;
        if (last >= size) last = size - 1;
        if (n > 0) ppn[len++] = ';';
        if (cyclic_layout) {
            for (uint32_t r = n; r < size; r += nnodes) len += (size_t) sprintf(ppn + len, r == n ? "%u" : ",%u", r);
            continue;
        }
        len += (size_t) (first == last ? sprintf(ppn + len, "%u", first)
                                       : sprintf(ppn + len, "%u-%u", first, last));
    }
    char *node_map = NULL, *proc_map = NULL;
    pmix_status_t rc = PMIx_generate_regex(nodes, &node_map);
    if (PMIX_SUCCESS != rc) die("PMIx_generate_regex", rc);
    rc = PMIx_generate_ppn(ppn, &proc_map);
    if (PMIX_SUCCESS != rc) die("PMIx_generate_ppn", rc);
    free(nodes);
    free(ppn);

    size_t ninfo = 10 + size, k = 0;
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, ninfo);
    uint32_t zero = 0;
    PMIX_INFO_LOAD(&info[k++], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_UNIV_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_MAX_PROCS, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_LOCAL_SIZE, &local, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_NUM_NODES, &nnodes, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_APPNUM, &zero, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_JOBID, nspace, PMIX_STRING);
    PMIX_INFO_LOAD(&info[k++], PMIX_NODE_MAP, node_map, PMIX_STRING);
    PMIX_INFO_LOAD(&info[k++], PMIX_PROC_MAP, proc_map, PMIX_STRING);
    {
        /* PMIX_LOCAL_PEERS: "0,1,...,local-1" */
        char *peers = calloc(1, (size_t) local * 12 + 1);
        size_t at = 0;
        for (uint32_t r = 0; r < local; ++r)
            at += (size_t) sprintf(peers + at, r ? ",%u" : "%u", cyclic_layout ? r * nnodes : r);
        PMIX_INFO_LOAD(&info[k++], PMIX_LOCAL_PEERS, peers, PMIX_STRING);
        free(peers);
    }
    free(node_map);
    free(proc_map);
    for (uint32_t r = 0; hosted != 2 && r < size; ++r) {
        pmix_data_array_t darray;
        pmix_info_t *items;
        size_t nitems = hosted ? 3 : 5;
        PMIX_INFO_CREATE(items, nitems);
        uint16_t lrank = (uint16_t) (r % per_node);
        uint32_t node = r / per_node;
        char host[300];
        if (0 == node) snprintf(host, sizeof host, "%s", hostname);
        else snprintf(host, sizeof host, "benchnode%u", node);
        PMIX_INFO_LOAD(&items[0], PMIX_RANK, &r, PMIX_PROC_RANK);
        PMIX_INFO_LOAD(&items[1], PMIX_LOCAL_RANK, &lrank, PMIX_UINT16);
        PMIX_INFO_LOAD(&items[2], PMIX_NODE_RANK, &lrank, PMIX_UINT16);
        if (!hosted) {
            PMIX_INFO_LOAD(&items[3], PMIX_NODEID, &node, PMIX_UINT32);
            PMIX_INFO_LOAD(&items[4], PMIX_HOSTNAME, host, PMIX_STRING);
        }
        darray.type = PMIX_INFO;
        darray.size = nitems;
        darray.array = items;
        PMIX_INFO_LOAD(&info[k++], hosted ? PMIX_PROC_INFO_ARRAY : PMIX_PROC_DATA, &darray, PMIX_DATA_ARRAY);
        PMIX_INFO_FREE(items, nitems);
    }
    waitgroup_t w;
    wg_init(&w, 1);
    long before = rss_kb();
    double t0 = now_us();
    rc = PMIx_server_register_nspace(nspace, (int) local, info, k, wg_done, &w);
    if (PMIX_SUCCESS != rc) die("PMIx_server_register_nspace", rc);
    rc = wg_wait(&w);
    last_register_ms = (now_us() - t0) / 1e3;
    last_register_kb = rss_kb() - before;
    if (PMIX_SUCCESS != rc) die("PMIx_server_register_nspace (callback)", rc);
    PMIX_INFO_FREE(info, ninfo);
    /* The host's own arrays (tens of megabytes for 10,000 ranks) go back to
     * the system here, untimed: otherwise glibc returns them at whichever
     * later free() first reaches them, and that could be inside the next
     * timed call, whichever library it is. */
    malloc_trim(0);
}

static void register_clients(const char *nspace, uint32_t n) {
    waitgroup_t w;
    wg_init(&w, (int) n);
    /* Once, as a host does for a job: two system calls per client would be
     * timed as the library's (0.4 us a call on the project's VM). */
    uid_t uid = getuid();
    gid_t gid = getgid();
    for (uint32_t r = 0; r < n; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, nspace, r);
        pmix_status_t rc = PMIx_server_register_client(&p, uid, gid, NULL, wg_done, &w);
        if (PMIX_SUCCESS != rc) die("PMIx_server_register_client", rc);
    }
    pmix_status_t rc = wg_wait(&w);
    if (PMIX_SUCCESS != rc) die("PMIx_server_register_client (callback)", rc);
}

static void deregister_job(const char *nspace, uint32_t local) {
    waitgroup_t w;
    wg_init(&w, (int) local + 1);
    for (uint32_t r = 0; r < local; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, nspace, r);
        PMIx_server_deregister_client(&p, wg_done, &w);
    }
    PMIx_server_deregister_nspace(nspace, wg_done, &w);
    wg_wait(&w);
}

/* ---- clients ------------------------------------------------------------------------ */

static const char *client_path;

static double cpu_us(const struct rusage *u) {
    return (double) u->ru_utime.tv_sec * 1e6 + (double) u->ru_utime.tv_usec + (double) u->ru_stime.tv_sec * 1e6 +
           (double) u->ru_stime.tv_usec;
}

/* A child running `program`; the child says why if it cannot. The host
 * forks, as Slurm's slurmstepd and PRRTE's daemons do; BENCH_SPAWN=posix
 * starts it with posix_spawn instead (as pmixrun does), which copies none of
 * the host's page tables: what a forking host pays for its server's memory
 * and threads shows as the difference. */
static pid_t fork_exec(const char *program, char *const argv[], char *const env[]) {
    static int use_spawn = -1;
    if (use_spawn < 0) {
        const char *how = getenv("BENCH_SPAWN");
        use_spawn = NULL != how && 0 == strcmp(how, "posix");
    }
    if (use_spawn) {
        pid_t child = -1;
        int err = posix_spawn(&child, program, NULL, NULL, argv, env);
        if (0 != err) {
            fprintf(stderr, "bench_host: cannot run %s: %s\n", program, strerror(err));
            exit(1);
        }
        return child;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (0 == pid) {
        execve(program, argv, env);
        fprintf(stderr, "bench_host: cannot run %s: %s\n", program, strerror(errno));
        _exit(127);
    }
    return pid;
}

static pid_t launch(const char *nspace, uint32_t rank, char *const args[]) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, nspace, rank);
    char **env = NULL;
    pmix_status_t rc;
    for (char **e = environ; NULL != *e; ++e) PMIX_ARGV_APPEND(rc, env, *e);
    rc = PMIx_server_setup_fork(&p, &env);
    if (PMIX_SUCCESS != rc) die("PMIx_server_setup_fork", rc);
    char *argv[16];
    int n = 0;
    /* BENCH_ODD_CLIENT: odd ranks run that program instead (a job mixing
     * clients of two libraries; tools/bench/openpmix_clients.py). */
    const char *odd = getenv("BENCH_ODD_CLIENT");
    const char *program = (NULL != odd && '\0' != *odd && rank % 2 == 1) ? odd : client_path;
    argv[n++] = (char *) program;
    for (int k = 0; NULL != args[k] && n < 15; ++k) argv[n++] = args[k];
    argv[n] = NULL;
    pid_t pid = fork_exec(program, argv, env);
    PMIX_ARGV_FREE(env);
    return pid;
}

/* A program beside the client program: bench_bare (ready-bare) or
 * fence_floor (datafence-bare), neither of which uses PMIx. */
static void sibling_path(char *out, size_t size, const char *name) {
    const char *slash = strrchr(client_path, '/');
    int dir = NULL == slash ? 0 : (int) (slash - client_path + 1);
    snprintf(out, size, "%.*s%s", dir, client_path, name);
}

/* A process of bench_bare with this process's environment: no PMIx call,
 * here or there. */
static pid_t launch_bare(const char *path) {
    char *argv[] = {(char *) path, NULL};
    return fork_exec(path, argv, environ);
}

/* A pipe whose end `child_end` (0: read, 1: write) the clients inherit,
 * named to them by the environment variable `name`; the other end is
 * close-on-exec. */
static void pipe_for_clients(int fds[2], int child_end, const char *name) {
    if (0 != pipe(fds)) die("pipe", PMIX_ERROR);
    fcntl(fds[1 - child_end], F_SETFD, FD_CLOEXEC);
    char fd_text[16];
    snprintf(fd_text, sizeof fd_text, "%d", fds[child_end]);
    setenv(name, fd_text, 1);
}

/* Registers an n-rank job of n local clients: room for their pids. */
static pid_t *prepare_job(const char *nspace, uint32_t n) {
    register_job(nspace, n, n, n);
    register_clients(nspace, n);
    return calloc(n, sizeof(pid_t));
}

static int wait_all(pid_t *pids, uint32_t n) {
    int failed = 0;
    for (uint32_t r = 0; r < n; ++r) {
        int status = 0;
        waitpid(pids[r], &status, 0);
        if (!WIFEXITED(status) || 0 != WEXITSTATUS(status)) {
            fprintf(stderr, "bench_host: client %u failed (status %d)\n", r, status);
            failed = 1;
        }
    }
    return failed;
}

/* Runs n clients of one namespace with the same arguments; returns non-zero
 * if any failed. */
static int run_job(const char *nspace, uint32_t n, char *const args[]) {
    register_job(nspace, n, n, n);
    register_clients(nspace, n);
    pid_t *pids = calloc(n, sizeof(pid_t));
    for (uint32_t r = 0; r < n; ++r) pids[r] = launch(nspace, r, args);
    int failed = wait_all(pids, n);
    free(pids);
    deregister_job(nspace, n);
    return failed;
}

/* One byte's round trip over a Unix socket pair between two processes, the
 * cost a fence pays at least once per local client (compare.py's limit). */
static int uds_rtt(int iters) {
    int sv[2];
    if (0 != socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) return 1;
    pid_t pid = fork();
    if (0 == pid) {
        char c;
        close(sv[0]);
        while (1 == read(sv[1], &c, 1))
            if (1 != write(sv[1], &c, 1)) break;
        _exit(0);
    }
    close(sv[1]);
    double *v = calloc((size_t) iters, sizeof(double));
    char c = 'x';
    int failed = 0;
    for (int i = 0; i < 100 + iters && !failed; ++i) {
        double t0 = now_us();
        if (1 != write(sv[0], &c, 1) || 1 != read(sv[0], &c, 1)) failed = 1;
        if (i >= 100) v[i - 100] = now_us() - t0;
    }
    close(sv[0]);
    waitpid(pid, NULL, 0);
    for (int i = 0; i < iters && !failed; ++i) printf("sample uds_rtt_us %.2f\n", v[i]);
    free(v);
    return failed;
}

static int wait_for_file(const char *path) {
    struct stat st;
    for (int i = 0; i < 600000; ++i) { /* a guard of 10 minutes against hangs */
        if (0 == stat(path, &st)) return 0;
        usleep(1000);
    }
    return -1;
}

/* The CPU-gap probe: each thread spins on the clock pinned to its CPU and
 * records every gap of more than 1 ms between two readings. */
struct gap_probe {
    int cpu;
    double ms;
    int gaps;
    double longest_us;
};

static void *probe_cpu(void *arg) {
    struct gap_probe *p = arg;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(p->cpu, &one);
    if (0 != pthread_setaffinity_np(pthread_self(), sizeof one, &one)) return NULL;
    double last = now_us(), end = last + p->ms * 1e3;
    for (;;) {
        double t = now_us();
        if (t - last > 1000.0) {
            ++p->gaps;
            if (t - last > p->longest_us) p->longest_us = t - last;
        }
        last = t;
        if (t >= end) break;
    }
    return NULL;
}

static int cpu_gaps(double ms) {
    cpu_set_t mine;
    if (0 != sched_getaffinity(0, sizeof mine, &mine)) return 1;
    struct gap_probe probes[CPU_SETSIZE];
    pthread_t threads[CPU_SETSIZE];
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (!CPU_ISSET(c, &mine)) continue;
        probes[n] = (struct gap_probe){.cpu = c, .ms = ms};
        if (0 != pthread_create(&threads[n], NULL, probe_cpu, &probes[n])) return 1;
        ++n;
    }
    int gaps = 0;
    double longest = 0;
    for (int i = 0; i < n; ++i) {
        pthread_join(threads[i], NULL);
        gaps += probes[i].gaps;
        if (probes[i].longest_us > longest) longest = probes[i].longest_us;
    }
    printf("sample cpu_gaps_per_s %.2f\n", gaps / (ms / 1e3));
    printf("sample cpu_gap_longest_us %.0f\n", longest);
    return 0;
}

static void touch(const char *path) {
    FILE *f = fopen(path, "w");
    if (NULL != f) fclose(f);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: bench_host <client> <tmpdir> <mode> [args]\n");
        return 2;
    }
    client_path = argv[1];
    const char *tmpdir = argv[2];
    const char *mode = argv[3];
    gethostname(hostname, sizeof hostname - 1);
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* Both servers hold a connection per client: 2,048 clients need more
     * descriptors than a login shell's soft limit of 1,024 (mpirun raises
     * its limit the same way). */
    struct rlimit files;
    if (0 == getrlimit(RLIMIT_NOFILE, &files) && files.rlim_cur < files.rlim_max) {
        files.rlim_cur = files.rlim_max;
        setrlimit(RLIMIT_NOFILE, &files);
    }
    if (0 == strcmp(mode, "cpu-gaps")) {
        const double ms = argc > 4 ? atof(argv[4]) : 0;
        if (ms <= 0) {
            fprintf(stderr, "bench_host: cpu-gaps needs a duration in ms above 0\n");
            return 2;
        }
        return cpu_gaps(ms);
    }
    if (0 == strcmp(mode, "datafence-bare")) {
        /* The data fence's floor: fence_floor's N processes (a socket
         * write and a futex wake-up each, no PMIx, no server), printing
         * the samples datafence prints. */
        if (argc < 6 || atoi(argv[4]) < 1 || atoi(argv[5]) < 1) {
            fprintf(stderr, "bench_host: datafence-bare needs RANKS and FENCES of at least 1\n");
            return 2;
        }
        char path[4096];
        sibling_path(path, sizeof path, "fence_floor");
        char *args[] = {path, argv[4], argv[5], NULL};
        pid_t pid = fork_exec(path, args, environ);
        return wait_all(&pid, 1);
    }

    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    module.client_connected = on_connected;
    module.client_finalized = on_finalized;
    module.fence_nb = on_fence;
    pmix_info_t dirs[1];
    PMIX_INFO_LOAD(&dirs[0], PMIX_SERVER_TMPDIR, tmpdir, PMIX_STRING);
    double t0 = now_us();
    pmix_status_t rc = PMIx_server_init(&module, dirs, 1);
    double t_init = now_us() - t0;
    PMIX_INFO_DESTRUCT(&dirs[0]);
    if (PMIX_SUCCESS != rc) die("PMIx_server_init", rc);
    int failed = 0;

    if (0 == strcmp(mode, "init")) {
        printf("sample server_init_us %.1f\n", t_init);
    } else if (0 == strcmp(mode, "cycle") && argc > 4) {
        char *args[] = {"cycle", argv[4], NULL};
        failed = run_job("bench.cycle", 1, args);
    } else if (0 == strcmp(mode, "cycle-in") && argc > 5) {
        /* One process's own cost as its job grows: rank 0 of a job of
         * <ranks> ranks, all on this node, cycles init/finalize alone. */
        uint32_t n = (uint32_t) atoi(argv[4]);
        char *args[] = {"cycle", argv[5], NULL};
        pid_t *pids = prepare_job("bench.cyclein", n);
        pids[0] = launch("bench.cyclein", 0, args);
        failed = wait_all(pids, 1);
        free(pids);
        deregister_job("bench.cyclein", n);
    } else if (0 == strcmp(mode, "cycle-hosted") && argc > 5) {
        uint32_t n = (uint32_t) atoi(argv[4]);
        char *args[] = {"cycle", argv[5], NULL};
        register_job_shaped("bench.cyclehosted", n, 100, n < 100 ? n : 100, 1);
        register_clients("bench.cyclehosted", 1);
        pid_t pid = launch("bench.cyclehosted", 0, args);
        failed = wait_all(&pid, 1);
        deregister_job("bench.cyclehosted", 1);
    } else if ((0 == strcmp(mode, "cycle-cyclic") || 0 == strcmp(mode, "cycle-blocked")) && argc > 6) {
        uint32_t n = (uint32_t) atoi(argv[4]), nodes = (uint32_t) atoi(argv[5]);
        uint32_t per = (n + nodes - 1) / nodes;
        char *args[] = {"cycle", argv[6], NULL};
        cyclic_layout = 0 == strcmp(mode, "cycle-cyclic");
        register_job_shaped("bench.cyclic", n, per, per, 2);
        cyclic_layout = 0;
        register_clients("bench.cyclic", 1);
        pid_t pid = launch("bench.cyclic", 0, args);
        failed = wait_all(&pid, 1);
        deregister_job("bench.cyclic", 1);
    } else if (0 == strcmp(mode, "startup") && argc > 4) {
        uint32_t n = (uint32_t) atoi(argv[4]);
        char *args[] = {"startup", NULL};
        pid_t *pids = prepare_job("bench.startup", n);
        double s0 = now_us();
        for (uint32_t r = 0; r < n; ++r) pids[r] = launch("bench.startup", r, args);
        failed = wait_all(pids, n);
        printf("sample startup_job_ms %.3f\n", (now_us() - s0) / 1e3);
        free(pids);
        deregister_job("bench.startup", n);
    } else if (0 == strcmp(mode, "gated") && argc > 4) {
        uint32_t n = (uint32_t) atoi(argv[4]);
        char *args[] = {"gated", NULL};
        int gate[2];
        pipe_for_clients(gate, 0, "BENCH_GATE_FD");
        pid_t *pids = prepare_job("bench.gated", n);
        for (uint32_t r = 0; r < n; ++r) pids[r] = launch("bench.gated", r, args);
        close(gate[0]);
        close(gate[1]); /* every client reads its end: released */
        unsetenv("BENCH_GATE_FD");
        failed = wait_all(pids, n);
        free(pids);
        deregister_job("bench.gated", n);
    } else if ((0 == strcmp(mode, "ready") || 0 == strcmp(mode, "ready-bare")) && argc > 4) {
        uint32_t n = (uint32_t) atoi(argv[4]);
        const bool bare = 0 == strcmp(mode, "ready-bare");
        char *args[] = {"ready", NULL};
        int ready_pipe[2];
        pipe_for_clients(ready_pipe, 1, "BENCH_READY_FD");
        pid_t *pids = bare ? calloc(n, sizeof(pid_t)) : prepare_job("bench.ready", n);
        char bare_path[4096];
        if (bare) sibling_path(bare_path, sizeof bare_path, "bench_bare");
        struct rusage self0, children0, self1, children1;
        getrusage(RUSAGE_SELF, &self0);
        getrusage(RUSAGE_CHILDREN, &children0);
        double s0 = now_us();
        for (uint32_t r = 0; r < n; ++r) pids[r] = bare ? launch_bare(bare_path) : launch("bench.ready", r, args);
        close(ready_pipe[1]);
        failed = wait_all(pids, n);
        double job_ms = (now_us() - s0) / 1e3;
        getrusage(RUSAGE_SELF, &self1);
        getrusage(RUSAGE_CHILDREN, &children1);
        double last = 0, stamp = 0;
        uint32_t got = 0;
        while (sizeof stamp == read(ready_pipe[0], &stamp, sizeof stamp)) {
            if (stamp > last) last = stamp;
            ++got;
        }
        close(ready_pipe[0]);
        unsetenv("BENCH_READY_FD");
        if (got != n) {
            fprintf(stderr, "bench_host: %u of %u clients were ready\n", got, n);
            failed = 1;
        } else {
            printf("sample ready_ms %.3f\n", (last - s0) / 1e3);
        }
        printf("sample ready_job_ms %.3f\n", job_ms);
        printf("sample ready_host_cpu_ms %.3f\n", (cpu_us(&self1) - cpu_us(&self0)) / 1e3);
        printf("sample ready_clients_cpu_ms %.3f\n", (cpu_us(&children1) - cpu_us(&children0)) / 1e3);
        printf("sample ready_host_cpu_per_proc_ms %.3f\n", (cpu_us(&self1) - cpu_us(&self0)) / 1e3 / n);
        printf("sample ready_clients_cpu_per_proc_ms %.3f\n", (cpu_us(&children1) - cpu_us(&children0)) / 1e3 / n);
        free(pids);
        if (!bare) deregister_job("bench.ready", n);
    } else if (0 == strcmp(mode, "fence") && argc > 6) {
        uint32_t n = (uint32_t) atoi(argv[4]);
        char *args[] = {"fence", argv[5], argv[6], NULL};
        failed = run_job("bench.fence", n, args);
    } else if (0 == strcmp(mode, "datafence") && argc > 5) {
        uint32_t n = (uint32_t) atoi(argv[4]);
        char *args[] = {"datafence", argv[5], NULL};
        failed = run_job("bench.dfence", n, args);
    } else if (0 == strcmp(mode, "dmodex") && argc > 4) {
        uint32_t n = (uint32_t) atoi(argv[4]);
        char *args[] = {"dmodex", NULL};
        failed = run_job("bench.dmodex", n, args);
    } else if (0 == strcmp(mode, "uds-rtt") && argc > 4) {
        failed = uds_rtt(atoi(argv[4]));
    } else if (0 == strcmp(mode, "register-hosted") && argc > 4) {
        uint32_t n = (uint32_t) atoi(argv[4]);
        register_job_shaped("bench.hosted", n, 100, n < 100 ? n : 100, 1);
        printf("sample register_hosted_ms %.3f\n", last_register_ms);
        printf("sample register_hosted_kb %ld\n", last_register_kb);
        deregister_job("bench.hosted", 0);
    } else if (0 == strcmp(mode, "register-maps") && argc > 5) {
        uint32_t n = (uint32_t) atoi(argv[4]), per = (uint32_t) atoi(argv[5]);
        register_job_shaped("bench.maps", n, per, per < n ? per : n, 2);
        printf("sample register_maps_ms %.3f\n", last_register_ms);
        printf("sample register_maps_kb %ld\n", last_register_kb);
        deregister_job("bench.maps", 0);
    } else if (0 == strcmp(mode, "maps-get") && argc > 5) {
        uint32_t n = (uint32_t) atoi(argv[4]), per = (uint32_t) atoi(argv[5]);
        register_job_shaped("bench.mapsget", n, per, per < n ? per : n, 2);
        register_clients("bench.mapsget", 1);
        char *args[] = {"remote-host", NULL};
        pid_t pid = launch("bench.mapsget", 0, args);
        failed = wait_all(&pid, 1);
        deregister_job("bench.mapsget", 1);
    } else if (0 == strcmp(mode, "register-local") && argc > 4) {
        uint32_t n = (uint32_t) atoi(argv[4]);
        register_job_shaped("bench.local", n, n, n, 1);
        printf("sample register_local_ms %.3f\n", last_register_ms);
        printf("sample register_local_kb %ld\n", last_register_kb);
        deregister_job("bench.local", 0);
    } else if (0 == strcmp(mode, "get") && argc > 4) {
        char *args[] = {"get", argv[4], NULL};
        failed = run_job("bench.get", 2, args);
    } else if (0 == strcmp(mode, "register-nspace") && argc > 4) {
        uint32_t n = (uint32_t) atoi(argv[4]);
        register_job("bench.big", n, 100, n < 100 ? n : 100);
        printf("sample register_nspace_ms %.3f\n", last_register_ms);
        printf("sample register_nspace_kb %ld\n", last_register_kb);
        deregister_job("bench.big", 0);
    } else if (0 == strcmp(mode, "register-clients") && argc > 4) {
        uint32_t n = (uint32_t) atoi(argv[4]);
        register_job("bench.many", n, n, n);
        long before = rss_kb();
        double r0 = now_us();
        register_clients("bench.many", n);
        printf("sample register_clients_ms %.3f\n", (now_us() - r0) / 1e3);
        printf("sample register_clients_kb %ld\n", rss_kb() - before);
        deregister_job("bench.many", n);
    } else if (0 == strcmp(mode, "rss") && argc > 5) {
        char sync[4096];
        char *args[] = {"rss", (char *) tmpdir, argv[4], argv[5], NULL};
        register_job("bench.rss", 1, 1, 1);
        register_clients("bench.rss", 1);
        malloc_trim(0);
        printf("sample rss_kb_0 %ld\n", rss_kb());
        pid_t pid = launch("bench.rss", 0, args);
        for (int k = 4; k <= 5 && !failed; ++k) {
            snprintf(sync, sizeof sync, "%s/at.%s", tmpdir, argv[k]);
            if (0 != wait_for_file(sync)) failed = 1;
            /* Free memory the allocator still holds goes back first (for
             * both libraries alike): what remains is what the server keeps. */
            malloc_trim(0);
            printf("sample rss_kb_%s %ld\n", argv[k], rss_kb());
            printf("sample heap_b_%s %ld\n", argv[k], heap_bytes());
            if (NULL != getenv("BENCH_HOLD")) {
                /* Held until told (tools/bench/live_heap.sh looks at the
                 * heap while the client waits). */
                fflush(stdout);
                snprintf(sync, sizeof sync, "%s/go.%s", tmpdir, argv[k]);
                if (0 != wait_for_file(sync)) failed = 1;
            }
            snprintf(sync, sizeof sync, "%s/ack.%s", tmpdir, argv[k]);
            touch(sync);
        }
        failed |= wait_all(&pid, 1);
        deregister_job("bench.rss", 1);
    } else {
        fprintf(stderr, "bench_host: unknown mode or missing arguments: %s\n", mode);
        failed = 2;
    }

    t0 = now_us();
    rc = PMIx_server_finalize();
    if (0 == strcmp(mode, "init")) printf("sample server_finalize_us %.1f\n", now_us() - t0);
    if (PMIX_SUCCESS != rc) die("PMIx_server_finalize", rc);
    return failed;
}
