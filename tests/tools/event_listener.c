/* event_listener: a PMIx client that stays up and reports the events it gets, for the
 * command-line tools' test (cli_test.sh). Public API only.
 *
 *   event_listener STOP_STATUS [SECONDS]
 *
 * Registers a default event handler, then prints "READY rank=R pid=P nspace=NS". Every event
 * prints one line "EVENT rank=R status=S source=NS:RANK" followed by " KEY=VALUE" for each
 * string or integer info it carries (other types as KEY:TYPE). An event of STOP_STATUS makes
 * it finalize and exit 0; after SECONDS (default 120) without one it exits 1. */
#define _GNU_SOURCE
#include <pmix.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pmix_proc_t me;
static pmix_status_t stop_status;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stopped_cond = PTHREAD_COND_INITIALIZER;
static int stopped = 0;

static void print_value(const char *key, const pmix_value_t *v)
{
    switch (v->type) {
    case PMIX_STRING: printf(" %s=%s", key, v->data.string != NULL ? v->data.string : ""); break;
    case PMIX_INT: printf(" %s=%d", key, v->data.integer); break;
    case PMIX_INT32: printf(" %s=%d", key, (int) v->data.int32); break;
    case PMIX_UINT32: printf(" %s=%u", key, (unsigned) v->data.uint32); break;
    case PMIX_UINT64: printf(" %s=%llu", key, (unsigned long long) v->data.uint64); break;
    case PMIX_BOOL: printf(" %s=%s", key, v->data.flag ? "true" : "false"); break;
    default: printf(" %s:%s", key, PMIx_Data_type_string(v->type)); break;
    }
}

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void) id;
    (void) results;
    (void) nresults;
    char line[4096];
    flockfile(stdout);
    printf("EVENT rank=%u status=%d source=%s:%u", me.rank, status, source != NULL ? source->nspace : "?",
           source != NULL ? source->rank : 0);
    for (size_t k = 0; k < ninfo; ++k) {
        snprintf(line, sizeof line, "%.*s", PMIX_MAX_KEYLEN, info[k].key);
        print_value(line, &info[k].value);
    }
    printf("\n");
    fflush(stdout);
    funlockfile(stdout);
    if (status == stop_status) {
        pthread_mutex_lock(&lock);
        stopped = 1;
        pthread_cond_signal(&stopped_cond);
        pthread_mutex_unlock(&lock);
    }
    if (cbfunc != NULL) cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: event_listener STOP_STATUS [SECONDS]\n");
        return 2;
    }
    stop_status = (pmix_status_t) atoi(argv[1]);
    const int seconds = argc > 2 ? atoi(argv[2]) : 120;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "event_listener: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    /* Blocking form: the reference comes back as the status (the first is 0). */
    rc = PMIx_Register_event_handler(NULL, 0, NULL, 0, on_event, NULL, NULL);
    if (rc < 0) {
        fprintf(stderr, "event_listener: PMIx_Register_event_handler: %s\n", PMIx_Error_string(rc));
        PMIx_Finalize(NULL, 0);
        return 1;
    }
    printf("READY rank=%u pid=%d nspace=%s\n", me.rank, (int) getpid(), me.nspace);
    fflush(stdout);

    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += seconds;
    pthread_mutex_lock(&lock);
    int timed_out = 0;
    while (!stopped && !timed_out)
        timed_out = pthread_cond_timedwait(&stopped_cond, &lock, &deadline) != 0;
    pthread_mutex_unlock(&lock);
    if (!stopped) fprintf(stderr, "event_listener: rank %u: no stop event in %d s\n", me.rank, seconds);
    PMIx_Finalize(NULL, 0);
    return stopped ? 0 : 1;
}
