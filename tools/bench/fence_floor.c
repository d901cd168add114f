/*
 * fence_floor RANKS FENCES [SPIN_US]: what a one-node fence cannot cost less than on
 * this machine, whatever library serves it. No PMIx: the parent is the
 * "server"; it forks RANKS processes, each joined to it by a Unix socket.
 * In every round each rank writes one 64-byte message (its contribution)
 * and sleeps on a futex word in a page they all share; the server reads
 * the RANKS messages (epoll), adds 1 to the word and wakes every rank with
 * one FUTEX_WAKE, as our server posts a fence board. What is left is the
 * system calls, the wake-ups and the context switches that any fence of
 * RANKS processes on one node needs. Nothing polls, unless SPIN_US (0 to
 * 100000, default 0): then each rank first polls the word for up to that
 * long, yielding its CPU between looks, as our client does for 1,000 µs
 * (PMIX_CXX_SPIN_US). Without polling the CPU is the least a fence needs;
 * whether polling saves wall time depends on N and on the machine (here,
 * 2 vCPUs: 4 ranks 18 µs without against 24 with, 64 ranks 328 against
 * 303).
 *
 * Prints the lines bench_client datafence prints, so that
 * tools/multinode/fence_cpu.py --floor measures it as it measures ours:
 *   sample dfence_us T       each rank, each timed round: from its write
 *                            until it is woken
 *   sample dfence_loop_us L  each rank: its timed rounds' whole time
 * after 3 untimed rounds. Exit status 0, or 1 when anything failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { warmup = 3, message = 64, max_ranks = 4096 };

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static long futex(atomic_uint *word, int op, unsigned value) {
    return syscall(SYS_futex, word, op, value, NULL, NULL, 0);
}

/* Writes whole lines, at most PIPE_BUF bytes at once: so many ranks'
 * lines on one pipe never break into each other. */
static int write_lines(const char *lines, size_t len) {
    for (size_t off = 0; off < len;) {
        size_t n = len - off;
        if (n > PIPE_BUF) {
            n = PIPE_BUF;
            while (n > 0 && lines[off + n - 1] != '\n') --n;
            if (0 == n) return 1;
        }
        ssize_t w = write(STDOUT_FILENO, lines + off, n);
        if (w != (ssize_t) n) return 1;
        off += n;
    }
    return 0;
}

/* One rank: `rounds` contributions, each followed by a sleep until the
 * server has taken every rank's. Its lines go out at the end. */
static int rank_main(int fd, atomic_uint *generation, int fences, long spin_us) {
    char out[64];
    char buf[message];
    memset(buf, 'r', sizeof buf);
    size_t cap = (size_t) fences * 32 + 64, len = 0;
    char *lines = malloc(cap);
    if (NULL == lines) return 1;
    double loop0 = 0;
    for (int i = 0; i < warmup + fences; ++i) {
        if (i == warmup) loop0 = now_us();
        unsigned seen = atomic_load_explicit(generation, memory_order_acquire);
        double t0 = now_us();
        if (write(fd, buf, sizeof buf) != (ssize_t) sizeof buf) return 1;
        while (spin_us > 0 && atomic_load_explicit(generation, memory_order_acquire) == seen &&
               now_us() - t0 < (double) spin_us)
            sched_yield();
        while (atomic_load_explicit(generation, memory_order_acquire) == seen)
            if (futex(generation, FUTEX_WAIT, seen) < 0 && errno != EAGAIN && errno != EINTR) return 1;
        if (i >= warmup) len += (size_t) snprintf(lines + len, cap - len, "sample dfence_us %.1f\n", now_us() - t0);
    }
    int n = snprintf(out, sizeof out, "sample dfence_loop_us %.1f\n", now_us() - loop0);
    if (len + (size_t) n < cap) memcpy(lines + len, out, (size_t) n + 1), len += (size_t) n;
    return write_lines(lines, len);
}

int main(int argc, char **argv) {
    char *end1 = NULL, *end2 = NULL, *end3 = NULL;
    const int args_ok = argc == 3 || argc == 4;
    long ranks = args_ok ? strtol(argv[1], &end1, 10) : 0;
    long fences = args_ok ? strtol(argv[2], &end2, 10) : 0;
    long spin_us = argc == 4 ? strtol(argv[3], &end3, 10) : 0;
    if (!args_ok || *end1 || *end2 || (end3 && (*end3 || end3 == argv[3])) || ranks < 1 || ranks > max_ranks ||
        fences < 1 || spin_us < 0 || spin_us > 100000) {
        fprintf(stderr, "usage: fence_floor RANKS FENCES [SPIN_US] (RANKS 1-%d, FENCES at least 1, "
                        "SPIN_US 0-100000)\n", max_ranks);
        return 2;
    }
    atomic_uint *generation = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int ep = epoll_create1(0);
    if (MAP_FAILED == generation || ep < 0) {
        perror("fence_floor");
        return 1;
    }
    atomic_store(generation, 0);
    /* The ranks' lines must not interleave with anything buffered here. */
    fflush(NULL);
    static pid_t pids[max_ranks];
    int failed = 0;
    for (long r = 0; r < ranks; ++r) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
            perror("fence_floor: socketpair");
            failed = 1;
            ranks = r;  /* those forked so far */
            break;
        }
        pid_t pid = fork();
        if (pid < 0) {
            perror("fence_floor: fork");
            failed = 1;
            ranks = r;
            break;
        }
        if (0 == pid) {
            close(sv[0]);
            close(ep);
            _exit(rank_main(sv[1], generation, (int) fences, spin_us));
        }
        pids[r] = pid;
        close(sv[1]);
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = sv[0]};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev) < 0) {
            perror("fence_floor: epoll_ctl");
            failed = 1;
            ranks = r + 1;
            break;
        }
    }
    struct epoll_event events[256];
    char buf[message];
    for (long round = 0; round < warmup + fences && !failed; ++round) {
        long got = 0;
        while (got < ranks && !failed) {
            int k = epoll_wait(ep, events, 256, -1);
            if (k < 0 && errno == EINTR) continue;
            if (k < 0) failed = 1;
            for (int j = 0; j < k; ++j) {
                /* One message a round from each rank: it sleeps until this
                 * round ends, so there is never a second one to read. */
                ssize_t n = read(events[j].data.fd, buf, sizeof buf);
                if (n != (ssize_t) sizeof buf) {
                    fprintf(stderr, "fence_floor: a rank's message was short or missing (%zd)\n", n);
                    failed = 1;
                    break;
                }
                ++got;
            }
        }
        atomic_fetch_add_explicit(generation, 1, memory_order_release);
        futex(generation, FUTEX_WAKE, (unsigned) ranks);
    }
    /* A failed round leaves the ranks asleep: end them. */
    if (failed)
        for (long r = 0; r < ranks; ++r) kill(pids[r], SIGKILL);
    int status = 0;
    for (long r = 0; r < ranks; ++r) {
        int s = 0;
        if (wait(&s) < 0 || !WIFEXITED(s) || WEXITSTATUS(s) != 0) status = 1;
    }
    if (failed || status) fprintf(stderr, "fence_floor: a rank or the server failed\n");
    return failed || status;
}
