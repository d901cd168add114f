/* pmixrun_client: a PMIx client that exercises what pmixrun hosts. Public API only.
 *
 *   pmixrun_client pubsub          (-n 2) publish / lookup / unpublish: default and NAMESPACE
 *                                  ranges, a missing key, a duplicate, someone else's key,
 *                                  FIRST_READ, a lookup held by PMIX_WAIT until the key comes,
 *                                  PMIX_WAIT with PMIX_TIMEOUT, unpublish of all one's keys
 *   pmixrun_client persist         (-n 2) PERSIST_PROC data goes when its publisher ends,
 *                                  PERSIST_APP and SESSION data stay
 *   pmixrun_client spawn CODE      (-n 2) rank 0 spawns two apps of this program (2 + 1
 *                                  processes) as one job, app 1 in the working directory
 *                                  "/"; parents and children connect,
 *                                  read each other's job data, disconnect; the children check
 *                                  their job data, ranges across jobs and PERSIST_APP; the last
 *                                  child exits with CODE
 *   pmixrun_client spawn-missing   (-n 1) spawning a program that does not exist fails
 *   pmixrun_client log             (-n 2) PMIx_Log to stdout and stderr, and a required
 *                                  channel nobody offers (PMIX_LOG_EMAIL) is refused
 *   pmixrun_client jobdata         (any -n) the job data Open MPI reads, with its types
 *   pmixrun_client output LINES [SPAWN]
 *                                  (any -n) output forwarding: each process writes LINES lines
 *                                  "out <nspace> <rank> <k>" to stdout and "err ..." to
 *                                  stderr, each line in two write()s with a pause between (a
 *                                  partial line pmixrun must not mix with others); with SPAWN
 *                                  > 0, rank 0 first spawns SPAWN processes of "output LINES"
 *                                  (a second job, for the tags of spawned jobs)
 *
 * Output: "FAIL <mode>: rank R: ..." per failed check, "OK <mode> rank=R" per passing
 * process; exit status 1 on any failure (spawn children: CODE for the last one). */
#define _GNU_SOURCE
#include <errno.h>
#include <pmix.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static pmix_proc_t me;
static const char *mode = "?";
static int failures = 0;

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL %s: %s:%u: ", mode, me.nspace, me.rank);
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
    ++failures;
}

#define CHECK(cond, ...)        \
    do {                        \
        if (!(cond))            \
            fail(__VA_ARGS__);  \
    } while (0)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void fence(void)
{
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "PMIx_Fence: %s", PMIx_Error_string(rc));
}

/* Publishes key=value (a string) with the given range and persistence (negative: default). */
static pmix_status_t publish(const char *key, const char *value, int range, int persistence)
{
    pmix_info_t info[3];
    size_t n = 0;
    PMIX_INFO_LOAD(&info[n], key, value, PMIX_STRING);
    ++n;
    if (range >= 0) {
        pmix_data_range_t r = (pmix_data_range_t) range;
        PMIX_INFO_LOAD(&info[n], PMIX_RANGE, &r, PMIX_DATA_RANGE);
        ++n;
    }
    if (persistence >= 0) {
        pmix_persistence_t p = (pmix_persistence_t) persistence;
        PMIX_INFO_LOAD(&info[n], PMIX_PERSISTENCE, &p, PMIX_PERSIST);
        ++n;
    }
    pmix_status_t rc = PMIx_Publish(info, n);
    for (size_t k = 0; k < n; ++k)
        PMIX_INFO_DESTRUCT(&info[k]);
    return rc;
}

/* Looks up one key; on success copies its string value to value (if not NULL) and its
 * publisher to owner (if not NULL). wait_seconds: < 0 no PMIX_WAIT, 0 wait without a
 * timeout, > 0 wait with PMIX_TIMEOUT. */
