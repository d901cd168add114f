/* pmix_trace.c: an LD_PRELOAD shim that logs the PMIx calls a host (Open MPI's mpirun and its
 * ranks) makes into libpmix.so.2, with their arguments (info keys and values, procs, apps),
 * their return codes, the completion of their callbacks, and the server up-calls libpmix makes
 * into the host, then forwards every call to the real library.
 *
 * Build:  cc -std=c11 -shared -fPIC -O1 -I/usr/lib/x86_64-linux-gnu/pmix2/include \
 *            -o libpmix_trace.so pmix_trace.c -ldl -lpthread
 * Use:    PMIX_TRACE_DIR=/tmp/trace LD_PRELOAD=$PWD/libpmix_trace.so mpirun ... ./prog
 *         (one file per process: <dir>/<pid>.log; trace_pmix.sh wraps this)
 *
 * The real functions are looked up in the libpmix.so.2 already loaded (Open MPI dlopens it
 * through mca_pmix_ext3x.so, RTLD_LOCAL, so RTLD_NEXT would not find it).  Calls libpmix makes
 * to its own exported functions come through the shim too; they are marked "nested". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pmix.h>
#include <pmix_server.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------------ */
/* output */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *log_file = NULL;
static struct timespec start_time;
static char identity[PMIX_MAX_NSLEN + 32] = "?";
static __thread int depth = 0;
static unsigned long next_id = 1;

static void open_log_locked(void)
{
    if (log_file)
        return;
    clock_gettime(CLOCK_MONOTONIC, &start_time);
    const char *dir = getenv("PMIX_TRACE_DIR");
    if (!dir || !*dir)
        dir = "/tmp/pmix_trace";
    mkdir(dir, 0755);
    char path[4096];
    snprintf(path, sizeof path, "%s/%d.log", dir, (int)getpid());
    log_file = fopen(path, "a");
    if (!log_file)
        log_file = stderr;
    char cmdline[1024] = "";
    FILE *c = fopen("/proc/self/cmdline", "r");
    if (c) {
        size_t n = fread(cmdline, 1, sizeof cmdline - 1, c);
        fclose(c);
        for (size_t i = 0; i + 1 < n; ++i)
            if (cmdline[i] == '\0')
                cmdline[i] = ' ';
        cmdline[n] = '\0';
    }
    fprintf(log_file, "# pid %d cmdline: %s\n", (int)getpid(), cmdline);
    /* CLOCK_MONOTONIC is the machine's: processes' traces line up with it */
    fprintf(log_file, "# start %ld.%09ld (CLOCK_MONOTONIC)\n", (long)start_time.tv_sec, start_time.tv_nsec);
}

/* writes one finished line (text from a memstream) */
static void emit(const char *text)
{
    pthread_mutex_lock(&log_lock);
    open_log_locked();
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double t = (double)(now.tv_sec - start_time.tv_sec) + (now.tv_nsec - start_time.tv_nsec) / 1e9;
    fprintf(log_file, "%10.6f %-14s tid %-7ld %s\n", t, identity, (long)syscall(SYS_gettid), text);
    fflush(log_file);
    pthread_mutex_unlock(&log_lock);
}

typedef struct line {
    char *text;
    size_t size;
    FILE *f;
} line_t;

static void line_open(line_t *l)
{
    l->text = NULL;
    l->size = 0;
    l->f = open_memstream(&l->text, &l->size);
}

static void line_emit(line_t *l)
{
    fclose(l->f);
    emit(l->text);
    free(l->text);
}

