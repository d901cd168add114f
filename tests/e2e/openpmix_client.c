/* A client built against Debian's OpenPMIx 4.2.2 (libpmix-dev, through
 * pkg-config, as a user builds one): it loads OpenPMIx's libpmix.so.2, not
 * ours, and speaks OpenPMIx's protocol to our server (issue 35). Public API
 * only. Prints one line per call: "<call> <status name> [value]".
 *
 * It inits, reads its job data, puts "mykey" = "hello-from-<rank>",
 * commits, fences collecting data, gets every other rank's "mykey",
 * publishes (not served yet: answered), fences again and finalizes. */
#include <pmix.h>
#include <stdio.h>
#include <string.h>

static void say(const char *call, pmix_status_t rc, const char *value)
{
    printf("%s %s%s%s\n", call, PMIx_Error_string(rc), value[0] ? " " : "", value);
    fflush(stdout);
}

static unsigned get_number(const pmix_proc_t *p, const char *key, const char *label)
{
    pmix_value_t *v = NULL;
    char text[64];
    unsigned n = 9999;
    pmix_status_t rc = PMIx_Get(p, key, NULL, 0, &v);
    if (rc == PMIX_SUCCESS && v->type == PMIX_UINT32)
        n = v->data.uint32;
    else if (rc == PMIX_SUCCESS && v->type == PMIX_UINT16)
        n = v->data.uint16;
    snprintf(text, sizeof text, "%u", n);
    say(label, rc, text);
    if (v) PMIX_VALUE_RELEASE(v);
    return n;
}

int main(void)
{
    pmix_proc_t me, job, peer;
    pmix_value_t *v = NULL, put;
    char text[512];
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    snprintf(text, sizeof text, "%s %u", rc == PMIX_SUCCESS ? me.nspace : "-", rc == PMIX_SUCCESS ? me.rank : 0);
    say("init", rc, text);
    if (rc != PMIX_SUCCESS)
        return 0;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    unsigned size = get_number(&job, PMIX_JOB_SIZE, "job_size");
    get_number(&me, PMIX_LOCAL_RANK, "local_rank");
    get_number(&job, PMIX_LOCAL_SIZE, "local_size");
    rc = PMIx_Get(&me, PMIX_HOSTNAME, NULL, 0, &v);
    snprintf(text, sizeof text, "%s", rc == PMIX_SUCCESS && v->type == PMIX_STRING ? v->data.string : "-");
    say("hostname", rc, text);
    if (v) PMIX_VALUE_RELEASE(v);
    v = NULL;

    snprintf(text, sizeof text, "hello-from-%u", me.rank);
    put.type = PMIX_STRING;
    put.data.string = text;
    say("put", PMIx_Put(PMIX_GLOBAL, "mykey", &put), "");
    say("commit", PMIx_Commit(), "");
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    say("fence", PMIx_Fence(NULL, 0, &collect, 1), "");
    PMIX_INFO_DESTRUCT(&collect);
    for (unsigned r = 0; r < size && r < 64; ++r) {
        if (r == me.rank) continue;
        char label[32];
        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        rc = PMIx_Get(&peer, "mykey", NULL, 0, &v);
        snprintf(label, sizeof label, "get:%u", r);
        say(label, rc, rc == PMIX_SUCCESS && v->type == PMIX_STRING ? v->data.string : "");
        if (v) PMIX_VALUE_RELEASE(v);
        v = NULL;
    }
    /* Not served yet: answered, not left waiting. */
    pmix_info_t pub;
    PMIX_INFO_LOAD(&pub, "opmx.key", "value", PMIX_STRING);
    say("publish", PMIx_Publish(&pub, 1), "");
    PMIX_INFO_DESTRUCT(&pub);
    say("fence2", PMIx_Fence(NULL, 0, NULL, 0), "");
    say("finalize", PMIx_Finalize(NULL, 0), "");
    return 0;
}