static pmix_status_t lookup(const char *key, int wait_seconds, char *value, size_t size,
                            pmix_proc_t *owner)
{
    pmix_pdata_t pdata;
    PMIX_PDATA_CONSTRUCT(&pdata);
    PMIX_LOAD_KEY(pdata.key, key);
    pmix_info_t info[2];
    size_t n = 0;
    if (wait_seconds >= 0) {
        bool yes = true;
        PMIX_INFO_LOAD(&info[n], PMIX_WAIT, &yes, PMIX_BOOL);
        ++n;
    }
    if (wait_seconds > 0) {
        int t = wait_seconds;
        PMIX_INFO_LOAD(&info[n], PMIX_TIMEOUT, &t, PMIX_INT);
        ++n;
    }
    pmix_status_t rc = PMIx_Lookup(&pdata, 1, n > 0 ? info : NULL, n);
    if (rc == PMIX_SUCCESS && pdata.value.type != PMIX_STRING)
        rc = PMIX_ERR_NOT_FOUND; /* the key was left undefined */
    if (rc == PMIX_SUCCESS) {
        if (value != NULL)
            snprintf(value, size, "%s", pdata.value.data.string ? pdata.value.data.string : "");
        if (owner != NULL)
            *owner = pdata.proc;
    }
    PMIX_PDATA_DESTRUCT(&pdata);
    for (size_t k = 0; k < n; ++k)
        PMIX_INFO_DESTRUCT(&info[k]);
    return rc;
}

static pmix_status_t unpublish(const char *key)
{
    char *keys[2] = {(char *) key, NULL};
    return PMIx_Unpublish(key != NULL ? keys : NULL, NULL, 0);
}

/* The value of key for (nspace, rank), or NULL (caller releases). */
static pmix_value_t *get(const char *nspace, pmix_rank_t rank, const char *key)
{
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, nspace, rank);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &v);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Get(%s:%u, %s): %s", nspace, rank, key, PMIx_Error_string(rc));
        return NULL;
    }
    return v;
}

/* Checks an unsigned key's type and value (want < 0: only the type). */
static void expect_uint(const char *nspace, pmix_rank_t rank, const char *key,
                        pmix_data_type_t type, long want)
{
    pmix_value_t *v = get(nspace, rank, key);
    if (v == NULL)
        return;
    long got = -1;
    if (v->type == PMIX_UINT32)
        got = v->data.uint32;
    else if (v->type == PMIX_UINT16)
        got = v->data.uint16;
    else if (v->type == PMIX_PROC_RANK)
        got = v->data.rank;
    CHECK(v->type == type, "%s has type %s, want %s", key, PMIx_Data_type_string(v->type),
          PMIx_Data_type_string(type));
    CHECK(want < 0 || got == want, "%s = %ld, want %ld", key, got, want);
    PMIX_VALUE_RELEASE(v);
}

static bool same_proc(const pmix_proc_t *a, const char *nspace, pmix_rank_t rank)
{
    return PMIX_CHECK_NSPACE(a->nspace, nspace) && a->rank == rank;
}

/* ---- pubsub ------------------------------------------------------------------------ */

