/*
 * The demo client of the main job (README): written in C against the public
 * PMIx API only. Each rank puts a value, commits, joins a collecting fence,
 * then reads every peer's value and checks it, reads job-level data, and
 * finalizes. Exits non-zero on any mismatch.
 *
 *   pmix_demo [--no-collect] [--abort-rank R] [--crash-rank R] [--rounds N]
 */
#include <pmix.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(const pmix_proc_t *me, const char *what, pmix_status_t rc) {
    fprintf(stderr, "pmix_demo %s:%u: %s failed: %s\n", me->nspace, me->rank, what,
            PMIx_Error_string(rc));
    return 1;
}

static uint32_t get_u32(const pmix_proc_t *who, const char *key, pmix_status_t *rc) {
    pmix_value_t *val = NULL;
    uint32_t out = 0;
    *rc = PMIx_Get(who, key, NULL, 0, &val);
    if (PMIX_SUCCESS != *rc) return 0;
    switch (val->type) {
    case PMIX_UINT32: out = val->data.uint32; break;
    case PMIX_UINT16: out = val->data.uint16; break;
    case PMIX_PROC_RANK: out = val->data.rank; break;
    default: *rc = PMIX_ERR_TYPE_MISMATCH;
    }
    PMIX_VALUE_RELEASE(val);
    return out;
}

int main(int argc, char **argv) {
    int collect = 1, rounds = 1;
    long abort_rank = -1, crash_rank = -1;
    for (int i = 1; i < argc; ++i) {
        if (0 == strcmp(argv[i], "--no-collect")) collect = 0;
        else if (0 == strcmp(argv[i], "--abort-rank") && i + 1 < argc) abort_rank = atol(argv[++i]);
        else if (0 == strcmp(argv[i], "--crash-rank") && i + 1 < argc) crash_rank = atol(argv[++i]);
        else if (0 == strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--no-collect] [--abort-rank R] [--crash-rank R] [--rounds N]\n",
                    argv[0]);
            return 2;
        }
    }

    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, "pmix_demo: PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    uint32_t size = get_u32(&job, PMIX_JOB_SIZE, &rc);
    if (PMIX_SUCCESS != rc) return fail(&me, "PMIx_Get(PMIX_JOB_SIZE)", rc);
    uint32_t local_rank = get_u32(&me, PMIX_LOCAL_RANK, &rc);
    if (PMIX_SUCCESS != rc) return fail(&me, "PMIx_Get(PMIX_LOCAL_RANK)", rc);

    if ((long)me.rank == crash_rank) {
        /* Die without finalizing: the others' fence must fail, not hang. */
        raise(SIGKILL);
    }
    if ((long)me.rank == abort_rank) {
        rc = PMIx_Abort(42, "pmix_demo was asked to abort", NULL, 0);
        fprintf(stderr, "pmix_demo: PMIx_Abort returned %s\n", PMIx_Error_string(rc));
        return 3;
    }

    for (int round = 0; round < rounds; ++round) {
        char key[64], text[400];  /* a namespace is up to 255 characters */
        snprintf(key, sizeof key, "demo.value.%d", round);
        snprintf(text, sizeof text, "rank %u of %s says hello in round %d", me.rank, me.nspace,
                 round);
        pmix_value_t value;
        PMIX_VALUE_LOAD(&value, text, PMIX_STRING);
        rc = PMIx_Put(PMIX_GLOBAL, key, &value);
        PMIX_VALUE_DESTRUCT(&value);
        if (PMIX_SUCCESS != rc) return fail(&me, "PMIx_Put", rc);
        if (PMIX_SUCCESS != (rc = PMIx_Commit())) return fail(&me, "PMIx_Commit", rc);

        pmix_info_t info;
        bool flag = collect ? true : false;
        PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &flag, PMIX_BOOL);
        rc = PMIx_Fence(&job, 1, &info, 1);
        PMIX_INFO_DESTRUCT(&info);
        if (PMIX_SUCCESS != rc) return fail(&me, "PMIx_Fence", rc);

        for (uint32_t r = 0; r < size; ++r) {
            pmix_proc_t peer;
            PMIX_LOAD_PROCID(&peer, me.nspace, r);
            pmix_value_t *got = NULL;
            rc = PMIx_Get(&peer, key, NULL, 0, &got);
            if (PMIX_SUCCESS != rc) return fail(&me, "PMIx_Get(peer value)", rc);
            char expect[400];
            snprintf(expect, sizeof expect, "rank %u of %s says hello in round %d", r, me.nspace,
                     round);
            if (PMIX_STRING != got->type || 0 != strcmp(got->data.string, expect)) {
                fprintf(stderr, "pmix_demo %s:%u: rank %u's value is wrong\n", me.nspace, me.rank, r);
                PMIX_VALUE_RELEASE(got);
                return 1;
            }
            PMIX_VALUE_RELEASE(got);
        }
    }
    printf("pmix_demo: rank %u/%u (local rank %u) checked %u peers' values over %d round(s) (%s)\n",
           me.rank, size, local_rank, size, rounds, collect ? "collected" : "direct modex");
    fflush(stdout);
    rc = PMIx_Finalize(NULL, 0);
    if (PMIX_SUCCESS != rc) return fail(&me, "PMIx_Finalize", rc);
    return 0;
}