static unsigned long new_id(void)
{
    return __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------------------------------ */
/* the real library */

static void *real_symbol(const char *name)
{
    static void *handle = NULL;
    if (!handle)
        handle = dlopen("libpmix.so.2", RTLD_NOW | RTLD_NOLOAD);
    if (!handle)
        handle = dlopen("libpmix.so.2", RTLD_NOW);
    void *symbol = handle ? dlsym(handle, name) : NULL;
    if (!symbol) {
        fprintf(stderr, "pmix_trace: cannot find %s: %s\n", name, dlerror());
        abort();
    }
    return symbol;
}

#define REAL(name)                                                                             \
    static __typeof__(&name) real_##name = NULL;                                               \
    if (!real_##name)                                                                          \
        real_##name = (__typeof__(&name))real_symbol(#name)

static const char *status_text(pmix_status_t status)
{
    static __typeof__(&PMIx_Error_string) fn = NULL;
    if (!fn)
        fn = (__typeof__(&PMIx_Error_string))real_symbol("PMIx_Error_string");
    return fn(status);
}

static const char *type_text(pmix_data_type_t type)
{
    static __typeof__(&PMIx_Data_type_string) fn = NULL;
    if (!fn)
        fn = (__typeof__(&PMIx_Data_type_string))real_symbol("PMIx_Data_type_string");
    return fn(type);
}

/* ------------------------------------------------------------------------------------------ */
/* printing arguments */

static void put_string(FILE *f, const char *s)
{
    if (!s) {
        fputs("NULL", f);
        return;
    }
    size_t n = strlen(s);
    fputc('"', f);
    for (size_t i = 0; i < n && i < 160; ++i)
        fputc((s[i] >= 32 && s[i] < 127) ? s[i] : '?', f);
    if (n > 160)
        fprintf(f, "...(%zu chars)", n);
    fputc('"', f);
}

static void put_rank(FILE *f, pmix_rank_t rank)
{
    if (rank == PMIX_RANK_WILDCARD)
        fputs("*", f);
    else if (rank == PMIX_RANK_UNDEF)
        fputs("UNDEF", f);
    else if (rank == PMIX_RANK_LOCAL_NODE)
        fputs("LOCAL_NODE", f);
    else if (rank == PMIX_RANK_LOCAL_PEERS)
        fputs("LOCAL_PEERS", f);
    else
        fprintf(f, "%u", rank);
}

static void put_proc(FILE *f, const pmix_proc_t *p)
{
    if (!p) {
        fputs("NULL", f);
        return;
    }
    fprintf(f, "%.*s:", PMIX_MAX_NSLEN, p->nspace);
    put_rank(f, p->rank);
}

static void put_procs(FILE *f, const pmix_proc_t *p, size_t n)
{
    fprintf(f, "procs[%zu]={", n);
    for (size_t i = 0; p && i < n && i < 40; ++i) {
        if (i)
            fputs(",", f);
        put_proc(f, &p[i]);
    }
    if (n > 40)
        fputs(",...", f);
    fputs("}", f);
}

static void put_infos(FILE *f, const pmix_info_t *info, size_t n, int level);

static void put_value(FILE *f, const pmix_value_t *v, int level)
{
    if (!v) {
        fputs("NULL", f);
        return;
    }
    switch (v->type) {
    case PMIX_UNDEF: fputs("(UNDEF)", f); return;
    case PMIX_BOOL: fputs(v->data.flag ? "true" : "false", f); return;
    case PMIX_BYTE: fprintf(f, "%u(BYTE)", v->data.byte); return;
    case PMIX_STRING: put_string(f, v->data.string); return;
    case PMIX_SIZE: fprintf(f, "%zu(SIZE)", v->data.size); return;
    case PMIX_PID: fprintf(f, "%d(PID)", (int)v->data.pid); return;
    case PMIX_INT: fprintf(f, "%d(INT)", v->data.integer); return;
    case PMIX_INT8: fprintf(f, "%d(INT8)", v->data.int8); return;
    case PMIX_INT16: fprintf(f, "%d(INT16)", v->data.int16); return;
    case PMIX_INT32: fprintf(f, "%d(INT32)", v->data.int32); return;
    case PMIX_INT64: fprintf(f, "%lld(INT64)", (long long)v->data.int64); return;
    case PMIX_UINT: fprintf(f, "%u(UINT)", v->data.uint); return;
    case PMIX_UINT8: fprintf(f, "%u(UINT8)", v->data.uint8); return;
    case PMIX_UINT16: fprintf(f, "%u(UINT16)", v->data.uint16); return;
    case PMIX_UINT32: fprintf(f, "%u(UINT32)", v->data.uint32); return;
    case PMIX_UINT64: fprintf(f, "%llu(UINT64)", (unsigned long long)v->data.uint64); return;
    case PMIX_FLOAT: fprintf(f, "%g(FLOAT)", v->data.fval); return;
    case PMIX_DOUBLE: fprintf(f, "%g(DOUBLE)", v->data.dval); return;
    case PMIX_TIME: fprintf(f, "%lld(TIME)", (long long)v->data.time); return;
    case PMIX_STATUS: fprintf(f, "%s(STATUS)", status_text(v->data.status)); return;
    case PMIX_PROC_RANK: put_rank(f, v->data.rank); fputs("(PROC_RANK)", f); return;
    case PMIX_PROC: put_proc(f, v->data.proc); fputs("(PROC)", f); return;
    case PMIX_PROC_NSPACE:
        fprintf(f, "\"%.*s\"(PROC_NSPACE)", PMIX_MAX_NSLEN, v->data.nspace ? *v->data.nspace : "");
        return;
    case PMIX_PERSIST: fprintf(f, "%u(PERSIST)", v->data.persist); return;
    case PMIX_SCOPE: fprintf(f, "%u(SCOPE)", v->data.scope); return;
    case PMIX_DATA_RANGE: fprintf(f, "%u(DATA_RANGE)", v->data.range); return;
    case PMIX_PROC_STATE: fprintf(f, "%u(PROC_STATE)", v->data.state); return;
    case PMIX_JOB_STATE: fprintf(f, "%u(JOB_STATE)", v->data.jstate); return;
    case PMIX_ALLOC_DIRECTIVE: fprintf(f, "%u(ALLOC_DIRECTIVE)", v->data.adir); return;
    case PMIX_POINTER: fprintf(f, "%p(POINTER)", v->data.ptr); return;
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_REGEX:
    case PMIX_COMPRESSED_BYTE_OBJECT:
        fprintf(f, "<%zu bytes>(%s)", v->data.bo.size, type_text(v->type));
        if (v->type == PMIX_REGEX && v->data.bo.bytes && v->data.bo.size < 200)
            fprintf(f, "\"%.*s\"", (int)v->data.bo.size, v->data.bo.bytes);
        return;
    case PMIX_ENVAR:
        fprintf(f, "envar{%s=%s sep=%c}(ENVAR)", v->data.envar.envar ? v->data.envar.envar : "NULL",
                v->data.envar.value ? v->data.envar.value : "NULL",
                v->data.envar.separator ? v->data.envar.separator : ' ');
        return;
    case PMIX_DATA_ARRAY: {
        const pmix_data_array_t *a = v->data.darray;
        if (!a) {
            fputs("NULL(DATA_ARRAY)", f);
            return;
        }
        fprintf(f, "array<%s>[%zu]", type_text(a->type), a->size);
        if (a->type == PMIX_INFO && level < 3) {
            put_infos(f, (const pmix_info_t *)a->array, a->size, level + 1);
        } else if (a->type == PMIX_PROC) {
            fputs("=", f);
            put_procs(f, (const pmix_proc_t *)a->array, a->size);
        } else if (a->type == PMIX_STRING) {
            fputs("={", f);
            for (size_t i = 0; i < a->size && i < 16; ++i) {
                if (i)
                    fputs(",", f);
                put_string(f, ((char **)a->array)[i]);
            }
            fputs(a->size > 16 ? ",...}" : "}", f);
        } else if (a->type == PMIX_STATUS) {
            fputs("={", f);
            for (size_t i = 0; i < a->size && i < 16; ++i)
                fprintf(f, "%s%s", i ? "," : "", status_text(((pmix_status_t *)a->array)[i]));
            fputs("}", f);
        }
        return;
    }
    default: fprintf(f, "(%s)", type_text(v->type)); return;
    }
}

static void put_infos(FILE *f, const pmix_info_t *info, size_t n, int level)
{
    fprintf(f, "{");
    for (size_t i = 0; info && i < n; ++i) {
        if (i)
            fputs(", ", f);
        fprintf(f, "%.*s", PMIX_MAX_KEYLEN, info[i].key);
        if (info[i].flags & PMIX_INFO_REQD)
            fputs("[REQD]", f);
        fputs("=", f);
        put_value(f, &info[i].value, level);
    }
    fprintf(f, "}");
}

static void put_info_arg(FILE *f, const char *name, const pmix_info_t *info, size_t n)
{
    fprintf(f, " %s[%zu]=", name, n);
    put_infos(f, info, n, 0);
}

static void put_keys(FILE *f, char **keys)
{
    fputs(" keys={", f);
    for (size_t i = 0; keys && keys[i]; ++i) {
        if (i)
            fputs(",", f);
        put_string(f, keys[i]);
    }
    fputs("}", f);
}

static void put_argv(FILE *f, char **argv)
{
    fputs("{", f);
    for (size_t i = 0; argv && argv[i]; ++i) {
        if (i)
            fputs(",", f);
        put_string(f, argv[i]);
    }
    fputs("}", f);
}

static void put_apps(FILE *f, const pmix_app_t *apps, size_t n)
{
    fprintf(f, " apps[%zu]={", n);
    for (size_t i = 0; apps && i < n; ++i) {
        fprintf(f, "%s{cmd=", i ? ", " : "");
        put_string(f, apps[i].cmd);
        fputs(" argv=", f);
        put_argv(f, apps[i].argv);
        size_t nenv = 0;
        for (; apps[i].env && apps[i].env[nenv]; ++nenv) {
        }
        fprintf(f, " env[%zu]", nenv);
        if (nenv)
            put_argv(f, apps[i].env);
        fputs(" cwd=", f);
        put_string(f, apps[i].cwd);
        fprintf(f, " maxprocs=%d", apps[i].maxprocs);
        put_info_arg(f, "info", apps[i].info, apps[i].ninfo);
        fputs("}", f);
    }
    fputs("}", f);
}

static void put_pdata(FILE *f, const pmix_pdata_t *d, size_t n, int with_values)
{
    fprintf(f, " data[%zu]={", n);
    for (size_t i = 0; d && i < n; ++i) {
        fprintf(f, "%s%.*s", i ? ", " : "", PMIX_MAX_KEYLEN, d[i].key);
        if (with_values) {
            fputs(" from ", f);
            put_proc(f, &d[i].proc);
            fputs(" = ", f);
            put_value(f, &d[i].value, 0);
        }
    }
    fputs("}", f);
}

/* start a call line: "-> name(" with nesting marks */
static void call_begin(line_t *l, unsigned long id, const char *name)
{
    line_open(l);
    fprintf(l->f, "%*s-> #%lu %s%s(", 2 * depth, "", id, name, depth ? " [nested]" : "");
}

static void call_end(unsigned long id, const char *name, pmix_status_t rc)
{
    line_t l;
    line_open(&l);
    fprintf(l.f, "%*s<- #%lu %s = %s", 2 * depth, "", id, name, status_text(rc));
    line_emit(&l);
}

/* ------------------------------------------------------------------------------------------ */
/* callback trampolines: log the completion, then call the caller's callback */

typedef struct callback_context {
    unsigned long id;
    const char *name;
    void *cbfunc;
    void *cbdata;
} callback_context_t;

static callback_context_t *context(unsigned long id, const char *name, void *cbfunc, void *cbdata)
{
    if (!cbfunc) {
        line_t l;
        line_open(&l);
        fprintf(l.f, "   .. #%lu %s: cbfunc NULL (the caller wants no completion callback)", id, name);
        line_emit(&l);
        return NULL;
    }
    callback_context_t *c = malloc(sizeof *c);
    c->id = id;
    c->name = name;
    c->cbfunc = cbfunc;
    c->cbdata = cbdata;
    return c;
}

static void *trampoline_or(callback_context_t *c, void *trampoline, void *original)
{
    return c ? trampoline : original;
}

static void *data_or(callback_context_t *c, void *original)
{
    return c ? (void *)c : original;
}

/* after a call that will not call its callback (anything but PMIX_SUCCESS) */
static void drop_context(callback_context_t *c, pmix_status_t rc)
{
    if (c && rc != PMIX_SUCCESS)
        free(c);
}

static void completion_line(callback_context_t *c, pmix_status_t status, line_t *l)
{
    line_open(l);
    fprintf(l->f, "   .. #%lu %s callback: %s", c->id, c->name, status_text(status));
}

static void op_trampoline(pmix_status_t status, void *cbdata)
{
    callback_context_t *c = cbdata;
    line_t l;
    completion_line(c, status, &l);
    line_emit(&l);
    pmix_op_cbfunc_t f = (pmix_op_cbfunc_t)c->cbfunc;
    void *d = c->cbdata;
    free(c);
    f(status, d);
}

static void lookup_trampoline(pmix_status_t status, pmix_pdata_t data[], size_t ndata, void *cbdata)
{
    callback_context_t *c = cbdata;
    line_t l;
    completion_line(c, status, &l);
    put_pdata(l.f, data, ndata, 1);
    line_emit(&l);
    pmix_lookup_cbfunc_t f = (pmix_lookup_cbfunc_t)c->cbfunc;
    void *d = c->cbdata;
    free(c);
    f(status, data, ndata, d);
}

static void spawn_trampoline(pmix_status_t status, pmix_nspace_t nspace, void *cbdata)
{
    callback_context_t *c = cbdata;
    line_t l;
    completion_line(c, status, &l);
    fprintf(l.f, " nspace=\"%.*s\"", PMIX_MAX_NSLEN, nspace ? nspace : "");
    line_emit(&l);
    pmix_spawn_cbfunc_t f = (pmix_spawn_cbfunc_t)c->cbfunc;
    void *d = c->cbdata;
    free(c);
    f(status, nspace, d);
}

static void value_trampoline(pmix_status_t status, pmix_value_t *kv, void *cbdata)
{
    callback_context_t *c = cbdata;
    line_t l;
    completion_line(c, status, &l);
    fputs(" value=", l.f);
    put_value(l.f, kv, 0);
    line_emit(&l);
    pmix_value_cbfunc_t f = (pmix_value_cbfunc_t)c->cbfunc;
    void *d = c->cbdata;
    free(c);
    f(status, kv, d);
}

static void info_trampoline(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                            pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    callback_context_t *c = cbdata;
    line_t l;
    completion_line(c, status, &l);
    put_info_arg(l.f, "info", info, ninfo);
    line_emit(&l);
    pmix_info_cbfunc_t f = (pmix_info_cbfunc_t)c->cbfunc;
    void *d = c->cbdata;
    free(c);
    f(status, info, ninfo, d, release_fn, release_cbdata);
}

static void hdlr_reg_trampoline(pmix_status_t status, size_t refid, void *cbdata)
{
    callback_context_t *c = cbdata;
    line_t l;
    completion_line(c, status, &l);
    fprintf(l.f, " refid=%zu", refid);
    line_emit(&l);
    pmix_hdlr_reg_cbfunc_t f = (pmix_hdlr_reg_cbfunc_t)c->cbfunc;
    void *d = c->cbdata;
    free(c);
    f(status, refid, d);
}

static void modex_trampoline(pmix_status_t status, const char *data, size_t ndata, void *cbdata,
                             pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    callback_context_t *c = cbdata;
    line_t l;
    completion_line(c, status, &l);
    fprintf(l.f, " data=<%zu bytes>", ndata);
    line_emit(&l);
    pmix_modex_cbfunc_t f = (pmix_modex_cbfunc_t)c->cbfunc;
    void *d = c->cbdata;
    free(c);
    f(status, data, ndata, d, release_fn, release_cbdata);
}

/* event notifications delivered to the host's handler (one handler function is wrapped) */
static pmix_notification_fn_t host_event_handler = NULL;

static void event_trampoline(size_t evhdlr_registration_id, pmix_status_t status,
                             const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                             pmix_info_t *results, size_t nresults,
                             pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    line_t l;
    line_open(&l);
    fprintf(l.f, "   !! event to handler ref %zu: %s source=", evhdlr_registration_id,
            status_text(status));
    put_proc(l.f, source);
    put_info_arg(l.f, "info", info, ninfo);
    line_emit(&l);
    host_event_handler(evhdlr_registration_id, status, source, info, ninfo, results, nresults,
                       cbfunc, cbdata);
}

/* ------------------------------------------------------------------------------------------ */
/* client API */

pmix_status_t PMIx_Init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo)
{
    REAL(PMIx_Init);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Init");
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    ++depth;
    pmix_status_t rc = real_PMIx_Init(proc, info, ninfo);
    --depth;
    if (rc == PMIX_SUCCESS && proc)
        snprintf(identity, sizeof identity, "%.*s:%u", PMIX_MAX_NSLEN, proc->nspace, proc->rank);
    line_open(&l);
    fprintf(l.f, "<- #%lu PMIx_Init = %s proc=", id, status_text(rc));
    put_proc(l.f, proc);
    line_emit(&l);
    return rc;
}

pmix_status_t PMIx_Finalize(const pmix_info_t info[], size_t ninfo)
{
    REAL(PMIx_Finalize);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Finalize");
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    ++depth;
    pmix_status_t rc = real_PMIx_Finalize(info, ninfo);
    --depth;
    call_end(id, "PMIx_Finalize", rc);
    return rc;
}

pmix_status_t PMIx_Abort(int status, const char msg[], pmix_proc_t procs[], size_t nprocs)
{
    REAL(PMIx_Abort);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Abort");
    fprintf(l.f, "status=%d msg=", status);
    put_string(l.f, msg);
    fputs(" ", l.f);
    put_procs(l.f, procs, nprocs);
    fputs(")", l.f);
    line_emit(&l);
    ++depth;
    pmix_status_t rc = real_PMIx_Abort(status, msg, procs, nprocs);
    --depth;
    call_end(id, "PMIx_Abort", rc);
    return rc;
}

pmix_status_t PMIx_Put(pmix_scope_t scope, const char key[], pmix_value_t *val)
{
    REAL(PMIx_Put);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Put");
    fprintf(l.f, "scope=%u key=%s value=", scope, key ? key : "NULL");
    put_value(l.f, val, 0);
    fputs(")", l.f);
    line_emit(&l);
    ++depth;
    pmix_status_t rc = real_PMIx_Put(scope, key, val);
    --depth;
    call_end(id, "PMIx_Put", rc);
    return rc;
}

pmix_status_t PMIx_Commit(void)
{
    REAL(PMIx_Commit);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Commit");
    fputs(")", l.f);
    line_emit(&l);
    ++depth;
    pmix_status_t rc = real_PMIx_Commit();
    --depth;
    call_end(id, "PMIx_Commit", rc);
    return rc;
}

pmix_status_t PMIx_Store_internal(const pmix_proc_t *proc, const char key[], pmix_value_t *val)
{
    REAL(PMIx_Store_internal);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Store_internal");
    put_proc(l.f, proc);
    fprintf(l.f, " key=%s value=", key ? key : "NULL");
    put_value(l.f, val, 0);
    fputs(")", l.f);
    line_emit(&l);
    ++depth;
    pmix_status_t rc = real_PMIx_Store_internal(proc, key, val);
    --depth;
    call_end(id, "PMIx_Store_internal", rc);
    return rc;
}

pmix_status_t PMIx_Fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                         size_t ninfo)
{
    REAL(PMIx_Fence);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Fence");
    put_procs(l.f, procs, nprocs);
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    ++depth;
    pmix_status_t rc = real_PMIx_Fence(procs, nprocs, info, ninfo);
    --depth;
    call_end(id, "PMIx_Fence", rc);
    return rc;
}

