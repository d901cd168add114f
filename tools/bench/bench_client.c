/*
 * The benchmark client, written only against the standard client API and
 * built twice like bench_host.c. Started by bench_host; prints
 * "sample <name> <value>" lines.
 *
 *   bench_client cycle <n>                 n PMIx_Init + PMIx_Finalize cycles
 *   bench_client startup                   one timed PMIx_Init
 *   bench_client fence <iters> <0|1>       every rank times every fence (no
 *                                          data; 1 asks it to collect); an
 *                                          untimed fence ends it
 *   bench_client datafence <iters>         what MPI_Init does, repeated: every
 *                                          rank Puts a 64-byte key and Commits
 *                                          (untimed), then all enter a
 *                                          collecting fence; every rank times
 *                                          every fence; at the end each rank
 *                                          Gets and checks two peers' keys
 *                                          and prints the timed rounds' whole
 *                                          time (dfence_loop_us);
 *                                          BENCH_FENCE_GAP_US=N: each rank
 *                                          sleeps N µs before each Put (a
 *                                          fence that starts on an idle
 *                                          machine, as MPI_Init's does)
 *   bench_client dmodex                    every rank Puts a 64-byte key and
 *                                          Commits, all enter a fence without
 *                                          data, then every rank times a
 *                                          PMIx_Get of every other rank's key:
 *                                          each goes to the server (direct
 *                                          modex); an untimed fence ends it
 *   bench_client get <iters>               rank 0 times PMIx_Get of rank 1's
 *                                          64-byte key and of PMIX_JOB_SIZE
 *   bench_client rss <dir> <a> <b>         cycles; after a and b cycles it
 *                                          creates <dir>/at.<k> and waits for
 *                                          <dir>/ack.<k>
 *
 * Samples are kept in memory and printed after the timed loop: a line
 * written inside it would wake the reader of the pipe, which then competes
 * for the CPUs with the processes being timed.
 */
#define _GNU_SOURCE
#include <pmix.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec * 1e6 + (double) t.tv_nsec / 1e3;
}

/* The samples of one timed loop, printed once it is over. */
typedef struct {
    double *v;
    int n, cap;
} samples_t;

static void sample(samples_t *s, double v) {
    if (s->n == s->cap) {
        int cap = s->cap > 0 ? 2 * s->cap : 256;
        double *grown = realloc(s->v, (size_t) cap * sizeof(double));
        if (NULL == grown) return; /* fewer samples, never a wrong one */
        s->v = grown;
        s->cap = cap;
    }
    s->v[s->n++] = v;
}

static void print_samples(samples_t *s, const char *name, int decimals) {
    for (int i = 0; i < s->n; ++i) printf("sample %s %.*f\n", name, decimals, s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}

static int fail(const char *what, pmix_status_t rc) {
    fprintf(stderr, "bench_client: %s: %s\n", what, PMIx_Error_string(rc));
    return 1;
}

/* The 64-byte endpoint a rank puts in round `round`: rank and round are in it,
 * so a peer's Get proves it read that round's data. */
static void endpoint(char out[65], pmix_rank_t rank, int round) {
    snprintf(out, 65, "ep.%08u.%08d.", (unsigned) rank, round);
    size_t len = strlen(out);
    memset(out + len, 'a' + (int) (rank % 26), 64 - len);
    out[64] = '\0';
}

static int put_endpoint(pmix_rank_t rank, int round) {
    char payload[65];
    endpoint(payload, rank, round);
    pmix_value_t v;
    PMIX_VALUE_LOAD(&v, payload, PMIX_STRING);
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, "bench.ep", &v);
    PMIX_VALUE_DESTRUCT(&v);
    if (PMIX_SUCCESS != rc) return fail("PMIx_Put", rc);
    rc = PMIx_Commit();
    return PMIX_SUCCESS == rc ? 0 : fail("PMIx_Commit", rc);
}

/* Gets peer's endpoint and checks it is the one of `round`. */
static int check_endpoint(const char *nspace, pmix_rank_t peer, int round) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, nspace, peer);
    pmix_value_t *got = NULL;
    pmix_status_t rc = PMIx_Get(&p, "bench.ep", NULL, 0, &got);
    if (PMIX_SUCCESS != rc) return fail("PMIx_Get (peer endpoint)", rc);
    char want[65];
    endpoint(want, peer, round);
    int ok = PMIX_STRING == got->type && 0 == strcmp(got->data.string, want);
    PMIX_VALUE_RELEASE(got);
    return ok ? 0 : fail("PMIx_Get (peer endpoint): not this round's value", PMIX_ERR_BAD_PARAM);
}