static void pubsub(void)
{
    char value[256];
    pmix_proc_t owner;
    pmix_status_t rc;
    if (me.rank == 0) {
        rc = publish("t.session", "s0", -1, -1);
        CHECK(rc == PMIX_SUCCESS, "publish t.session: %s", PMIx_Error_string(rc));
        rc = publish("t.ns", "n0", PMIX_RANGE_NAMESPACE, -1);
        CHECK(rc == PMIX_SUCCESS, "publish t.ns: %s", PMIx_Error_string(rc));
        rc = publish("t.once", "o0", -1, PMIX_PERSIST_FIRST_READ);
        CHECK(rc == PMIX_SUCCESS, "publish t.once: %s", PMIx_Error_string(rc));
    }
    fence();
    if (me.rank == 1) {
        rc = lookup("t.session", -1, value, sizeof value, &owner);
        CHECK(rc == PMIX_SUCCESS, "lookup t.session: %s", PMIx_Error_string(rc));
        if (rc == PMIX_SUCCESS) {
            CHECK(strcmp(value, "s0") == 0, "t.session = '%s', want 's0'", value);
            CHECK(same_proc(&owner, me.nspace, 0), "t.session published by %s:%u, want rank 0",
                  owner.nspace, owner.rank);
        }
        rc = lookup("t.ns", -1, value, sizeof value, NULL);
        CHECK(rc == PMIX_SUCCESS && strcmp(value, "n0") == 0, "lookup t.ns (same namespace): %s",
              PMIx_Error_string(rc));
        rc = lookup("t.missing", -1, NULL, 0, NULL);
        CHECK(rc == PMIX_ERR_NOT_FOUND, "lookup of a missing key: %s, want NOT-FOUND",
              PMIx_Error_string(rc));
        rc = publish("t.session", "s1", -1, -1);
        CHECK(rc == PMIX_ERR_DUPLICATE_KEY, "second publish of t.session: %s, want DUPLICATE-KEY",
              PMIx_Error_string(rc));
        rc = unpublish("t.session");
        CHECK(rc != PMIX_SUCCESS, "unpublish of rank 0's key succeeded");
        rc = lookup("t.session", -1, value, sizeof value, NULL);
        CHECK(rc == PMIX_SUCCESS, "t.session gone after someone else's unpublish: %s",
              PMIx_Error_string(rc));
        rc = lookup("t.once", -1, value, sizeof value, NULL);
        CHECK(rc == PMIX_SUCCESS && strcmp(value, "o0") == 0, "first read of t.once: %s",
              PMIx_Error_string(rc));
        rc = lookup("t.once", -1, NULL, 0, NULL);
        CHECK(rc == PMIX_ERR_NOT_FOUND, "second read of t.once: %s, want NOT-FOUND",
              PMIx_Error_string(rc));
        double t0 = now();
        rc = lookup("t.never", 1, NULL, 0, NULL);
        double waited = now() - t0;
        CHECK(rc != PMIX_SUCCESS, "waiting lookup of a key nobody publishes succeeded");
        CHECK(waited > 0.8 && waited < 10, "PMIX_TIMEOUT 1 ended the wait after %.2f s", waited);
    }
    fence();
    /* a lookup held until the key is published */
    if (me.rank == 1) {
        double t0 = now();
        rc = lookup("t.late", 0, value, sizeof value, &owner);
        double waited = now() - t0;
        CHECK(rc == PMIX_SUCCESS && strcmp(value, "l0") == 0, "waiting lookup of t.late: %s",
              PMIx_Error_string(rc));
        CHECK(waited > 0.3, "the waiting lookup returned after %.2f s, before the publish", waited);
    } else if (me.rank == 0) {
        usleep(500000);
        rc = publish("t.late", "l0", -1, -1);
        CHECK(rc == PMIX_SUCCESS, "publish t.late: %s", PMIx_Error_string(rc));
    }
    fence();
    if (me.rank == 0) {
        rc = unpublish(NULL);
        CHECK(rc == PMIX_SUCCESS, "unpublish of all own keys: %s", PMIx_Error_string(rc));
    }
    fence();
    const char *gone[] = {"t.session", "t.ns", "t.late"};
    for (size_t k = 0; k < 3; ++k) {
        rc = lookup(gone[k], -1, NULL, 0, NULL);
        CHECK(rc == PMIX_ERR_NOT_FOUND, "lookup of %s after unpublish: %s, want NOT-FOUND", gone[k],
              PMIx_Error_string(rc));
    }
}

/* ---- persist ----------------------------------------------------------------------- */

static void persist(void)
{
    pmix_status_t rc;
    if (me.rank == 0) {
        CHECK(publish("p.proc", "x", -1, PMIX_PERSIST_PROC) == PMIX_SUCCESS, "publish p.proc");
        CHECK(publish("p.app", "x", -1, PMIX_PERSIST_APP) == PMIX_SUCCESS, "publish p.app");
        CHECK(publish("p.session", "x", -1, PMIX_PERSIST_SESSION) == PMIX_SUCCESS,
              "publish p.session");
    }
    fence();
    if (me.rank == 1) {
        CHECK(lookup("p.proc", -1, NULL, 0, NULL) == PMIX_SUCCESS, "p.proc while rank 0 lives");
    }
    fence();
    if (me.rank != 1)
        return; /* rank 0 ends now */
    double t0 = now();
    do {
        rc = lookup("p.proc", -1, NULL, 0, NULL);
        if (rc == PMIX_SUCCESS)
            usleep(50000);
    } while (rc == PMIX_SUCCESS && now() - t0 < 15);
    CHECK(rc == PMIX_ERR_NOT_FOUND, "p.proc still there %.1f s after rank 0 ended: %s", now() - t0,
          PMIx_Error_string(rc));
    CHECK(lookup("p.app", -1, NULL, 0, NULL) == PMIX_SUCCESS, "p.app gone while the job runs");
    CHECK(lookup("p.session", -1, NULL, 0, NULL) == PMIX_SUCCESS, "p.session gone");
}

/* ---- spawn ------------------------------------------------------------------------- */

