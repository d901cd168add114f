/*
 * The baseline of bench_host's `ready-bare` mode: a process that links no
 * PMIx library and calls none. It writes the time it is ready
 * (CLOCK_MONOTONIC, µs) to the pipe BENCH_READY_FD names, as bench_client
 * does after its fence in `ready`, and exits: starting and ending N such
 * processes is what both libraries' jobs pay before any PMIx work.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double ready = (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
    const char *fd_text = getenv("BENCH_READY_FD");
    if (NULL == fd_text || sizeof ready != write(atoi(fd_text), &ready, sizeof ready)) {
        fprintf(stderr, "bench_bare: BENCH_READY_FD (no pipe to the host)\n");
        return 1;
    }
    return 0;
}