pmix_status_t PMIx_Fence_nb(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                            size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    REAL(PMIx_Fence_nb);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Fence_nb");
    put_procs(l.f, procs, nprocs);
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "PMIx_Fence_nb", (void *)cbfunc, cbdata);
    ++depth;
    pmix_status_t rc = real_PMIx_Fence_nb(procs, nprocs, info, ninfo,
                                          trampoline_or(c, (void *)op_trampoline, (void *)cbfunc),
                                          data_or(c, cbdata));
    --depth;
    drop_context(c, rc);
    call_end(id, "PMIx_Fence_nb", rc);
    return rc;
}

pmix_status_t PMIx_Get(const pmix_proc_t *proc, const char key[], const pmix_info_t info[],
                       size_t ninfo, pmix_value_t **val)
{
    REAL(PMIx_Get);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Get");
    put_proc(l.f, proc);
    fprintf(l.f, " key=%s", key ? key : "NULL");
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    ++depth;
    pmix_status_t rc = real_PMIx_Get(proc, key, info, ninfo, val);
    --depth;
    line_open(&l);
    fprintf(l.f, "%*s<- #%lu PMIx_Get = %s", 2 * depth, "", id, status_text(rc));
    if (rc == PMIX_SUCCESS && val && *val) {
        fputs(" value=", l.f);
        put_value(l.f, *val, 0);
    }
    line_emit(&l);
    return rc;
}