enum { CHILDREN_APP0 = 2, CHILDREN_APP1 = 1, CHILDREN = CHILDREN_APP0 + CHILDREN_APP1 };

/* PMIx_Connect, a job-data Get across the jobs, PMIx_Disconnect. */
static void connect_jobs(const char *parent_ns, const char *child_ns, const char *other_ns,
                         long other_size)
{
    pmix_proc_t procs[2];
    PMIX_LOAD_PROCID(&procs[0], parent_ns, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&procs[1], child_ns, PMIX_RANK_WILDCARD);
    pmix_status_t rc = PMIx_Connect(procs, 2, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "PMIx_Connect: %s", PMIx_Error_string(rc));
    expect_uint(other_ns, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, PMIX_UINT32, other_size);
    rc = PMIx_Disconnect(procs, 2, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "PMIx_Disconnect: %s", PMIx_Error_string(rc));
}

static int spawn_child(int argc, char **argv)
{
    if (argc < 5) {
        fail("child needs: child CODE APPNUM PARENTS");
        return 1;
    }
    const int code = atoi(argv[2]);
    const long appnum = atol(argv[3]);
    const long parents = atol(argv[4]);
    expect_uint(me.nspace, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, PMIX_UINT32, CHILDREN);
    expect_uint(me.nspace, me.rank, PMIX_APPNUM, PMIX_UINT32, appnum);
    CHECK((appnum == 0 && me.rank < CHILDREN_APP0) || (appnum == 1 && me.rank >= CHILDREN_APP0),
          "rank %u in app %ld: the apps' ranks are not consecutive", me.rank, appnum);
    expect_uint(me.nspace, me.rank, PMIX_LOCAL_RANK, PMIX_UINT16, me.rank);
    /* app 1 was given "/" as its working directory, app 0 none (the launcher's) */
    char cwd[4096] = "";
    CHECK(getcwd(cwd, sizeof cwd) != NULL, "getcwd: %s", strerror(errno));
    if (appnum == 1)
        CHECK(strcmp(cwd, "/") == 0, "app 1 runs in %s, not in its wdir /", cwd);
    else
        CHECK(strcmp(cwd, "/") != 0, "app 0 runs in /, not in the launcher's directory");
    pmix_value_t *v = get(me.nspace, PMIX_RANK_WILDCARD, PMIX_SPAWNED);
    if (v != NULL) {
        CHECK(v->type == PMIX_BOOL && v->data.flag, "PMIX_SPAWNED is not true");
        PMIX_VALUE_RELEASE(v);
    }
    char parent_ns[PMIX_MAX_NSLEN + 1] = "";
    v = get(me.nspace, PMIX_RANK_WILDCARD, PMIX_PARENT_ID);
    if (v != NULL) {
        CHECK(v->type == PMIX_PROC && v->data.proc != NULL, "PMIX_PARENT_ID is not a proc");
        if (v->type == PMIX_PROC && v->data.proc != NULL) {
            PMIX_LOAD_NSPACE(parent_ns, v->data.proc->nspace);
            CHECK(v->data.proc->rank == 0, "the parent is rank %u, want 0", v->data.proc->rank);
        }
        PMIX_VALUE_RELEASE(v);
    }
    if (parent_ns[0] == '\0')
        return 1;
    connect_jobs(parent_ns, me.nspace, parent_ns, parents);

    /* ranges across jobs: the parent's SESSION key is visible, its NAMESPACE one is not */
    pmix_proc_t owner;
    char value[64];
    pmix_status_t rc = lookup("s.session", -1, value, sizeof value, &owner);
    CHECK(rc == PMIX_SUCCESS, "lookup of the parent's SESSION key: %s", PMIx_Error_string(rc));
    if (rc == PMIX_SUCCESS)
        CHECK(same_proc(&owner, parent_ns, 0), "s.session published by %s:%u", owner.nspace,
              owner.rank);
    rc = lookup("s.ns", -1, NULL, 0, NULL);
    CHECK(rc == PMIX_ERR_NOT_FOUND, "lookup of the parent's NAMESPACE key from another job: %s",
          PMIx_Error_string(rc));
    if (me.rank == 0) {
        CHECK(publish("c.app", "a", -1, PMIX_PERSIST_APP) == PMIX_SUCCESS, "publish c.app");
        CHECK(publish("c.session", "s", -1, -1) == PMIX_SUCCESS, "publish c.session");
    }
    fence();
    /* tell the parents that the children are done with the checks above */
    if (me.rank == 0)
        CHECK(publish("c.done", "yes", -1, -1) == PMIX_SUCCESS, "publish c.done");
    if (failures == 0) {
        printf("OK spawn child rank=%u appnum=%ld\n", me.rank, appnum);
        fflush(stdout);
    }
    if (failures > 0)
        return 1;
    return me.rank == CHILDREN - 1 ? code : 0;
}

