/* A PMIx client written in OpenPMIx 5.0's style (issue 37): built against
 * our headers with PMIX_CXX_FUNCTION_MACROS, so that its macros call the
 * functions newer releases export (PMIx_Load_procid, PMIx_Info_list_*,
 * PMIx_Value_get_number, PMIx_Argv_*, ...) instead of expanding inline. It
 * does what pmix_job_client does (job size, one key per rank through a
 * collecting fence, every rank's key read back), with those calls.
 *
 * Usage: pmix_newer_client EXPECTED_SIZE
 * Prints "pmix_newer_client: rank R of N ok" and exits 0, or says what
 * failed on stderr and exits 1 (2 for a bad command line). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define PMIX_CXX_FUNCTION_MACROS
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pmix_proc_t myproc;

static int fail(const char *what, pmix_status_t rc) {
  fprintf(stderr, "pmix_newer_client: rank %u of %s: %s failed: %s (%d)\n", (unsigned)myproc.rank,
          myproc.nspace[0] != '\0' ? myproc.nspace : "?", what, PMIx_Error_string(rc), (int)rc);
  return 1;
}

/* "value of rank R", made with the argv helpers */
static char *expected_value(pmix_rank_t rank) {
  char **words = NULL;
  char number[16];
  pmix_status_t rc;
  snprintf(number, sizeof number, "%u", (unsigned)rank);
  PMIX_ARGV_APPEND(rc, words, "value");
  PMIX_ARGV_APPEND(rc, words, "of");
  PMIX_ARGV_APPEND(rc, words, "rank");
  PMIX_ARGV_APPEND(rc, words, number);
  (void)rc;
  char *text = PMIx_Argv_join(words, ' ');
  PMIX_ARGV_FREE(words);
  return text;
}

int main(int argc, char **argv) {
  char *end = NULL;
  if (argc != 2 || (strtoul(argv[1], &end, 10), end == argv[1] || *end != '\0')) {
    fprintf(stderr, "usage: %s EXPECTED_SIZE\n", argv[0]);
    return 2;
  }
  const uint32_t expected_size = (uint32_t)strtoul(argv[1], NULL, 10);
  PMIX_PROC_CONSTRUCT(&myproc);

  pmix_status_t rc = PMIx_Init(&myproc, NULL, 0);
  if (rc != PMIX_SUCCESS) return fail("PMIx_Init", rc);
  int status = 0;
  uint32_t size = 0;
  pmix_proc_t *wildcard = NULL;
  PMIX_PROC_CREATE(wildcard, 1);
  PMIX_LOAD_PROCID(wildcard, myproc.nspace, PMIX_RANK_WILDCARD);

  /* the job's size, read as whatever integer type the host gave it */
  pmix_value_t *val = NULL;
  rc = PMIx_Get(wildcard, PMIX_JOB_SIZE, NULL, 0, &val);
  if (rc != PMIX_SUCCESS) {
    status = fail("PMIx_Get(" PMIX_JOB_SIZE ")", rc);
    goto done;
  }
  rc = PMIx_Value_get_number(val, &size, PMIX_UINT32);
  PMIX_VALUE_RELEASE(val);
  if (rc != PMIX_SUCCESS) {
    status = fail("PMIx_Value_get_number(" PMIX_JOB_SIZE ")", rc);
    goto done;
  }
  if (size != expected_size) {
    fprintf(stderr, "pmix_newer_client: rank %u: job size %u, expected %u\n", (unsigned)myproc.rank,
            (unsigned)size, (unsigned)expected_size);
    status = 1;
    goto done;
  }

  /* one key, global scope */
  char *mine = expected_value(myproc.rank);
  pmix_value_t put;
  PMIX_VALUE_CONSTRUCT(&put);
  PMIX_VALUE_LOAD(&put, mine, PMIX_STRING);
  free(mine);
  rc = PMIx_Put(PMIX_GLOBAL, "test.newer", &put);
  PMIX_VALUE_DESTRUCT(&put);
  if (rc == PMIX_SUCCESS) rc = PMIx_Commit();
  if (rc != PMIX_SUCCESS) {
    status = fail("PMIx_Put/PMIx_Commit", rc);
    goto done;
  }

  /* the fence's directives, built as a list */
  void *list = NULL;
  bool yes = true;
  pmix_data_array_t directives;
  PMIX_INFO_LIST_START(list);
  PMIX_INFO_LIST_ADD(rc, list, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
  if (rc == PMIX_SUCCESS) PMIX_INFO_LIST_CONVERT(rc, list, &directives);
  PMIX_INFO_LIST_RELEASE(list);
  if (rc != PMIX_SUCCESS) {
    status = fail("PMIx_Info_list_*", rc);
    goto done;
  }
  if (!PMIX_INFO_TRUE((pmix_info_t *)directives.array)) {
    fprintf(stderr, "pmix_newer_client: " PMIX_COLLECT_DATA " does not read as true\n");
    status = 1;
  }
  rc = PMIx_Fence(wildcard, 1, (pmix_info_t *)directives.array, directives.size);
  PMIX_DATA_ARRAY_DESTRUCT(&directives);
  if (rc != PMIX_SUCCESS) {
    status = fail("PMIx_Fence", rc);
    goto done;
  }

  /* every rank's key */
  for (uint32_t r = 0; r < size && status == 0; ++r) {
    pmix_proc_t peer;
    PMIX_LOAD_PROCID(&peer, myproc.nspace, r);
    char *want = expected_value(r);
    val = NULL;
    rc = PMIx_Get(&peer, "test.newer", NULL, 0, &val);
    if (rc != PMIX_SUCCESS) {
      char *who = PMIx_Proc_string(&peer);
      fprintf(stderr, "pmix_newer_client: PMIx_Get of %s: %s\n", who, PMIx_Error_string(rc));
      free(who);
      status = 1;
    } else {
      size_t bytes = 0;
      if (val->type != PMIX_STRING || strcmp(val->data.string, want) != 0 ||
          PMIx_Value_get_size(val, &bytes) != PMIX_SUCCESS || bytes != sizeof(pmix_value_t) + strlen(want) + 1) {
        fprintf(stderr, "pmix_newer_client: rank %u's key is not \"%s\" (or sized %zu)\n", (unsigned)r, want,
                bytes);
        status = 1;
      }
      PMIX_VALUE_RELEASE(val);
    }
    free(want);
  }
  if (PMIx_Error_code(PMIx_Error_string(PMIX_ERR_NOT_FOUND)) != PMIX_ERR_NOT_FOUND) {
    fprintf(stderr, "pmix_newer_client: PMIx_Error_code does not invert PMIx_Error_string\n");
    status = 1;
  }

done:
  PMIX_PROC_FREE(wildcard, 1);
  rc = PMIx_Finalize(NULL, 0);
  if (rc != PMIX_SUCCESS && status == 0) status = fail("PMIx_Finalize", rc);
  if (status == 0) printf("pmix_newer_client: rank %u of %u ok\n", (unsigned)myproc.rank, (unsigned)size);
  fprintf(stderr, "pmix_newer_client: rank %u library %s\n", (unsigned)myproc.rank, PMIx_Get_version());
  return status;
}