pmix_status_t PMIx_Get_nb(const pmix_proc_t *proc, const char key[], const pmix_info_t info[],
                          size_t ninfo, pmix_value_cbfunc_t cbfunc, void *cbdata)
{
    REAL(PMIx_Get_nb);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Get_nb");
    put_proc(l.f, proc);
    fprintf(l.f, " key=%s", key ? key : "NULL");
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "PMIx_Get_nb", (void *)cbfunc, cbdata);
    ++depth;
    pmix_status_t rc = real_PMIx_Get_nb(proc, key, info, ninfo,
                                        trampoline_or(c, (void *)value_trampoline, (void *)cbfunc),
                                        data_or(c, cbdata));
    --depth;
    drop_context(c, rc);
    call_end(id, "PMIx_Get_nb", rc);
    return rc;
}

pmix_status_t PMIx_Publish(const pmix_info_t info[], size_t ninfo)
{
    REAL(PMIx_Publish);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Publish");
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    ++depth;
    pmix_status_t rc = real_PMIx_Publish(info, ninfo);
    --depth;
    call_end(id, "PMIx_Publish", rc);
    return rc;
}

pmix_status_t PMIx_Publish_nb(const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                              void *cbdata)
{
    REAL(PMIx_Publish_nb);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Publish_nb");
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "PMIx_Publish_nb", (void *)cbfunc, cbdata);
    ++depth;
    pmix_status_t rc = real_PMIx_Publish_nb(info, ninfo,
                                            trampoline_or(c, (void *)op_trampoline, (void *)cbfunc),
                                            data_or(c, cbdata));
    --depth;
    drop_context(c, rc);
    call_end(id, "PMIx_Publish_nb", rc);
    return rc;
}

pmix_status_t PMIx_Lookup(pmix_pdata_t data[], size_t ndata, const pmix_info_t info[], size_t ninfo)
{
    REAL(PMIx_Lookup);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Lookup");
    put_pdata(l.f, data, ndata, 0);
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    ++depth;
    pmix_status_t rc = real_PMIx_Lookup(data, ndata, info, ninfo);
    --depth;
    line_open(&l);
    fprintf(l.f, "%*s<- #%lu PMIx_Lookup = %s", 2 * depth, "", id, status_text(rc));
    put_pdata(l.f, data, ndata, 1);
    line_emit(&l);
    return rc;
}

pmix_status_t PMIx_Lookup_nb(char **keys, const pmix_info_t info[], size_t ninfo,
                             pmix_lookup_cbfunc_t cbfunc, void *cbdata)
{
    REAL(PMIx_Lookup_nb);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Lookup_nb");
    put_keys(l.f, keys);
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "PMIx_Lookup_nb", (void *)cbfunc, cbdata);
    ++depth;
    pmix_status_t rc = real_PMIx_Lookup_nb(keys, info, ninfo,
                                           trampoline_or(c, (void *)lookup_trampoline, (void *)cbfunc),
                                           data_or(c, cbdata));
    --depth;
    drop_context(c, rc);
    call_end(id, "PMIx_Lookup_nb", rc);
    return rc;
}

pmix_status_t PMIx_Unpublish(char **keys, const pmix_info_t info[], size_t ninfo)
{
    REAL(PMIx_Unpublish);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Unpublish");
    put_keys(l.f, keys);
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    ++depth;
    pmix_status_t rc = real_PMIx_Unpublish(keys, info, ninfo);
    --depth;
    call_end(id, "PMIx_Unpublish", rc);
    return rc;
}

pmix_status_t PMIx_Unpublish_nb(char **keys, const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    REAL(PMIx_Unpublish_nb);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Unpublish_nb");
    put_keys(l.f, keys);
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "PMIx_Unpublish_nb", (void *)cbfunc, cbdata);
    ++depth;
    pmix_status_t rc = real_PMIx_Unpublish_nb(keys, info, ninfo,
                                              trampoline_or(c, (void *)op_trampoline, (void *)cbfunc),
                                              data_or(c, cbdata));
    --depth;
    drop_context(c, rc);
    call_end(id, "PMIx_Unpublish_nb", rc);
    return rc;
}

pmix_status_t PMIx_Spawn(const pmix_info_t job_info[], size_t ninfo, const pmix_app_t apps[],
                         size_t napps, pmix_nspace_t nspace)
{
    REAL(PMIx_Spawn);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Spawn");
    put_info_arg(l.f, "job_info", job_info, ninfo);
    put_apps(l.f, apps, napps);
    fputs(")", l.f);
    line_emit(&l);
    ++depth;
    pmix_status_t rc = real_PMIx_Spawn(job_info, ninfo, apps, napps, nspace);
    --depth;
    line_open(&l);
    fprintf(l.f, "%*s<- #%lu PMIx_Spawn = %s nspace=\"%.*s\"", 2 * depth, "", id, status_text(rc),
            PMIX_MAX_NSLEN, nspace ? nspace : "");
    line_emit(&l);
    return rc;
}