static void spawn_parent(int code)
{
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) {
        fail("readlink /proc/self/exe");
        return;
    }
    self[len] = '\0';
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *sz = get(me.nspace, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);
    const long parents = sz != NULL && sz->type == PMIX_UINT32 ? (long) sz->data.uint32 : -1;
    if (sz != NULL)
        PMIX_VALUE_RELEASE(sz);
    char child_ns[PMIX_MAX_NSLEN + 1] = "";
    if (me.rank == 0) {
        CHECK(publish("s.session", "x", -1, -1) == PMIX_SUCCESS, "publish s.session");
        CHECK(publish("s.ns", "x", PMIX_RANGE_NAMESPACE, -1) == PMIX_SUCCESS, "publish s.ns");
        char code_s[16], parents_s[16];
        snprintf(code_s, sizeof code_s, "%d", code);
        snprintf(parents_s, sizeof parents_s, "%ld", parents);
        pmix_app_t apps[2];
        pmix_status_t rc;
        for (int a = 0; a < 2; ++a) {
            PMIX_APP_CONSTRUCT(&apps[a]);
            apps[a].cmd = strdup(self);
            PMIX_ARGV_APPEND(rc, apps[a].argv, self);
            PMIX_ARGV_APPEND(rc, apps[a].argv, "child");
            PMIX_ARGV_APPEND(rc, apps[a].argv, code_s);
            PMIX_ARGV_APPEND(rc, apps[a].argv, a == 0 ? "0" : "1");
            PMIX_ARGV_APPEND(rc, apps[a].argv, parents_s);
            PMIX_ARGV_APPEND(rc, apps[a].env, "PMIXRUN_CLIENT_MODE=spawn");
            apps[a].maxprocs = a == 0 ? CHILDREN_APP0 : CHILDREN_APP1;
        }
        apps[1].cwd = strdup("/");
        pmix_nspace_t ns;
        rc = PMIx_Spawn(NULL, 0, apps, 2, ns);
        CHECK(rc == PMIX_SUCCESS, "PMIx_Spawn: %s", PMIx_Error_string(rc));
        for (int a = 0; a < 2; ++a)
            PMIX_APP_DESTRUCT(&apps[a]);
        if (rc == PMIX_SUCCESS) {
            PMIX_LOAD_NSPACE(child_ns, ns);
            CHECK(!PMIX_CHECK_NSPACE(child_ns, me.nspace), "the spawned job has our namespace");
            /* the other parents learn the children's namespace with a waiting lookup */
            CHECK(publish("s.child", child_ns, PMIX_RANGE_NAMESPACE, -1) == PMIX_SUCCESS,
                  "publish s.child");
        } else {
            CHECK(publish("s.child", "", PMIX_RANGE_NAMESPACE, -1) == PMIX_SUCCESS,
                  "publish s.child");
        }
    } else {
        pmix_status_t rc = lookup("s.child", 30, child_ns, sizeof child_ns, NULL);
        CHECK(rc == PMIX_SUCCESS, "waiting lookup of s.child: %s", PMIx_Error_string(rc));
    }
    if (child_ns[0] == '\0')
        return;
    connect_jobs(me.nspace, child_ns, child_ns, CHILDREN);
    /* wait for the children's checks, then for their job to end: c.app goes with it */
    pmix_status_t rc = lookup("c.done", 30, NULL, 0, NULL);
    CHECK(rc == PMIX_SUCCESS, "waiting lookup of c.done: %s", PMIx_Error_string(rc));
    if (me.rank == 0 && code == 0) {
        double t0 = now();
        do {
            rc = lookup("c.app", -1, NULL, 0, NULL);
            if (rc == PMIX_SUCCESS)
                usleep(50000);
        } while (rc == PMIX_SUCCESS && now() - t0 < 15);
        CHECK(rc == PMIX_ERR_NOT_FOUND, "c.app (PERSIST_APP) outlived the children's job: %s",
              PMIx_Error_string(rc));
        CHECK(lookup("c.session", -1, NULL, 0, NULL) == PMIX_SUCCESS,
              "c.session gone with the children's job");
    }
    if (code != 0)
        sleep(30); /* the failing child ends the whole run before this returns */
}