/* This process's resident set (VmRSS), in kB. */
static long rss_kb(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (NULL == f) return -1;
    char line[256];
    long kb = -1;
    while (NULL != fgets(line, sizeof line, f))
        if (1 == sscanf(line, "VmRSS: %ld", &kb)) break;
    fclose(f);
    return kb;
}

static int data_fences(const pmix_proc_t *me, const pmix_proc_t *job, int iters) {
    pmix_value_t *got = NULL;
    pmix_status_t rc = PMIx_Get(job, PMIX_JOB_SIZE, NULL, 0, &got);
    if (PMIX_SUCCESS != rc) return fail("PMIx_Get (job size)", rc);
    uint32_t size = got->data.uint32;
    PMIX_VALUE_RELEASE(got);
    bool collect = true;
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    samples_t times = {0};
    const int warmup = 3;
    /* BENCH_FENCE_TRACE=DIR: each fence's start and end (CLOCK_MONOTONIC,
     * ns) go to DIR/client.RANK, for tools/multinode/fence_trace.py. */
    const char *trace_dir = getenv("BENCH_FENCE_TRACE");
    long long *marks = trace_dir ? calloc(2 * (size_t) (warmup + iters), sizeof(long long)) : NULL;
    const char *gap_env = getenv("BENCH_FENCE_GAP_US");
    const long gap_us = gap_env ? atol(gap_env) : 0;
    double loop0 = 0;
    for (int i = 0; i < warmup + iters; ++i) {
        if (i == warmup) loop0 = now_us();
        if (gap_us > 0) {
            struct timespec gap = {gap_us / 1000000, (gap_us % 1000000) * 1000};
            nanosleep(&gap, NULL);
        }
        if (0 != put_endpoint(me->rank, i)) return 1;
        double f0 = now_us();
        rc = PMIx_Fence(job, 1, &info, 1);
        double f1 = now_us();
        double dt = f1 - f0;
        if (PMIX_SUCCESS != rc) return fail("PMIx_Fence", rc);
        if (i >= warmup) sample(&times, dt);
        if (marks) {
            marks[2 * i] = (long long) (f0 * 1e3);
            marks[2 * i + 1] = (long long) (f1 * 1e3);
        }
    }
    /* The timed rounds' whole time, Puts and Commits included: one
     * fence's wall time is this over iters (tools/multinode/fence_cpu.py). */
    const double loop_us = now_us() - loop0;
    if (marks) {
        char path[4096];
        snprintf(path, sizeof path, "%s/client.%u", trace_dir, me->rank);
        FILE *f = fopen(path, "w");
        if (!f) return fail("BENCH_FENCE_TRACE (cannot write there)", PMIX_ERROR);
        for (int i = 0; i < warmup + iters; ++i) fprintf(f, "%lld begin\n%lld end\n", marks[2 * i], marks[2 * i + 1]);
        fclose(f);
        free(marks);
    }
    int last = warmup + iters - 1;
    if (0 != check_endpoint(me->nspace, (me->rank + 1) % size, last) ||
        0 != check_endpoint(me->nspace, (me->rank + size / 2) % size, last))
        return 1;
    /* Nobody leaves before everyone has read. */
    collect = false;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    if (PMIX_SUCCESS != (rc = PMIx_Fence(job, 1, &info, 1))) return fail("PMIx_Fence", rc);
    PMIX_INFO_DESTRUCT(&info);
    /* After the fences and the two Gets: what the data cost this process. */
    long rss = rss_kb();
    print_samples(&times, "dfence_us", 1);
    printf("sample dfence_rss_kb %ld\n", rss);
    printf("sample dfence_loop_us %.1f\n", loop_us);
    return 0;
}

static int dmodex(const pmix_proc_t *me, const pmix_proc_t *job) {
    pmix_value_t *got = NULL;
    pmix_status_t rc = PMIx_Get(job, PMIX_JOB_SIZE, NULL, 0, &got);
    if (PMIX_SUCCESS != rc) return fail("PMIx_Get (job size)", rc);
    uint32_t size = got->data.uint32;
    PMIX_VALUE_RELEASE(got);
    if (0 != put_endpoint(me->rank, 0)) return 1;
    if (PMIX_SUCCESS != (rc = PMIx_Fence(job, 1, NULL, 0))) return fail("PMIx_Fence", rc);
    samples_t times = {0};
    for (uint32_t k = 1; k < size; ++k) {
        const pmix_rank_t peer = (me->rank + k) % size;
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me->nspace, peer);
        double g0 = now_us();
        rc = PMIx_Get(&p, "bench.ep", NULL, 0, &got);
        double dt = now_us() - g0;
        if (PMIX_SUCCESS != rc) return fail("PMIx_Get (peer endpoint)", rc);
        PMIX_VALUE_RELEASE(got);
        sample(&times, dt);
    }
    /* Nobody leaves before everyone has read. */
    if (PMIX_SUCCESS != (rc = PMIx_Fence(job, 1, NULL, 0))) return fail("PMIx_Fence", rc);
    print_samples(&times, "dmodex_get_us", 1);
    return 0;
}