pmix_status_t PMIx_Spawn_nb(const pmix_info_t job_info[], size_t ninfo, const pmix_app_t apps[],
                            size_t napps, pmix_spawn_cbfunc_t cbfunc, void *cbdata)
{
    REAL(PMIx_Spawn_nb);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Spawn_nb");
    put_info_arg(l.f, "job_info", job_info, ninfo);
    put_apps(l.f, apps, napps);
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "PMIx_Spawn_nb", (void *)cbfunc, cbdata);
    ++depth;
    pmix_status_t rc = real_PMIx_Spawn_nb(job_info, ninfo, apps, napps,
                                          trampoline_or(c, (void *)spawn_trampoline, (void *)cbfunc),
                                          data_or(c, cbdata));
    --depth;
    drop_context(c, rc);
    call_end(id, "PMIx_Spawn_nb", rc);
    return rc;
}

pmix_status_t PMIx_Connect(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                           size_t ninfo)
{
    REAL(PMIx_Connect);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Connect");
    put_procs(l.f, procs, nprocs);
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    ++depth;
    pmix_status_t rc = real_PMIx_Connect(procs, nprocs, info, ninfo);
    --depth;
    call_end(id, "PMIx_Connect", rc);
    return rc;
}

pmix_status_t PMIx_Connect_nb(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                              size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    REAL(PMIx_Connect_nb);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Connect_nb");
    put_procs(l.f, procs, nprocs);
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "PMIx_Connect_nb", (void *)cbfunc, cbdata);
    ++depth;
    pmix_status_t rc = real_PMIx_Connect_nb(procs, nprocs, info, ninfo,
                                            trampoline_or(c, (void *)op_trampoline, (void *)cbfunc),
                                            data_or(c, cbdata));
    --depth;
    drop_context(c, rc);
    call_end(id, "PMIx_Connect_nb", rc);
    return rc;
}

pmix_status_t PMIx_Disconnect(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                              size_t ninfo)
{
    REAL(PMIx_Disconnect);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Disconnect");
    put_procs(l.f, procs, nprocs);
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    ++depth;
    pmix_status_t rc = real_PMIx_Disconnect(procs, nprocs, info, ninfo);
    --depth;
    call_end(id, "PMIx_Disconnect", rc);
    return rc;
}

pmix_status_t PMIx_Disconnect_nb(const pmix_proc_t procs[], size_t nprocs,
                                 const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                 void *cbdata)
{
    REAL(PMIx_Disconnect_nb);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Disconnect_nb");
    put_procs(l.f, procs, nprocs);
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "PMIx_Disconnect_nb", (void *)cbfunc, cbdata);
    ++depth;
    pmix_status_t rc = real_PMIx_Disconnect_nb(procs, nprocs, info, ninfo,
                                               trampoline_or(c, (void *)op_trampoline, (void *)cbfunc),
                                               data_or(c, cbdata));
    --depth;
    drop_context(c, rc);
    call_end(id, "PMIx_Disconnect_nb", rc);
    return rc;
}

pmix_status_t PMIx_Resolve_peers(const char *nodename, const pmix_nspace_t nspace,
                                 pmix_proc_t **procs, size_t *nprocs)
{
    REAL(PMIx_Resolve_peers);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Resolve_peers");
    fprintf(l.f, "node=%s nspace=%.*s)", nodename ? nodename : "NULL", PMIX_MAX_NSLEN,
            nspace ? nspace : "NULL");
    line_emit(&l);
    ++depth;
    pmix_status_t rc = real_PMIx_Resolve_peers(nodename, nspace, procs, nprocs);
    --depth;
    line_open(&l);
    fprintf(l.f, "%*s<- #%lu PMIx_Resolve_peers = %s ", 2 * depth, "", id, status_text(rc));
    if (rc == PMIX_SUCCESS && procs && nprocs)
        put_procs(l.f, *procs, *nprocs);
    line_emit(&l);
    return rc;
}

pmix_status_t PMIx_Resolve_nodes(const pmix_nspace_t nspace, char **nodelist)
{
    REAL(PMIx_Resolve_nodes);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Resolve_nodes");
    fprintf(l.f, "nspace=%.*s)", PMIX_MAX_NSLEN, nspace ? nspace : "NULL");
    line_emit(&l);
    ++depth;
    pmix_status_t rc = real_PMIx_Resolve_nodes(nspace, nodelist);
    --depth;
    line_open(&l);
    fprintf(l.f, "%*s<- #%lu PMIx_Resolve_nodes = %s nodelist=", 2 * depth, "", id, status_text(rc));
    put_string(l.f, rc == PMIX_SUCCESS && nodelist ? *nodelist : NULL);
    line_emit(&l);
    return rc;
}

pmix_status_t PMIx_Log_nb(const pmix_info_t data[], size_t ndata, const pmix_info_t directives[],
                          size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    REAL(PMIx_Log_nb);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Log_nb");
    put_info_arg(l.f, "data", data, ndata);
    put_info_arg(l.f, "directives", directives, ndirs);
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "PMIx_Log_nb", (void *)cbfunc, cbdata);
    ++depth;
    pmix_status_t rc = real_PMIx_Log_nb(data, ndata, directives, ndirs,
                                        trampoline_or(c, (void *)op_trampoline, (void *)cbfunc),
                                        data_or(c, cbdata));
    --depth;
    drop_context(c, rc);
    call_end(id, "PMIx_Log_nb", rc);
    return rc;
}

pmix_status_t PMIx_Job_control_nb(const pmix_proc_t targets[], size_t ntargets,
                                  const pmix_info_t directives[], size_t ndirs,
                                  pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    REAL(PMIx_Job_control_nb);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Job_control_nb");
    put_procs(l.f, targets, ntargets);
    put_info_arg(l.f, "directives", directives, ndirs);
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "PMIx_Job_control_nb", (void *)cbfunc, cbdata);
    ++depth;
    pmix_status_t rc = real_PMIx_Job_control_nb(targets, ntargets, directives, ndirs,
                                                trampoline_or(c, (void *)info_trampoline, (void *)cbfunc),
                                                data_or(c, cbdata));
    --depth;
    drop_context(c, rc);
    call_end(id, "PMIx_Job_control_nb", rc);
    return rc;
}

pmix_status_t PMIx_Query_info_nb(pmix_query_t queries[], size_t nqueries, pmix_info_cbfunc_t cbfunc,
                                 void *cbdata)
{
    REAL(PMIx_Query_info_nb);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Query_info_nb");
    fprintf(l.f, "queries[%zu]={", nqueries);
    for (size_t i = 0; queries && i < nqueries; ++i) {
        put_keys(l.f, queries[i].keys);
        put_info_arg(l.f, "qualifiers", queries[i].qualifiers, queries[i].nqual);
    }
    fputs("})", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "PMIx_Query_info_nb", (void *)cbfunc, cbdata);
    ++depth;
    pmix_status_t rc = real_PMIx_Query_info_nb(queries, nqueries,
                                               trampoline_or(c, (void *)info_trampoline, (void *)cbfunc),
                                               data_or(c, cbdata));
    --depth;
    drop_context(c, rc);
    call_end(id, "PMIx_Query_info_nb", rc);
    return rc;
}

