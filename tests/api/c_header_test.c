/* The public headers compiled as strict ISO C11 (-pedantic -Werror) and
 * their main macros used from C on real values. Exit status 0 on success;
 * each failed check prints its line. */
#include <pmix.h>
#include <pmix_common.h>
#include <pmix_server.h>
#include <pmix_tool.h>
#include <pmix_version.h>

#include <stdio.h>

#include "tests/api/c_expect.h"

static void test_info_macros(void)
{
    pmix_info_t *info;
    uint32_t nprocs = 4;
    bool flag = false;
    size_t n = 3;

    PMIX_INFO_CREATE(info, n);
    EXPECT(info != NULL);
    EXPECT(PMIX_INFO_IS_END(&info[2]));
    EXPECT(!PMIX_INFO_IS_END(&info[0]));

    PMIX_INFO_LOAD(&info[0], PMIX_JOB_SIZE, &nprocs, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[1], PMIX_NSPACE, "job-1", PMIX_STRING);
    PMIX_INFO_LOAD(&info[2], PMIX_COLLECT_DATA, NULL, PMIX_BOOL);
    EXPECT(PMIX_CHECK_KEY(&info[0], PMIX_JOB_SIZE));
    EXPECT(info[0].value.type == PMIX_UINT32 && info[0].value.data.uint32 == 4);
    EXPECT(strcmp(info[1].value.data.string, "job-1") == 0);
    /* a NULL value loads a boolean as true */
    EXPECT(PMIX_INFO_TRUE(&info[2]));

    PMIX_INFO_REQUIRED(&info[1]);
    EXPECT(PMIX_INFO_IS_REQUIRED(&info[1]));
    PMIX_INFO_OPTIONAL(&info[1]);
    EXPECT(PMIX_INFO_IS_OPTIONAL(&info[1]));

    PMIX_INFO_LOAD(&info[2], PMIX_COLLECT_DATA, &flag, PMIX_BOOL);
    EXPECT(!PMIX_INFO_TRUE(&info[2]));

    PMIX_INFO_FREE(info, n);
    EXPECT(info == NULL);
}

static void test_value_macros(void)
{
    pmix_value_t *val = NULL;
    pmix_value_t src = PMIX_VALUE_STATIC_INIT;
    pmix_status_t rc = PMIX_ERROR;
    int64_t big = -5000000000LL;
    double number = 0;

    PMIX_VALUE_LOAD(&src, &big, PMIX_INT64);
    PMIX_VALUE_XFER(rc, val, &src);
    EXPECT(rc == PMIX_SUCCESS);
    EXPECT(val != NULL && val->type == PMIX_INT64 && val->data.int64 == big);
    PMIX_VALUE_GET_NUMBER(rc, val, number, double);
    EXPECT(rc == PMIX_SUCCESS && number == -5000000000.0);
    PMIX_VALUE_RELEASE(val);
    EXPECT(val == NULL);

    PMIX_VALUE_LOAD(&src, "text", PMIX_STRING);
    PMIX_VALUE_GET_NUMBER(rc, &src, number, double);
    EXPECT(rc == PMIX_ERR_BAD_PARAM);
    PMIX_VALUE_DESTRUCT(&src);
    EXPECT(src.type == PMIX_UNDEF);
}

static void test_proc_macros(void)
{
    pmix_proc_t *procs;
    pmix_proc_t wild;
    pmix_nspace_t ns;

    PMIX_PROC_CREATE(procs, 2);
    EXPECT(procs != NULL);
    PMIX_PROC_LOAD(&procs[0], "alpha", 0);
    PMIX_LOAD_PROCID(&procs[1], "alpha", 7);
    PMIX_LOAD_PROCID(&wild, "alpha", PMIX_RANK_WILDCARD);
    EXPECT(procs[1].rank == 7 && strcmp(procs[1].nspace, "alpha") == 0);
    EXPECT(PMIX_CHECK_PROCID(&procs[1], &wild));
    EXPECT(!PMIX_CHECK_PROCID(&procs[0], &procs[1]));
    EXPECT(PMIX_RANK_IS_VALID(procs[1].rank));
    EXPECT(!PMIX_RANK_IS_VALID(wild.rank));

    PMIX_LOAD_NSPACE(ns, "beta");
    EXPECT(PMIX_CHECK_NSPACE(ns, "beta"));
    EXPECT(!PMIX_CHECK_NSPACE(ns, "gamma"));
    PMIX_PROC_FREE(procs, 2);
    EXPECT(procs == NULL);
}

