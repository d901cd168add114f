/*
 * A client that times PMIx_Fence (and optionally idles), written only against
 * the standard API so it runs unchanged against any PMIx server.
 *
 *   fence_bench [--iterations K] [--collect] [--idle SECONDS]
 *
 * Rank 0 prints: "fence N=<job size> collect=<0|1> median_us=<m> p99_us=<p>".
 * --idle makes every rank sleep after init (to measure a server at rest).
 */
#define _POSIX_C_SOURCE 200809L
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    int iterations = 200, idle = 0;
    bool collect = false;
    for (int i = 1; i < argc; ++i) {
        if (0 == strcmp(argv[i], "--iterations") && i + 1 < argc) iterations = atoi(argv[++i]);
        else if (0 == strcmp(argv[i], "--collect")) collect = true;
        else if (0 == strcmp(argv[i], "--idle") && i + 1 < argc) idle = atoi(argv[++i]);
    }
    pmix_proc_t me, job;
    if (PMIX_SUCCESS != PMIx_Init(&me, NULL, 0)) return 1;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    uint32_t size = 0;
    if (PMIX_SUCCESS == PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &v)) {
        size = v->data.uint32;
        PMIX_VALUE_RELEASE(v);
    }
    if (idle > 0) sleep((unsigned) idle);
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    double *t = calloc((size_t) iterations, sizeof(double));
    /* one warm-up fence */
    if (PMIX_SUCCESS != PMIx_Fence(&job, 1, &info, 1)) return 1;
    for (int i = 0; i < iterations; ++i) {
        double t0 = now_us();
        if (PMIX_SUCCESS != PMIx_Fence(&job, 1, &info, 1)) return 1;
        t[i] = now_us() - t0;
    }
    qsort(t, (size_t) iterations, sizeof(double), cmp);
    if (0 == me.rank)
        printf("fence N=%u collect=%d median_us=%.1f p99_us=%.1f\n", size, collect ? 1 : 0,
               t[iterations / 2], t[(iterations * 99) / 100]);
    free(t);
    PMIX_INFO_DESTRUCT(&info);
    return PMIX_SUCCESS == PMIx_Finalize(NULL, 0) ? 0 : 1;
}