static int cycles(int n, const char *dir, int a, int b) {
    samples_t times = {0};
    for (int i = 1; i <= n; ++i) {
        pmix_proc_t me;
        double t0 = now_us();
        pmix_status_t rc = PMIx_Init(&me, NULL, 0);
        if (PMIX_SUCCESS != rc) return fail("PMIx_Init", rc);
        rc = PMIx_Finalize(NULL, 0);
        if (PMIX_SUCCESS != rc) return fail("PMIx_Finalize", rc);
        if (NULL == dir) sample(&times, now_us() - t0);
        if (NULL != dir && (i == a || i == b)) {
            char path[4096];
            struct stat st;
            snprintf(path, sizeof path, "%s/at.%d", dir, i);
            FILE *f = fopen(path, "w");
            if (NULL != f) fclose(f);
            snprintf(path, sizeof path, "%s/ack.%d", dir, i);
            for (int w = 0; w < 600000 && 0 != stat(path, &st); ++w) usleep(1000);
        }
    }
    print_samples(&times, "cycle_us", 1);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    const char *mode = argv[1];
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (0 == strcmp(mode, "cycle") && argc > 2) return cycles(atoi(argv[2]), NULL, 0, 0);
    if (0 == strcmp(mode, "rss") && argc > 4) {
        int a = atoi(argv[3]), b = atoi(argv[4]);
        return cycles(b, argv[2], a, b);
    }

    pmix_proc_t me, job;
    if (0 == strcmp(mode, "gated")) {
        /* Every client of the job is started before any calls PMIx_Init:
         * the host closes the gate's other end once it has forked them all. */
        const char *gate = getenv("BENCH_GATE_FD");
        char byte;
        if (NULL == gate) return fail("BENCH_GATE_FD", PMIX_ERR_BAD_PARAM);
        while (0 != read(atoi(gate), &byte, 1)) {
        }
    }
    double t0 = now_us();
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    double t_init = now_us() - t0;
    if (PMIX_SUCCESS != rc) return fail("PMIx_Init", rc);
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);

    if (0 == strcmp(mode, "startup")) {
        printf("sample startup_init_us %.1f\n", t_init);
    } else if (0 == strcmp(mode, "gated")) {
        printf("sample gated_init_us %.1f\n", t_init);
    } else if (0 == strcmp(mode, "ready")) {
        /* What MPI_Init does once: Put, Commit, a collecting fence; then
         * this process is ready. Its ready time (CLOCK_MONOTONIC, µs) goes
         * to the host through the pipe BENCH_READY_FD names. */
        if (0 != put_endpoint(me.rank, 0)) return 1;
        bool collect = true;
        pmix_info_t info;
        PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
        rc = PMIx_Fence(&job, 1, &info, 1);
        PMIX_INFO_DESTRUCT(&info);
        if (PMIX_SUCCESS != rc) return fail("PMIx_Fence", rc);
        double ready = now_us();
        const char *fd_text = getenv("BENCH_READY_FD");
        if (NULL == fd_text || sizeof ready != write(atoi(fd_text), &ready, sizeof ready))
            return fail("BENCH_READY_FD (no pipe to the host)", PMIX_ERROR);
        printf("sample ready_init_us %.1f\n", t_init);
    } else if (0 == strcmp(mode, "fence") && argc > 3) {
        int iters = atoi(argv[2]);
        bool collect = 0 != atoi(argv[3]);
        pmix_info_t info;
        PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
        for (int i = 0; i < 5; ++i) /* warm-up */
            if (PMIX_SUCCESS != (rc = PMIx_Fence(&job, 1, &info, 1))) return fail("PMIx_Fence", rc);
        samples_t times = {0};
        for (int i = 0; i < iters; ++i) {
            double f0 = now_us();
            rc = PMIx_Fence(&job, 1, &info, 1);
            if (PMIX_SUCCESS != rc) return fail("PMIx_Fence", rc);
            sample(&times, now_us() - f0);
        }
        /* Nobody leaves (prints, finalizes, exits) while another rank is
         * still in a timed fence: that rank's last sample would time the
         * others' exit, not the fence. */
        if (PMIX_SUCCESS != (rc = PMIx_Fence(&job, 1, &info, 1))) return fail("PMIx_Fence", rc);
        print_samples(&times, "fence_us", 1);
        PMIX_INFO_DESTRUCT(&info);
    } else if (0 == strcmp(mode, "datafence") && argc > 2) {
        if (0 != data_fences(&me, &job, atoi(argv[2]))) return 1;
    } else if (0 == strcmp(mode, "dmodex")) {
        if (0 != dmodex(&me, &job)) return 1;
    } else if (0 == strcmp(mode, "remote-host")) {
        /* The first lookup of a rank on another node (bench_host maps-get):
         * the job's last rank, on node "benchnode<last>". */
        pmix_value_t *got = NULL;
        if (PMIX_SUCCESS != (rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &got))) return fail("PMIx_Get (job size)", rc);
        uint32_t size = got->data.uint32;
        PMIX_VALUE_RELEASE(got);
        if (PMIX_SUCCESS != (rc = PMIx_Get(&job, PMIX_NUM_NODES, NULL, 0, &got))) return fail("PMIx_Get (nodes)", rc);
        uint32_t nodes = got->data.uint32;
        PMIX_VALUE_RELEASE(got);
        pmix_proc_t last;
        PMIX_LOAD_PROCID(&last, me.nspace, size - 1);
        long rss0 = rss_kb();
        double g0 = now_us();
        rc = PMIx_Get(&last, PMIX_HOSTNAME, NULL, 0, &got);
        double dt = now_us() - g0;
        long rss1 = rss_kb();
        if (PMIX_SUCCESS != rc) return fail("PMIx_Get (a remote rank's host)", rc);
        char want[64];
        snprintf(want, sizeof want, "benchnode%u", nodes - 1);
        if (PMIX_STRING != got->type || 0 != strcmp(got->data.string, want))
            return fail("PMIx_Get (a remote rank's host): wrong value", PMIX_ERR_BAD_PARAM);
        PMIX_VALUE_RELEASE(got);
        printf("sample remote_host_us %.1f\n", dt);
        printf("sample remote_host_kb %ld\n", rss1 - rss0);
    } else if (0 == strcmp(mode, "get") && argc > 2) {
        int iters = atoi(argv[2]);
        char payload[65];
        memset(payload, 'a' + (int) me.rank, 64);
        payload[64] = '\0';
        pmix_value_t v;
        PMIX_VALUE_LOAD(&v, payload, PMIX_STRING);
        if (PMIX_SUCCESS != (rc = PMIx_Put(PMIX_GLOBAL, "bench.key", &v))) return fail("PMIx_Put", rc);
        PMIX_VALUE_DESTRUCT(&v);
        if (PMIX_SUCCESS != (rc = PMIx_Commit())) return fail("PMIx_Commit", rc);
        bool collect = true;
        pmix_info_t info;
        PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
        if (PMIX_SUCCESS != (rc = PMIx_Fence(&job, 1, &info, 1))) return fail("PMIx_Fence", rc);
        if (0 == me.rank) {
            pmix_proc_t peer;
            PMIX_LOAD_PROCID(&peer, me.nspace, 1);
            samples_t peer_times = {0}, job_times = {0};
            for (int i = 0; i < iters; ++i) {
                pmix_value_t *got = NULL;
                double g0 = now_us();
                rc = PMIx_Get(&peer, "bench.key", NULL, 0, &got);
                double dt = now_us() - g0;
                if (PMIX_SUCCESS != rc) return fail("PMIx_Get (peer key)", rc);
                if (PMIX_STRING != got->type || 64 != strlen(got->data.string) || 'b' != got->data.string[0])
                    return fail("PMIx_Get (peer key): wrong value", PMIX_ERR_BAD_PARAM);
                PMIX_VALUE_RELEASE(got);
                sample(&peer_times, dt);
            }
            for (int i = 0; i < iters; ++i) {
                pmix_value_t *got = NULL;
                double g0 = now_us();
                rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &got);
                double dt = now_us() - g0;
                if (PMIX_SUCCESS != rc) return fail("PMIx_Get (job size)", rc);
                PMIX_VALUE_RELEASE(got);
                sample(&job_times, dt);
            }
            print_samples(&peer_times, "get_peer_us", 2);
            print_samples(&job_times, "get_job_us", 2);
        }
        /* Nobody leaves before rank 0 has read. */
        collect = false;
        PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
        if (PMIX_SUCCESS != (rc = PMIx_Fence(&job, 1, &info, 1))) return fail("PMIx_Fence", rc);
        PMIX_INFO_DESTRUCT(&info);
    } else {
        fprintf(stderr, "bench_client: unknown mode or missing arguments: %s\n", mode);
        return 2;
    }
    rc = PMIx_Finalize(NULL, 0);
    return PMIX_SUCCESS == rc ? 0 : fail("PMIx_Finalize", rc);
}