pmix_status_t PMIx_Register_event_handler(pmix_status_t codes[], size_t ncodes, pmix_info_t info[],
                                          size_t ninfo, pmix_notification_fn_t evhdlr,
                                          pmix_hdlr_reg_cbfunc_t cbfunc, void *cbdata)
{
    REAL(PMIx_Register_event_handler);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Register_event_handler");
    fprintf(l.f, "codes[%zu]={", ncodes);
    for (size_t i = 0; codes && i < ncodes; ++i)
        fprintf(l.f, "%s%s", i ? "," : "", status_text(codes[i]));
    fputs("}", l.f);
    put_info_arg(l.f, "info", info, ninfo);
    pmix_notification_fn_t handler = evhdlr;
    /* wrap the host's own handler (registered from outside libpmix), one function at most */
    if (evhdlr && depth == 0 && (!host_event_handler || host_event_handler == evhdlr)) {
        host_event_handler = evhdlr;
        handler = event_trampoline;
    } else {
        fputs(" (handler not traced)", l.f);
    }
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "PMIx_Register_event_handler", (void *)cbfunc, cbdata);
    ++depth;
    pmix_status_t rc = real_PMIx_Register_event_handler(
        codes, ncodes, info, ninfo, handler,
        trampoline_or(c, (void *)hdlr_reg_trampoline, (void *)cbfunc), data_or(c, cbdata));
    --depth;
    /* a non-NULL cbfunc is called even on some errors in 4.2; keep the context then (leak at worst) */
    call_end(id, "PMIx_Register_event_handler", rc);
    return rc;
}

pmix_status_t PMIx_Deregister_event_handler(size_t evhdlr_ref, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    REAL(PMIx_Deregister_event_handler);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Deregister_event_handler");
    fprintf(l.f, "ref=%zu)", evhdlr_ref);
    line_emit(&l);
    callback_context_t *c = context(id, "PMIx_Deregister_event_handler", (void *)cbfunc, cbdata);
    ++depth;
    pmix_status_t rc = real_PMIx_Deregister_event_handler(
        evhdlr_ref, trampoline_or(c, (void *)op_trampoline, (void *)cbfunc), data_or(c, cbdata));
    --depth;
    drop_context(c, rc);
    call_end(id, "PMIx_Deregister_event_handler", rc);
    return rc;
}

pmix_status_t PMIx_Notify_event(pmix_status_t status, const pmix_proc_t *source,
                                pmix_data_range_t range, const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    REAL(PMIx_Notify_event);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_Notify_event");
    fprintf(l.f, "%s source=", status_text(status));
    put_proc(l.f, source);
    fprintf(l.f, " range=%u", range);
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "PMIx_Notify_event", (void *)cbfunc, cbdata);
    ++depth;
    pmix_status_t rc = real_PMIx_Notify_event(status, source, range, info, ninfo,
                                              trampoline_or(c, (void *)op_trampoline, (void *)cbfunc),
                                              data_or(c, cbdata));
    --depth;
    drop_context(c, rc);
    call_end(id, "PMIx_Notify_event", rc);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* server up-calls: libpmix -> host */

static pmix_server_module_t host_module;
static pmix_server_module_t traced_module;

static void upcall_begin(line_t *l, unsigned long id, const char *name)
{
    line_open(l);
    fprintf(l->f, "=> #%lu up-call %s(", id, name);
}

static void upcall_end(unsigned long id, const char *name, pmix_status_t rc)
{
    line_t l;
    line_open(&l);
    fprintf(l.f, "<= #%lu up-call %s = %s", id, name, status_text(rc));
    line_emit(&l);
}

static pmix_status_t up_client_connected(const pmix_proc_t *proc, void *server_object,
                                         pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    unsigned long id = new_id();
    line_t l;
    upcall_begin(&l, id, "client_connected");
    put_proc(l.f, proc);
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "client_connected", (void *)cbfunc, cbdata);
    pmix_status_t rc = host_module.client_connected(
        proc, server_object, trampoline_or(c, (void *)op_trampoline, (void *)cbfunc), data_or(c, cbdata));
    drop_context(c, rc);
    upcall_end(id, "client_connected", rc);
    return rc;
}

static pmix_status_t up_client_finalized(const pmix_proc_t *proc, void *server_object,
                                         pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    unsigned long id = new_id();
    line_t l;
    upcall_begin(&l, id, "client_finalized");
    put_proc(l.f, proc);
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "client_finalized", (void *)cbfunc, cbdata);
    pmix_status_t rc = host_module.client_finalized(
        proc, server_object, trampoline_or(c, (void *)op_trampoline, (void *)cbfunc), data_or(c, cbdata));
    drop_context(c, rc);
    upcall_end(id, "client_finalized", rc);
    return rc;
}

static pmix_status_t up_abort(const pmix_proc_t *proc, void *server_object, int status,
                              const char msg[], pmix_proc_t procs[], size_t nprocs,
                              pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    unsigned long id = new_id();
    line_t l;
    upcall_begin(&l, id, "abort");
    put_proc(l.f, proc);
    fprintf(l.f, " status=%d msg=", status);
    put_string(l.f, msg);
    fputs(" ", l.f);
    put_procs(l.f, procs, nprocs);
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "abort", (void *)cbfunc, cbdata);
    pmix_status_t rc = host_module.abort(proc, server_object, status, msg, procs, nprocs,
                                         trampoline_or(c, (void *)op_trampoline, (void *)cbfunc),
                                         data_or(c, cbdata));
    drop_context(c, rc);
    upcall_end(id, "abort", rc);
    return rc;
}

static pmix_status_t up_fence_nb(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                                 size_t ninfo, char *data, size_t ndata, pmix_modex_cbfunc_t cbfunc,
                                 void *cbdata)
{
    unsigned long id = new_id();
    line_t l;
    upcall_begin(&l, id, "fence_nb");
    put_procs(l.f, procs, nprocs);
    put_info_arg(l.f, "info", info, ninfo);
    fprintf(l.f, " data=<%zu bytes>)", ndata);
    line_emit(&l);
    callback_context_t *c = context(id, "fence_nb", (void *)cbfunc, cbdata);
    pmix_status_t rc = host_module.fence_nb(procs, nprocs, info, ninfo, data, ndata,
                                            trampoline_or(c, (void *)modex_trampoline, (void *)cbfunc),
                                            data_or(c, cbdata));
    drop_context(c, rc);
    upcall_end(id, "fence_nb", rc);
    return rc;
}

static pmix_status_t up_direct_modex(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
                                     pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    unsigned long id = new_id();
    line_t l;
    upcall_begin(&l, id, "direct_modex");
    put_proc(l.f, proc);
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "direct_modex", (void *)cbfunc, cbdata);
    pmix_status_t rc = host_module.direct_modex(proc, info, ninfo,
                                                trampoline_or(c, (void *)modex_trampoline, (void *)cbfunc),
                                                data_or(c, cbdata));
    drop_context(c, rc);
    upcall_end(id, "direct_modex", rc);
    return rc;
}

static pmix_status_t up_publish(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    unsigned long id = new_id();
    line_t l;
    upcall_begin(&l, id, "publish");
    put_proc(l.f, proc);
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "publish", (void *)cbfunc, cbdata);
    pmix_status_t rc = host_module.publish(proc, info, ninfo,
                                           trampoline_or(c, (void *)op_trampoline, (void *)cbfunc),
                                           data_or(c, cbdata));
    drop_context(c, rc);
    upcall_end(id, "publish", rc);
    return rc;
}

static pmix_status_t up_lookup(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                               size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void *cbdata)
{
    unsigned long id = new_id();
    line_t l;
    upcall_begin(&l, id, "lookup");
    put_proc(l.f, proc);
    put_keys(l.f, keys);
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "lookup", (void *)cbfunc, cbdata);
    pmix_status_t rc = host_module.lookup(proc, keys, info, ninfo,
                                          trampoline_or(c, (void *)lookup_trampoline, (void *)cbfunc),
                                          data_or(c, cbdata));
    drop_context(c, rc);
    upcall_end(id, "lookup", rc);
    return rc;
}

