/* A plain PMIx client for a job launched by a real host (srun --mpi=pmix):
 * checks the job size, exchanges one key per rank through a collecting fence
 * and reads every rank's key back. Only the standard PMIx API is used.
 *
 * Usage: pmix_job_client EXPECTED_SIZE [dmodex | stallfence HOST]
 * Prints "pmix_job_client: rank R of N ok" and exits 0, or says what failed on
 * stderr and exits 1 (2 for a bad command line).
 *
 * dmodex: the fence does not collect data; each rank then gets the key of the
 * first rank whose PMIX_HOSTNAME is another node's (direct modex through the
 * hosts) and prints "pmix_job_client: rank R got rank P's key from HOST".
 * stallfence HOST: the ranks on HOST (gethostname) sleep 120 s before the
 * fence; the others print "pmix_job_client: rank R entering fence", then
 * "pmix_job_client: rank R fence failed: <status>" and exit 3 when the fence
 * fails (their node lost), or go on as usual. */
/* OpenPMIx 4.2.2's pmix_common.h has inline helpers that call strdup, setenv
 * and strncasecmp: keep them declared under a strict -std=c11 too. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KEY "test.key"

static pmix_proc_t myproc;

static int fail(const char *what, pmix_status_t rc) {
  fprintf(stderr, "pmix_job_client: rank %u of %s: %s failed: %s (%d)\n", (unsigned)myproc.rank,
          myproc.nspace[0] != '\0' ? myproc.nspace : "?", what, PMIx_Error_string(rc), (int)rc);
  return 1;
}

static void expected_value(char *buf, size_t len, pmix_rank_t rank) {
  snprintf(buf, len, "value of rank %u", (unsigned)rank);
}

int main(int argc, char **argv) {
  char *end = NULL;
  const char *mode = argc > 2 ? argv[2] : "";
  if (argc < 2 || (strtoul(argv[1], &end, 10), end == argv[1] || *end != '\0') ||
      !(argc == 2 || (argc == 3 && strcmp(mode, "dmodex") == 0) ||
        (argc == 4 && strcmp(mode, "stallfence") == 0))) {
    fprintf(stderr, "usage: %s EXPECTED_SIZE [dmodex | stallfence HOST]\n", argv[0]);
    return 2;
  }
  const bool dmodex = strcmp(mode, "dmodex") == 0;
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  const uint32_t expected_size = (uint32_t)strtoul(argv[1], NULL, 10);
  memset(&myproc, 0, sizeof myproc);

  pmix_status_t rc = PMIx_Init(&myproc, NULL, 0);
  if (rc != PMIX_SUCCESS) return fail("PMIx_Init", rc);
  int status = 0;

  /* the job's size, a job-level key: asked for with the wildcard rank */
  pmix_proc_t wildcard;
  memset(&wildcard, 0, sizeof wildcard);
  PMIX_LOAD_NSPACE(wildcard.nspace, myproc.nspace);
  wildcard.rank = PMIX_RANK_WILDCARD;
  pmix_value_t *val = NULL;
  uint32_t size = 0;
  rc = PMIx_Get(&wildcard, PMIX_JOB_SIZE, NULL, 0, &val);
  if (rc != PMIX_SUCCESS) {
    status = fail("PMIx_Get(" PMIX_JOB_SIZE ")", rc);
    goto done;
  }
  if (val->type != PMIX_UINT32) {
    fprintf(stderr, "pmix_job_client: rank %u: " PMIX_JOB_SIZE " has type %s, not PMIX_UINT32\n",
            (unsigned)myproc.rank, PMIx_Data_type_string(val->type));
    PMIX_VALUE_RELEASE(val);
    status = 1;
    goto done;
  }
  size = val->data.uint32;
  PMIX_VALUE_RELEASE(val);
  if (size != expected_size) {
    fprintf(stderr, "pmix_job_client: rank %u: job size %u, expected %u\n", (unsigned)myproc.rank,
            (unsigned)size, (unsigned)expected_size);
    status = 1;
    goto done;
  }

  /* publish one key, global scope */
  char mine[64];
  expected_value(mine, sizeof mine, myproc.rank);
  pmix_value_t put;
  memset(&put, 0, sizeof put);
  put.type = PMIX_STRING;
  put.data.string = mine;
  rc = PMIx_Put(PMIX_GLOBAL, KEY, &put);
  if (rc != PMIX_SUCCESS) {
    status = fail("PMIx_Put", rc);
    goto done;
  }
  rc = PMIx_Commit();
  if (rc != PMIX_SUCCESS) {
    status = fail("PMIx_Commit", rc);
    goto done;
  }

  /* a fence over the whole namespace that collects the data */
  pmix_info_t collect;
  memset(&collect, 0, sizeof collect);
  bool yes = !dmodex;
  rc = PMIx_Info_load(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
  if (rc != PMIX_SUCCESS) {
    status = fail("PMIx_Info_load(" PMIX_COLLECT_DATA ")", rc);
    goto done;
  }
  if (strcmp(mode, "stallfence") == 0) {
    if (strcmp(host, argv[3]) == 0) {
      sleep(120);
      status = 1;
      goto done;
    }
    printf("pmix_job_client: rank %u entering fence\n", (unsigned)myproc.rank);
    fflush(stdout);
  }
  rc = PMIx_Fence(&wildcard, 1, &collect, 1);
  if (rc != PMIX_SUCCESS && strcmp(mode, "stallfence") == 0) {
    printf("pmix_job_client: rank %u fence failed: %s\n", (unsigned)myproc.rank, PMIx_Error_string(rc));
    fflush(stdout);
    return 3;
  }
  if (rc != PMIX_SUCCESS) {
    status = fail("PMIx_Fence", rc);
    goto done;
  }
  if (dmodex) {
    /* the first rank on another node: its data was not collected */
    for (uint32_t r = 0; r < size; ++r) {
      pmix_proc_t peer;
      memset(&peer, 0, sizeof peer);
      PMIX_LOAD_NSPACE(peer.nspace, myproc.nspace);
      peer.rank = r;
      val = NULL;
      rc = PMIx_Get(&peer, PMIX_HOSTNAME, NULL, 0, &val);
      if (rc != PMIX_SUCCESS || val->type != PMIX_STRING || val->data.string == NULL) {
        status = fail("PMIx_Get(" PMIX_HOSTNAME ")", rc == PMIX_SUCCESS ? PMIX_ERR_BAD_PARAM : rc);
        if (val != NULL) PMIX_VALUE_RELEASE(val);
        goto done;
      }
      char where[256];
      snprintf(where, sizeof where, "%s", val->data.string);
      PMIX_VALUE_RELEASE(val);
      if (strcmp(where, host) == 0) continue;
      char want[64];
      expected_value(want, sizeof want, r);
      val = NULL;
      rc = PMIx_Get(&peer, KEY, NULL, 0, &val);
      if (rc != PMIX_SUCCESS) {
        status = fail("PMIx_Get(" KEY ") of a rank on another node", rc);
        goto done;
      }
      if (val->type != PMIX_STRING || val->data.string == NULL || strcmp(val->data.string, want) != 0) {
        fprintf(stderr, "pmix_job_client: rank %u: rank %u's " KEY " is not \"%s\"\n", (unsigned)myproc.rank,
                (unsigned)r, want);
        status = 1;
      } else {
        printf("pmix_job_client: rank %u got rank %u's key from %s\n", (unsigned)myproc.rank, (unsigned)r, where);
      }
      PMIX_VALUE_RELEASE(val);
      goto done;
    }
    fprintf(stderr, "pmix_job_client: rank %u: no rank on another node than %s\n", (unsigned)myproc.rank, host);
    status = 1;
    goto done;
  }

  /* every rank's key, this one's included */
  for (uint32_t r = 0; r < size; ++r) {
    pmix_proc_t peer;
    memset(&peer, 0, sizeof peer);
    PMIX_LOAD_NSPACE(peer.nspace, myproc.nspace);
    peer.rank = r;
    char want[64];
    expected_value(want, sizeof want, r);
    val = NULL;
    rc = PMIx_Get(&peer, KEY, NULL, 0, &val);
    if (rc != PMIX_SUCCESS) {
      char what[64];
      snprintf(what, sizeof what, "PMIx_Get(" KEY ") of rank %u", (unsigned)r);
      status = fail(what, rc);
      break;
    }
    if (val->type != PMIX_STRING || val->data.string == NULL || strcmp(val->data.string, want) != 0) {
      fprintf(stderr, "pmix_job_client: rank %u: rank %u's " KEY " is %s \"%s\", expected \"%s\"\n",
              (unsigned)myproc.rank, (unsigned)r, PMIx_Data_type_string(val->type),
              val->type == PMIX_STRING && val->data.string != NULL ? val->data.string : "?", want);
      PMIX_VALUE_RELEASE(val);
      status = 1;
      break;
    }
    PMIX_VALUE_RELEASE(val);
  }

done:
  rc = PMIx_Finalize(NULL, 0);
  if (rc != PMIX_SUCCESS && status == 0) status = fail("PMIx_Finalize", rc);
  if (status == 0) printf("pmix_job_client: rank %u of %u ok\n", (unsigned)myproc.rank, (unsigned)size);
  /* Which library served it (a mixed install's test checks it). */
  fprintf(stderr, "pmix_job_client: rank %u library %s\n", (unsigned)myproc.rank, PMIx_Get_version());
  return status;
}