static void test_data_array_macros(void)
{
    pmix_data_array_t *darray;
    pmix_info_t *elements;
    pmix_value_t holder;
    pmix_status_t rc;

    PMIX_DATA_ARRAY_CREATE(darray, 2, PMIX_INFO);
    EXPECT(darray != NULL && darray->size == 2 && darray->type == PMIX_INFO);
    elements = (pmix_info_t *)darray->array;
    PMIX_INFO_LOAD(&elements[0], PMIX_HOSTNAME, "node01", PMIX_STRING);
    PMIX_INFO_LOAD(&elements[1], PMIX_LOCAL_SIZE, &(uint32_t){8}, PMIX_UINT32);

    /* loading a value copies the whole array */
    rc = PMIx_Value_load(&holder, darray, PMIX_DATA_ARRAY);
    EXPECT(rc == PMIX_SUCCESS);
    PMIX_DATA_ARRAY_FREE(darray);
    EXPECT(darray == NULL);
    elements = (pmix_info_t *)holder.data.darray->array;
    EXPECT(strcmp(elements[0].value.data.string, "node01") == 0);
    EXPECT(elements[1].value.data.uint32 == 8);
    PMIX_VALUE_DESTRUCT(&holder);

    PMIX_DATA_ARRAY_CREATE(darray, 0, PMIX_STRING);
    EXPECT(darray != NULL && darray->array == NULL && darray->size == 0);
    PMIX_DATA_ARRAY_FREE(darray);
}

static void test_info_list_macros(void)
{
    void *list;
    pmix_status_t rc;
    pmix_data_array_t out;
    int timeout = 10;

    PMIX_INFO_LIST_START(list);
    EXPECT(list != NULL);
    PMIX_INFO_LIST_ADD(rc, list, PMIX_TIMEOUT, &timeout, PMIX_INT);
    EXPECT(rc == PMIX_SUCCESS);
    PMIX_INFO_LIST_ADD(rc, list, PMIX_HOSTNAME, "node02", PMIX_STRING);
    EXPECT(rc == PMIX_SUCCESS);
    PMIX_INFO_LIST_CONVERT(rc, list, &out);
    EXPECT(rc == PMIX_SUCCESS && out.size == 2 && out.type == PMIX_INFO);
    EXPECT(((pmix_info_t *)out.array)[0].value.data.integer == 10);
    PMIX_INFO_LIST_RELEASE(list);
    PMIX_DATA_ARRAY_DESTRUCT(&out);
    EXPECT(out.array == NULL);
}

static void test_argv_and_strings(void)
{
    char **argv = NULL;
    char *joined = NULL;
    pmix_status_t rc;
    int count;

    PMIX_ARGV_APPEND(rc, argv, "b");
    EXPECT(rc == PMIX_SUCCESS);
    PMIX_ARGV_PREPEND(rc, argv, "a");
    PMIX_ARGV_APPEND_UNIQUE(rc, &argv, "b");
    PMIX_ARGV_COUNT(count, argv);
    EXPECT(count == 2);
    PMIX_ARGV_JOIN(joined, argv, ',');
    EXPECT(strcmp(joined, "a,b") == 0);
    free(joined);
    PMIX_ARGV_FREE(argv);

    EXPECT(strcmp(PMIx_Error_string(PMIX_ERR_NOT_FOUND), "PMIX_ERR_NOT_FOUND") == 0);
    EXPECT(PMIX_NUMERIC_VERSION == 0x00040202 && PMIX_VERSION_MAJOR == 4L);
}

int main(void)
{
    test_info_macros();
    test_value_macros();
    test_proc_macros();
    test_data_array_macros();
    test_info_list_macros();
    test_argv_and_strings();
    if (failures == 0) {
        printf("c_header_test: all checks passed\n");
    }
    return failures == 0 ? 0 : 1;
}