static void spawn_missing(void)
{
    if (me.rank != 0)
        return;
    pmix_app_t app;
    pmix_status_t rc;
    PMIX_APP_CONSTRUCT(&app);
    app.cmd = strdup("/nonexistent/pmixrun-no-such-program");
    PMIX_ARGV_APPEND(rc, app.argv, app.cmd);
    app.maxprocs = 2;
    pmix_nspace_t ns;
    double t0 = now();
    rc = PMIx_Spawn(NULL, 0, &app, 1, ns);
    PMIX_APP_DESTRUCT(&app);
    CHECK(rc != PMIX_SUCCESS, "PMIx_Spawn of a missing program succeeded");
    CHECK(now() - t0 < 10, "PMIx_Spawn of a missing program took %.1f s", now() - t0);
    printf("spawn-missing: PMIx_Spawn returned %s\n", PMIx_Error_string(rc));
}

/* ---- log --------------------------------------------------------------------------- */

static void log_test(void)
{
    char text[128];
    pmix_info_t data[2];
    snprintf(text, sizeof text, "log to stderr from rank %u", me.rank);
    PMIX_INFO_LOAD(&data[0], PMIX_LOG_STDERR, text, PMIX_STRING);
    snprintf(text, sizeof text, "log to stdout from rank %u", me.rank);
    PMIX_INFO_LOAD(&data[1], PMIX_LOG_STDOUT, text, PMIX_STRING);
    pmix_status_t rc = PMIx_Log(data, 2, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "PMIx_Log to stdout and stderr: %s", PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&data[0]);
    PMIX_INFO_DESTRUCT(&data[1]);

    pmix_info_t mail;
    PMIX_INFO_LOAD(&mail, PMIX_LOG_EMAIL, "nobody@example.invalid", PMIX_STRING);
    PMIX_INFO_REQUIRED(&mail);
    rc = PMIx_Log(&mail, 1, NULL, 0);
    CHECK(rc != PMIX_SUCCESS, "a required PMIX_LOG_EMAIL was accepted");
    PMIX_INFO_DESTRUCT(&mail);
}

/* ---- output ------------------------------------------------------------------------ */

static void write_all(int fd, const char *text, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, text, len);
        if (n <= 0) {
            fail("write to fd %d failed", fd);
            return;
        }
        text += n;
        len -= (size_t) n;
    }
}

static void output(int lines, int spawn)
{
    if (spawn > 0 && me.rank == 0) {
        char self[4096], lines_s[16];
        ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
        if (len <= 0) {
            fail("readlink /proc/self/exe");
            return;
        }
        self[len] = '\0';
        snprintf(lines_s, sizeof lines_s, "%d", lines);
        pmix_app_t app;
        pmix_status_t rc;
        PMIX_APP_CONSTRUCT(&app);
        app.cmd = strdup(self);
        PMIX_ARGV_APPEND(rc, app.argv, self);
        PMIX_ARGV_APPEND(rc, app.argv, "output");
        PMIX_ARGV_APPEND(rc, app.argv, lines_s);
        app.maxprocs = spawn;
        pmix_nspace_t ns;
        rc = PMIx_Spawn(NULL, 0, &app, 1, ns);
        PMIX_APP_DESTRUCT(&app);
        CHECK(rc == PMIX_SUCCESS, "PMIx_Spawn: %s", PMIx_Error_string(rc));
    }
    char text[PMIX_MAX_NSLEN + 64];
    for (int k = 0; k < lines; ++k) {
        for (int fd = STDOUT_FILENO; fd <= STDERR_FILENO; ++fd) {
            int n = snprintf(text, sizeof text, "%s %s %u %d\n", fd == STDOUT_FILENO ? "out" : "err",
                             me.nspace, me.rank, k);
            int half = n / 2;
            write_all(fd, text, (size_t) half);
            usleep(2000);
            write_all(fd, text + half, (size_t) (n - half));
        }
    }
}

/* ---- jobdata ----------------------------------------------------------------------- */