static pmix_status_t up_unpublish(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                                  size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    unsigned long id = new_id();
    line_t l;
    upcall_begin(&l, id, "unpublish");
    put_proc(l.f, proc);
    put_keys(l.f, keys);
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "unpublish", (void *)cbfunc, cbdata);
    pmix_status_t rc = host_module.unpublish(proc, keys, info, ninfo,
                                             trampoline_or(c, (void *)op_trampoline, (void *)cbfunc),
                                             data_or(c, cbdata));
    drop_context(c, rc);
    upcall_end(id, "unpublish", rc);
    return rc;
}

static pmix_status_t up_spawn(const pmix_proc_t *proc, const pmix_info_t job_info[], size_t ninfo,
                              const pmix_app_t apps[], size_t napps, pmix_spawn_cbfunc_t cbfunc,
                              void *cbdata)
{
    unsigned long id = new_id();
    line_t l;
    upcall_begin(&l, id, "spawn");
    put_proc(l.f, proc);
    put_info_arg(l.f, "job_info", job_info, ninfo);
    put_apps(l.f, apps, napps);
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "spawn", (void *)cbfunc, cbdata);
    pmix_status_t rc = host_module.spawn(proc, job_info, ninfo, apps, napps,
                                         trampoline_or(c, (void *)spawn_trampoline, (void *)cbfunc),
                                         data_or(c, cbdata));
    drop_context(c, rc);
    upcall_end(id, "spawn", rc);
    return rc;
}

static pmix_status_t up_connect(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                                size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    unsigned long id = new_id();
    line_t l;
    upcall_begin(&l, id, "connect");
    put_procs(l.f, procs, nprocs);
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "connect", (void *)cbfunc, cbdata);
    pmix_status_t rc = host_module.connect(procs, nprocs, info, ninfo,
                                           trampoline_or(c, (void *)op_trampoline, (void *)cbfunc),
                                           data_or(c, cbdata));
    drop_context(c, rc);
    upcall_end(id, "connect", rc);
    return rc;
}

static pmix_status_t up_disconnect(const pmix_proc_t procs[], size_t nprocs,
                                   const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                   void *cbdata)
{
    unsigned long id = new_id();
    line_t l;
    upcall_begin(&l, id, "disconnect");
    put_procs(l.f, procs, nprocs);
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "disconnect", (void *)cbfunc, cbdata);
    pmix_status_t rc = host_module.disconnect(procs, nprocs, info, ninfo,
                                              trampoline_or(c, (void *)op_trampoline, (void *)cbfunc),
                                              data_or(c, cbdata));
    drop_context(c, rc);
    upcall_end(id, "disconnect", rc);
    return rc;
}

static pmix_status_t up_register_events(pmix_status_t *codes, size_t ncodes,
                                        const pmix_info_t info[], size_t ninfo,
                                        pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    unsigned long id = new_id();
    line_t l;
    upcall_begin(&l, id, "register_events");
    fprintf(l.f, "codes[%zu]={", ncodes);
    for (size_t i = 0; codes && i < ncodes; ++i)
        fprintf(l.f, "%s%s", i ? "," : "", status_text(codes[i]));
    fputs("}", l.f);
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "register_events", (void *)cbfunc, cbdata);
    pmix_status_t rc = host_module.register_events(codes, ncodes, info, ninfo,
                                                   trampoline_or(c, (void *)op_trampoline, (void *)cbfunc),
                                                   data_or(c, cbdata));
    drop_context(c, rc);
    upcall_end(id, "register_events", rc);
    return rc;
}

static pmix_status_t up_notify_event(pmix_status_t code, const pmix_proc_t *source,
                                     pmix_data_range_t range, pmix_info_t info[], size_t ninfo,
                                     pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    unsigned long id = new_id();
    line_t l;
    upcall_begin(&l, id, "notify_event");
    fprintf(l.f, "%s source=", status_text(code));
    put_proc(l.f, source);
    fprintf(l.f, " range=%u", range);
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "notify_event", (void *)cbfunc, cbdata);
    pmix_status_t rc = host_module.notify_event(code, source, range, info, ninfo,
                                                trampoline_or(c, (void *)op_trampoline, (void *)cbfunc),
                                                data_or(c, cbdata));
    drop_context(c, rc);
    upcall_end(id, "notify_event", rc);
    return rc;
}

static pmix_status_t up_query(pmix_proc_t *proct, pmix_query_t *queries, size_t nqueries,
                              pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    unsigned long id = new_id();
    line_t l;
    upcall_begin(&l, id, "query");
    put_proc(l.f, proct);
    fprintf(l.f, " queries[%zu]={", nqueries);
    for (size_t i = 0; queries && i < nqueries; ++i) {
        put_keys(l.f, queries[i].keys);
        put_info_arg(l.f, "qualifiers", queries[i].qualifiers, queries[i].nqual);
    }
    fputs("})", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "query", (void *)cbfunc, cbdata);
    pmix_status_t rc = host_module.query(proct, queries, nqueries,
                                         trampoline_or(c, (void *)info_trampoline, (void *)cbfunc),
                                         data_or(c, cbdata));
    drop_context(c, rc);
    upcall_end(id, "query", rc);
    return rc;
}

static void up_log(const pmix_proc_t *client, const pmix_info_t data[], size_t ndata,
                   const pmix_info_t directives[], size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    unsigned long id = new_id();
    line_t l;
    upcall_begin(&l, id, "log");
    put_proc(l.f, client);
    put_info_arg(l.f, "data", data, ndata);
    put_info_arg(l.f, "directives", directives, ndirs);
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "log", (void *)cbfunc, cbdata);
    host_module.log(client, data, ndata, directives, ndirs,
                    trampoline_or(c, (void *)op_trampoline, (void *)cbfunc), data_or(c, cbdata));
    line_open(&l);
    fprintf(l.f, "<= #%lu up-call log (void)", id);
    line_emit(&l);
}

static pmix_status_t up_job_control(const pmix_proc_t *requestor, const pmix_proc_t targets[],
                                    size_t ntargets, const pmix_info_t directives[], size_t ndirs,
                                    pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    unsigned long id = new_id();
    line_t l;
    upcall_begin(&l, id, "job_control");
    put_proc(l.f, requestor);
    fputs(" ", l.f);
    put_procs(l.f, targets, ntargets);
    put_info_arg(l.f, "directives", directives, ndirs);
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "job_control", (void *)cbfunc, cbdata);
    pmix_status_t rc = host_module.job_control(requestor, targets, ntargets, directives, ndirs,
                                               trampoline_or(c, (void *)info_trampoline, (void *)cbfunc),
                                               data_or(c, cbdata));
    drop_context(c, rc);
    upcall_end(id, "job_control", rc);
    return rc;
}

