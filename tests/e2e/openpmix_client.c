/* A client built against Debian's OpenPMIx 4.2.2 (libpmix-dev, through
 * pkg-config, as a user builds one): it loads OpenPMIx's libpmix.so.2, not
 * ours, and speaks OpenPMIx's protocol to our server (issue 35). Public API
 * only. Prints one line per call: "<call> <status name> [value]". */
#include <pmix.h>
#include <stdio.h>
#include <string.h>

static void say(const char *call, pmix_status_t rc, const char *value)
{
    printf("%s %s%s%s\n", call, PMIx_Error_string(rc), value[0] ? " " : "", value);
    fflush(stdout);
}

int main(void)
{
    pmix_proc_t me, job;
    pmix_value_t *v = NULL;
    char text[512];
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    snprintf(text, sizeof text, "%s %u", rc == PMIX_SUCCESS ? me.nspace : "-", rc == PMIX_SUCCESS ? me.rank : 0);
    say("init", rc, text);
    if (rc != PMIX_SUCCESS)
        return 0;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &v);
    snprintf(text, sizeof text, "%u", rc == PMIX_SUCCESS && v->type == PMIX_UINT32 ? v->data.uint32 : 9999);
    say("job_size", rc, text);
    if (v) PMIX_VALUE_RELEASE(v);
    v = NULL;
    rc = PMIx_Get(&me, PMIX_LOCAL_RANK, NULL, 0, &v);
    snprintf(text, sizeof text, "%u", rc == PMIX_SUCCESS && v->type == PMIX_UINT16 ? v->data.uint16 : 9999);
    say("local_rank", rc, text);
    if (v) PMIX_VALUE_RELEASE(v);
    v = NULL;
    rc = PMIx_Get(&job, PMIX_LOCAL_SIZE, NULL, 0, &v);
    snprintf(text, sizeof text, "%u", rc == PMIX_SUCCESS && v->type == PMIX_UINT32 ? v->data.uint32 : 9999);
    say("local_size", rc, text);
    if (v) PMIX_VALUE_RELEASE(v);
    v = NULL;
    rc = PMIx_Get(&me, PMIX_HOSTNAME, NULL, 0, &v);
    snprintf(text, sizeof text, "%s", rc == PMIX_SUCCESS && v->type == PMIX_STRING ? v->data.string : "-");
    say("hostname", rc, text);
    if (v) PMIX_VALUE_RELEASE(v);
    /* Not served yet: answered, not left waiting. */
    rc = PMIx_Fence(NULL, 0, NULL, 0);
    say("fence", rc, "");
    rc = PMIx_Finalize(NULL, 0);
    say("finalize", rc, "");
    return 0;
}