static void jobdata(void)
{
    pmix_value_t *v = get(me.nspace, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);
    if (v == NULL)
        return;
    const long n = v->type == PMIX_UINT32 ? (long) v->data.uint32 : -1;
    CHECK(v->type == PMIX_UINT32, "PMIX_JOB_SIZE is not a uint32");
    PMIX_VALUE_RELEASE(v);
    /* what Open MPI 4.1's ess/pmi requires, with the types it requires */
    expect_uint(me.nspace, me.rank, PMIX_LOCAL_RANK, PMIX_UINT16, me.rank);
    expect_uint(me.nspace, me.rank, PMIX_NODE_RANK, PMIX_UINT16, me.rank);
    expect_uint(me.nspace, PMIX_RANK_WILDCARD, PMIX_MAX_PROCS, PMIX_UINT32, n);
    expect_uint(me.nspace, PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE, PMIX_UINT32, n);
    expect_uint(me.nspace, PMIX_RANK_WILDCARD, PMIX_NUM_NODES, PMIX_UINT32, 1);
    expect_uint(me.nspace, me.rank, PMIX_APPNUM, PMIX_UINT32, 0);
    v = get(me.nspace, PMIX_RANK_WILDCARD, PMIX_UNIV_SIZE);
    if (v != NULL) {
        CHECK(v->type == PMIX_UINT32 && (long) v->data.uint32 >= n, "PMIX_UNIV_SIZE < job size");
        PMIX_VALUE_RELEASE(v);
    }
    v = get(me.nspace, PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS);
    if (v != NULL) {
        char want[4096] = "";
        for (long r = 0; r < n && strlen(want) < sizeof want - 16; ++r)
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s%ld", r ? "," : "", r);
        CHECK(v->type == PMIX_STRING && strcmp(v->data.string, want) == 0,
              "PMIX_LOCAL_PEERS = '%s', want '%s'", v->type == PMIX_STRING ? v->data.string : "?",
              want);
        PMIX_VALUE_RELEASE(v);
    }
    v = get(me.nspace, me.rank, PMIX_HOSTNAME);
    if (v != NULL) {
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        CHECK(v->type == PMIX_STRING && strcmp(v->data.string, host) == 0, "PMIX_HOSTNAME");
        PMIX_VALUE_RELEASE(v);
    }
    v = get(me.nspace, PMIX_RANK_WILDCARD, PMIX_SPAWNED);
    if (v != NULL) {
        CHECK(v->type == PMIX_BOOL && !v->data.flag, "PMIX_SPAWNED is not false");
        PMIX_VALUE_RELEASE(v);
    }
    v = get(me.nspace, PMIX_RANK_WILDCARD, PMIX_NSDIR);
    if (v != NULL) {
        struct stat st;
        CHECK(v->type == PMIX_STRING && stat(v->data.string, &st) == 0 && S_ISDIR(st.st_mode),
              "PMIX_NSDIR is not a directory");
        PMIX_VALUE_RELEASE(v);
    }
}

int main(int argc, char **argv)
{
    mode = argc > 1 ? argv[1] : "?";
    const bool child = strcmp(mode, "child") == 0;
    if (child)
        mode = "spawn";
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        printf("FAIL %s: PMIx_Init: %s\n", mode, PMIx_Error_string(rc));
        return 1;
    }
    int status = 0;
    if (child) {
        status = spawn_child(argc, argv);
    } else if (strcmp(mode, "pubsub") == 0) {
        pubsub();
    } else if (strcmp(mode, "persist") == 0) {
        persist();
    } else if (strcmp(mode, "spawn") == 0) {
        spawn_parent(argc > 2 ? atoi(argv[2]) : 0);
    } else if (strcmp(mode, "spawn-missing") == 0) {
        spawn_missing();
    } else if (strcmp(mode, "log") == 0) {
        log_test();
    } else if (strcmp(mode, "jobdata") == 0) {
        jobdata();
    } else if (strcmp(mode, "output") == 0) {
        output(argc > 2 ? atoi(argv[2]) : 1, argc > 3 ? atoi(argv[3]) : 0);
    } else {
        fail("unknown mode");
    }
    if (!child && failures == 0) {
        printf("OK %s rank=%u\n", mode, me.rank);
        fflush(stdout);
    }
    PMIx_Finalize(NULL, 0);
    if (failures > 0)
        return 1;
    return status;
}