static pmix_status_t up_iof_pull(const pmix_proc_t procs[], size_t nprocs,
                                 const pmix_info_t directives[], size_t ndirs,
                                 pmix_iof_channel_t channels, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    unsigned long id = new_id();
    line_t l;
    upcall_begin(&l, id, "iof_pull");
    put_procs(l.f, procs, nprocs);
    put_info_arg(l.f, "directives", directives, ndirs);
    fprintf(l.f, " channels=0x%x)", (unsigned)channels);
    line_emit(&l);
    callback_context_t *c = context(id, "iof_pull", (void *)cbfunc, cbdata);
    pmix_status_t rc = host_module.iof_pull(procs, nprocs, directives, ndirs, channels,
                                            trampoline_or(c, (void *)op_trampoline, (void *)cbfunc),
                                            data_or(c, cbdata));
    drop_context(c, rc);
    upcall_end(id, "iof_pull", rc);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* server API */

static void describe_module(FILE *f, const pmix_server_module_t *m)
{
    fputs(" module={", f);
#define HAS(field)                                                                             \
    if (m->field)                                                                              \
    fputs(#field " ", f)
    HAS(client_connected); HAS(client_finalized); HAS(abort); HAS(fence_nb); HAS(direct_modex);
    HAS(publish); HAS(lookup); HAS(unpublish); HAS(spawn); HAS(connect); HAS(disconnect);
    HAS(register_events); HAS(deregister_events); HAS(listener); HAS(notify_event); HAS(query);
    HAS(tool_connected); HAS(log); HAS(allocate); HAS(job_control); HAS(monitor);
    HAS(get_credential); HAS(validate_credential); HAS(iof_pull); HAS(push_stdin); HAS(group);
    HAS(fabric); HAS(client_connected2);
#undef HAS
    fputs("}", f);
}

pmix_status_t PMIx_server_init(pmix_server_module_t *module, pmix_info_t info[], size_t ninfo)
{
    REAL(PMIx_server_init);
    snprintf(identity, sizeof identity, "server");
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_server_init");
    if (module)
        describe_module(l.f, module);
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    pmix_server_module_t *passed = module;
    if (module && !getenv("PMIX_TRACE_NO_UPCALLS")) {
        host_module = *module;
        traced_module = *module;
        if (module->client_connected) traced_module.client_connected = up_client_connected;
        if (module->client_finalized) traced_module.client_finalized = up_client_finalized;
        if (module->abort) traced_module.abort = up_abort;
        if (module->fence_nb) traced_module.fence_nb = up_fence_nb;
        if (module->direct_modex) traced_module.direct_modex = up_direct_modex;
        if (module->publish) traced_module.publish = up_publish;
        if (module->lookup) traced_module.lookup = up_lookup;
        if (module->unpublish) traced_module.unpublish = up_unpublish;
        if (module->spawn) traced_module.spawn = up_spawn;
        if (module->connect) traced_module.connect = up_connect;
        if (module->disconnect) traced_module.disconnect = up_disconnect;
        if (module->register_events) traced_module.register_events = up_register_events;
        if (module->notify_event) traced_module.notify_event = up_notify_event;
        if (module->query) traced_module.query = up_query;
        if (module->log) traced_module.log = up_log;
        if (module->job_control) traced_module.job_control = up_job_control;
        if (module->iof_pull) traced_module.iof_pull = up_iof_pull;
        passed = &traced_module;
    }
    ++depth;
    pmix_status_t rc = real_PMIx_server_init(passed, info, ninfo);
    --depth;
    call_end(id, "PMIx_server_init", rc);
    return rc;
}

pmix_status_t PMIx_server_finalize(void)
{
    REAL(PMIx_server_finalize);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_server_finalize");
    fputs(")", l.f);
    line_emit(&l);
    ++depth;
    pmix_status_t rc = real_PMIx_server_finalize();
    --depth;
    call_end(id, "PMIx_server_finalize", rc);
    return rc;
}

pmix_status_t PMIx_server_register_nspace(const pmix_nspace_t nspace, int nlocalprocs,
                                          pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                          void *cbdata)
{
    REAL(PMIx_server_register_nspace);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_server_register_nspace");
    fprintf(l.f, "nspace=%.*s nlocalprocs=%d", PMIX_MAX_NSLEN, nspace ? nspace : "NULL", nlocalprocs);
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    callback_context_t *c = context(id, "PMIx_server_register_nspace", (void *)cbfunc, cbdata);
    ++depth;
    pmix_status_t rc = real_PMIx_server_register_nspace(
        nspace, nlocalprocs, info, ninfo, trampoline_or(c, (void *)op_trampoline, (void *)cbfunc),
        data_or(c, cbdata));
    --depth;
    drop_context(c, rc);
    call_end(id, "PMIx_server_register_nspace", rc);
    return rc;
}

void PMIx_server_deregister_nspace(const pmix_nspace_t nspace, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    REAL(PMIx_server_deregister_nspace);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_server_deregister_nspace");
    fprintf(l.f, "nspace=%.*s)", PMIX_MAX_NSLEN, nspace ? nspace : "NULL");
    line_emit(&l);
    ++depth;
    real_PMIx_server_deregister_nspace(nspace, cbfunc, cbdata);
    --depth;
}

pmix_status_t PMIx_server_register_client(const pmix_proc_t *proc, uid_t uid, gid_t gid,
                                          void *server_object, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    REAL(PMIx_server_register_client);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_server_register_client");
    put_proc(l.f, proc);
    fprintf(l.f, " uid=%d gid=%d)", (int)uid, (int)gid);
    line_emit(&l);
    ++depth;
    pmix_status_t rc = real_PMIx_server_register_client(proc, uid, gid, server_object, cbfunc, cbdata);
    --depth;
    call_end(id, "PMIx_server_register_client", rc);
    return rc;
}

void PMIx_server_deregister_client(const pmix_proc_t *proc, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    REAL(PMIx_server_deregister_client);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_server_deregister_client");
    put_proc(l.f, proc);
    fputs(")", l.f);
    line_emit(&l);
    ++depth;
    real_PMIx_server_deregister_client(proc, cbfunc, cbdata);
    --depth;
}

pmix_status_t PMIx_server_setup_fork(const pmix_proc_t *proc, char ***env)
{
    REAL(PMIx_server_setup_fork);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_server_setup_fork");
    put_proc(l.f, proc);
    fputs(")", l.f);
    line_emit(&l);
    ++depth;
    pmix_status_t rc = real_PMIx_server_setup_fork(proc, env);
    --depth;
    call_end(id, "PMIx_server_setup_fork", rc);
    return rc;
}

pmix_status_t PMIx_server_dmodex_request(const pmix_proc_t *proc, pmix_dmodex_response_fn_t cbfunc,
                                         void *cbdata)
{
    REAL(PMIx_server_dmodex_request);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_server_dmodex_request");
    put_proc(l.f, proc);
    fputs(")", l.f);
    line_emit(&l);
    ++depth;
    pmix_status_t rc = real_PMIx_server_dmodex_request(proc, cbfunc, cbdata);
    --depth;
    call_end(id, "PMIx_server_dmodex_request", rc);
    return rc;
}

pmix_status_t PMIx_server_setup_application(const pmix_nspace_t nspace, pmix_info_t info[],
                                            size_t ninfo, pmix_setup_application_cbfunc_t cbfunc,
                                            void *cbdata)
{
    REAL(PMIx_server_setup_application);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_server_setup_application");
    fprintf(l.f, "nspace=%.*s", PMIX_MAX_NSLEN, nspace ? nspace : "NULL");
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    ++depth;
    pmix_status_t rc = real_PMIx_server_setup_application(nspace, info, ninfo, cbfunc, cbdata);
    --depth;
    call_end(id, "PMIx_server_setup_application", rc);
    return rc;
}

pmix_status_t PMIx_server_setup_local_support(const pmix_nspace_t nspace, pmix_info_t info[],
                                              size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    REAL(PMIx_server_setup_local_support);
    unsigned long id = new_id();
    line_t l;
    call_begin(&l, id, "PMIx_server_setup_local_support");
    fprintf(l.f, "nspace=%.*s", PMIX_MAX_NSLEN, nspace ? nspace : "NULL");
    put_info_arg(l.f, "info", info, ninfo);
    fputs(")", l.f);
    line_emit(&l);
    ++depth;
    pmix_status_t rc = real_PMIx_server_setup_local_support(nspace, info, ninfo, cbfunc, cbdata);
    --depth;
    call_end(id, "PMIx_server_setup_local_support", rc);
    return rc;
}
