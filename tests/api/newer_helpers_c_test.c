/* Issue 37: the helpers OpenPMIx 4.2.3 and later export in place of its
 * macros, called from C (strict C11) through libpmix.so.2, each checked
 * against what OpenPMIx's man page for it says: argv arrays, the
 * environment, keys, namespaces and process ids, an info's directive flags,
 * the boolean reading of a value, and the construct / destruct / create /
 * free / load / xfer families of info, value, proc, byte object, envar,
 * pdata, query, app, regattr and data array. Exit status 0 on success; each failed
 * check prints its line. */
#include <pmix.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

#include "tests/api/c_expect.h"

static void test_argv(void)
{
    char **argv = NULL;
    EXPECT(PMIx_Argv_count(NULL) == 0);
    EXPECT(PMIx_Argv_append_nosize(&argv, "b") == PMIX_SUCCESS);
    EXPECT(PMIx_Argv_append_nosize(&argv, "c") == PMIX_SUCCESS);
    EXPECT(PMIx_Argv_prepend_nosize(&argv, "a") == PMIX_SUCCESS);
    EXPECT(PMIx_Argv_append_unique_nosize(&argv, "b") == PMIX_SUCCESS);  /* there already: no change */
    EXPECT(PMIx_Argv_append_unique_nosize(&argv, "d") == PMIX_SUCCESS);
    EXPECT(PMIx_Argv_count(argv) == 4);
    EXPECT(argv[4] == NULL);
    char *joined = PMIx_Argv_join(argv, ',');
    EXPECT(joined != NULL && strcmp(joined, "a,b,c,d") == 0);
    char **copy = PMIx_Argv_copy(argv);
    EXPECT(copy != NULL && copy != argv && PMIx_Argv_count(copy) == 4 && copy[0] != argv[0] &&
           strcmp(copy[3], "d") == 0);
    PMIx_Argv_free(argv);
    PMIx_Argv_free(copy);
    /* The inverse of join, for entries without the delimiter. */
    char **back = PMIx_Argv_split(joined, ',');
    EXPECT(PMIx_Argv_count(back) == 4 && strcmp(back[0], "a") == 0 && strcmp(back[3], "d") == 0);
    PMIx_Argv_free(back);
    free(joined);
    /* Empty tokens: dropped by split, kept (leading and repeated
     * delimiters) by split_with_empty and split_inter(true). */
    char **plain = PMIx_Argv_split(",x,,y,", ',');
    EXPECT(PMIx_Argv_count(plain) == 2 && strcmp(plain[0], "x") == 0 && strcmp(plain[1], "y") == 0);
    PMIx_Argv_free(plain);
    char **with = PMIx_Argv_split_with_empty(",x,,y", ',');
    EXPECT(PMIx_Argv_count(with) == 4 && strcmp(with[0], "") == 0 && strcmp(with[1], "x") == 0 &&
           strcmp(with[2], "") == 0 && strcmp(with[3], "y") == 0);
    PMIx_Argv_free(with);
    char **inter = PMIx_Argv_split_inter("p::q", ':', true);
    EXPECT(PMIx_Argv_count(inter) == 3 && strcmp(inter[1], "") == 0);
    PMIx_Argv_free(inter);
    EXPECT(PMIx_Argv_split(NULL, ',') == NULL);
    EXPECT(PMIx_Argv_split(",,,", ',') == NULL);
    /* An empty array: joined, an empty string; copied, an empty array. */
    char *none[] = {NULL};
    char *empty = PMIx_Argv_join(none, ',');
    EXPECT(empty != NULL && empty[0] == '\0');
    free(empty);
    char **empty_copy = PMIx_Argv_copy(none);
    EXPECT(empty_copy != NULL && empty_copy[0] == NULL);
    PMIx_Argv_free(empty_copy);
    EXPECT(PMIx_Argv_copy(NULL) == NULL);
}

static void test_setenv(void)
{
    char **env = NULL;
    EXPECT(PMIx_Setenv("A", "1", false, &env) == PMIX_SUCCESS);
    EXPECT(PMIx_Setenv("B", NULL, false, &env) == PMIX_SUCCESS);
    EXPECT(PMIx_Setenv("A", "2", false, &env) == PMIX_ERR_EXISTS);
    EXPECT(PMIx_Argv_count(env) == 2 && strcmp(env[0], "A=1") == 0 && strcmp(env[1], "B=") == 0);
    EXPECT(PMIx_Setenv("A", "3", true, &env) == PMIX_SUCCESS);
    EXPECT(strcmp(env[0], "A=3") == 0 && PMIx_Argv_count(env) == 2);
    /* "AB" is not "A". */
    EXPECT(PMIx_Setenv("AB", "4", false, &env) == PMIX_SUCCESS && PMIx_Argv_count(env) == 3);
    PMIx_Argv_free(env);
    EXPECT(PMIx_Setenv("A", "1", true, NULL) == PMIX_ERR_BAD_PARAM);
    /* The process's own environment goes through the C library. */
    EXPECT(PMIx_Setenv("PMIX_CXX_TEST_37", "yes", true, &environ) == PMIX_SUCCESS);
    EXPECT(getenv("PMIX_CXX_TEST_37") != NULL && strcmp(getenv("PMIX_CXX_TEST_37"), "yes") == 0);
    EXPECT(PMIx_Setenv("PMIX_CXX_TEST_37", NULL, true, &environ) == PMIX_SUCCESS);
    EXPECT(getenv("PMIX_CXX_TEST_37") == NULL);
}

static void test_ids(void)
{
    pmix_key_t key;
    char longer[PMIX_MAX_KEYLEN + 20];
    memset(longer, 'k', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    PMIx_Load_key(key, longer);  /* truncated, terminated */
    EXPECT(strlen(key) == PMIX_MAX_KEYLEN);
    EXPECT(PMIx_Check_key(key, longer));  /* the first PMIX_MAX_KEYLEN characters */
    PMIx_Load_key(key, NULL);
    EXPECT(key[0] == '\0');
    PMIx_Load_key(key, "pmix.job.size");
    EXPECT(PMIx_Check_key(key, PMIX_JOB_SIZE) && !PMIx_Check_key(key, PMIX_UNIV_SIZE));
    EXPECT(PMIx_Check_reserved_key("pmix.x") && !PMIx_Check_reserved_key("mine"));

    pmix_nspace_t ns;
    PMIx_Load_nspace(ns, "job-a");
    EXPECT(strcmp(ns, "job-a") == 0);
    EXPECT(PMIx_Nspace_invalid(NULL) && PMIx_Nspace_invalid("") && !PMIx_Nspace_invalid(ns));
    EXPECT(PMIx_Check_nspace(ns, "job-a") && !PMIx_Check_nspace(ns, "job-b"));
    EXPECT(PMIx_Check_nspace(ns, "") && PMIx_Check_nspace(NULL, ns));  /* an invalid one matches any */

    EXPECT(PMIx_Check_rank(3, 3) && !PMIx_Check_rank(3, 4));
    EXPECT(PMIx_Check_rank(PMIX_RANK_WILDCARD, 4) && PMIx_Check_rank(4, PMIX_RANK_WILDCARD));
    EXPECT(PMIx_Rank_valid(0) && PMIx_Rank_valid(PMIX_RANK_VALID - 1));
    EXPECT(!PMIx_Rank_valid(PMIX_RANK_VALID) && !PMIx_Rank_valid(PMIX_RANK_WILDCARD) &&
           !PMIx_Rank_valid(PMIX_RANK_INVALID));

    pmix_proc_t a, b;
    PMIx_Load_procid(&a, "job-a", 2);
    PMIx_Xfer_procid(&b, &a);
    EXPECT(strcmp(b.nspace, "job-a") == 0 && b.rank == 2 && PMIx_Check_procid(&a, &b));
    b.rank = PMIX_RANK_WILDCARD;
    EXPECT(PMIx_Check_procid(&a, &b));
    b.rank = 3;
    EXPECT(!PMIx_Check_procid(&a, &b));
    EXPECT(!PMIx_Procid_invalid(&a));
    a.rank = PMIX_RANK_INVALID;
    EXPECT(PMIx_Procid_invalid(&a));
    PMIx_Load_procid(&a, NULL, 0);
    EXPECT(PMIx_Procid_invalid(&a));

    PMIx_Load_procid(&a, "job-a", 7);
    char *text = PMIx_Proc_string(&a);
    EXPECT(text != NULL && strcmp(text, "[job-a,7]") == 0);
    free(text);
    a.rank = PMIX_RANK_WILDCARD;
    text = PMIx_Proc_string(&a);
    EXPECT(text != NULL && strcmp(text, "[job-a,WILDCARD]") == 0);
    free(text);
}

static void test_info_flags(void)
{
    pmix_info_t info;
    memset(&info, 0, sizeof info);
    EXPECT(PMIx_Info_is_optional(&info) && !PMIx_Info_is_required(&info));
    PMIx_Info_required(&info);
    EXPECT(PMIx_Info_is_required(&info) && (info.flags & PMIX_INFO_REQD));
    PMIx_Info_optional(&info);
    EXPECT(PMIx_Info_is_optional(&info));
    PMIx_Info_processed(&info);
    EXPECT(PMIx_Info_was_processed(&info));
    PMIx_Info_set_end(&info);
    EXPECT(PMIx_Info_is_end(&info) && (info.flags & PMIX_INFO_ARRAY_END));
    PMIx_Info_qualifier(&info);
    EXPECT(PMIx_Info_is_qualifier(&info));
    PMIx_Info_persistent(&info);
    EXPECT(PMIx_Info_is_persistent(&info));
    /* Each setter sets its own flag only. */
    EXPECT(info.flags == (PMIX_INFO_REQD_PROCESSED | PMIX_INFO_ARRAY_END | PMIX_INFO_QUALIFIER | PMIX_INFO_PERSISTENT));
}

static pmix_boolean_t truth(const char *s)
{
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, "k", s, PMIX_STRING);
    pmix_boolean_t b = PMIx_Info_true(&info);
    EXPECT(PMIx_Value_true(&info.value) == b);
    PMIX_INFO_DESTRUCT(&info);
    return b;
}

static void test_truth(void)
{
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    EXPECT(PMIx_Info_true(&info) == PMIX_BOOL_TRUE);  /* the key's presence */
    bool no = false;
    PMIX_INFO_LOAD(&info, "k", &no, PMIX_BOOL);
    EXPECT(PMIx_Info_true(&info) == PMIX_BOOL_FALSE);
    int n = 1;
    PMIX_INFO_LOAD(&info, "k", &n, PMIX_INT);
    EXPECT(PMIx_Info_true(&info) == PMIX_NON_BOOL);
    EXPECT(truth("") == PMIX_BOOL_TRUE && truth("  ") == PMIX_BOOL_TRUE);
    EXPECT(truth("0") == PMIX_BOOL_FALSE && truth("12") == PMIX_BOOL_TRUE && truth("-1") == PMIX_BOOL_TRUE);
    EXPECT(truth("YES") == PMIX_BOOL_TRUE && truth("true") == PMIX_BOOL_TRUE && truth("Enable") == PMIX_BOOL_TRUE);
    EXPECT(truth("y") == PMIX_BOOL_TRUE && truth("t") == PMIX_BOOL_TRUE);
    EXPECT(truth("no") == PMIX_BOOL_FALSE && truth("False") == PMIX_BOOL_FALSE && truth("disable") == PMIX_BOOL_FALSE);
    EXPECT(truth("maybe") == PMIX_NON_BOOL);
}

static void test_structs(void)
{
    pmix_info_t *infos = PMIx_Info_create(3);
    EXPECT(infos != NULL && PMIx_Info_is_end(&infos[2]) && !PMIx_Info_is_end(&infos[0]));
    EXPECT(infos[0].value.type == PMIX_UNDEF);
    PMIX_INFO_LOAD(&infos[0], "k", "text", PMIX_STRING);
    PMIx_Info_free(infos, 3);  /* the string goes with it (ASan in CI would tell) */
    EXPECT(PMIx_Info_create(0) == NULL);

    /* A persistent info does not own its value: destruct leaves it. */
    pmix_info_t info;
    PMIx_Info_construct(&info);
    EXPECT(info.value.type == PMIX_UNDEF && info.flags == 0);
    char *kept = strdup("kept");
    info.value.type = PMIX_STRING;
    info.value.data.string = kept;
    PMIx_Info_persistent(&info);
    PMIx_Info_destruct(&info);
    EXPECT(info.value.data.string == kept && strcmp(kept, "kept") == 0);
    free(kept);

    pmix_value_t *values = PMIx_Value_create(2);
    EXPECT(values != NULL && values[1].type == PMIX_UNDEF);
    PMIX_VALUE_LOAD(&values[1], "v", PMIX_STRING);
    PMIx_Value_free(values, 2);
    pmix_value_t v;
    PMIx_Value_construct(&v);
    EXPECT(v.type == PMIX_UNDEF);

    pmix_proc_t *procs = PMIx_Proc_create(2);
    EXPECT(procs != NULL && procs[1].nspace[0] == '\0' && procs[1].rank == 0);
    PMIx_Proc_load(&procs[1], "ns", 5);
    EXPECT(strcmp(procs[1].nspace, "ns") == 0 && procs[1].rank == 5);
    PMIx_Proc_destruct(&procs[1]);
    EXPECT(procs[1].nspace[0] == '\0');
    PMIx_Proc_free(procs, 2);

    pmix_byte_object_t bo;
    PMIx_Byte_object_construct(&bo);
    EXPECT(bo.bytes == NULL && bo.size == 0);
    char *data = malloc(4);
    memcpy(data, "abcd", 4);
    PMIx_Byte_object_load(&bo, data, 4);  /* taken over */
    EXPECT(bo.bytes == data && bo.size == 4);
    PMIx_Byte_object_destruct(&bo);
    EXPECT(bo.bytes == NULL && bo.size == 0);
    pmix_byte_object_t *bos = PMIx_Byte_object_create(2);
    EXPECT(bos != NULL && bos[1].bytes == NULL);
    bos[0].bytes = strdup("x");
    bos[0].size = 1;
    PMIx_Byte_object_free(bos, 2);

    pmix_envar_t *ev = PMIx_Envar_create(1);
    EXPECT(ev != NULL && ev[0].envar == NULL);
    char name[] = "PATH", value[] = "/bin";
    PMIx_Envar_load(&ev[0], name, value, ':');
    EXPECT(ev[0].envar != name && strcmp(ev[0].envar, "PATH") == 0 && strcmp(ev[0].value, "/bin") == 0 &&
           ev[0].separator == ':');
    PMIx_Envar_destruct(&ev[0]);
    EXPECT(ev[0].envar == NULL && ev[0].value == NULL);
    PMIx_Envar_load(&ev[0], name, NULL, ';');
    EXPECT(ev[0].value == NULL && ev[0].separator == ';');
    PMIx_Envar_free(ev, 1);
    pmix_envar_t e;
    PMIx_Envar_construct(&e);
    EXPECT(e.envar == NULL && e.value == NULL && e.separator == '\0');
}

static void test_more_structs(void)
{
    pmix_proc_t owner;
    PMIx_Load_procid(&owner, "pub", 3);
    pmix_pdata_t *pd = PMIx_Pdata_create(2);
    EXPECT(pd != NULL && pd[0].value.type == PMIX_UNDEF);
    int n = 42;
    PMIx_Pdata_load(&pd[0], &owner, "k", &n, PMIX_INT);
    EXPECT(strcmp(pd[0].key, "k") == 0 && pd[0].proc.rank == 3 && pd[0].value.type == PMIX_INT &&
           pd[0].value.data.integer == 42);
    PMIx_Pdata_xfer(&pd[1], &pd[0]);
    EXPECT(strcmp(pd[1].key, "k") == 0 && strcmp(pd[1].proc.nspace, "pub") == 0 && pd[1].value.data.integer == 42);
    PMIx_Pdata_free(pd, 2);
    pmix_pdata_t one;
    PMIx_Pdata_construct(&one);
    EXPECT(one.value.type == PMIX_UNDEF && one.key[0] == '\0');
    PMIx_Pdata_load(&one, &owner, "s", "text", PMIX_STRING);
    PMIx_Pdata_destruct(&one);

    pmix_query_t *q = PMIx_Query_create(1);
    EXPECT(q != NULL && q[0].keys == NULL && q[0].nqual == 0);
    PMIx_Argv_append_nosize(&q[0].keys, PMIX_QUERY_NAMESPACES);
    PMIx_Query_qualifiers_create(&q[0], 2);
    EXPECT(q[0].nqual == 2 && q[0].qualifiers != NULL);
    PMIx_Query_free(q, 1);
    pmix_query_t *single = PMIx_Query_create(1);
    PMIx_Query_release(single);  /* destructed and freed */
    pmix_query_t lone;
    PMIx_Query_construct(&lone);
    EXPECT(lone.keys == NULL && lone.qualifiers == NULL);
    PMIx_Query_destruct(&lone);

    pmix_app_t *apps = PMIx_App_create(1);
    EXPECT(apps != NULL && apps[0].cmd == NULL && apps[0].ninfo == 0);
    apps[0].cmd = strdup("/bin/true");
    PMIx_App_info_create(&apps[0], 2);
    EXPECT(apps[0].ninfo == 2 && apps[0].info != NULL);
    PMIx_App_free(apps, 1);
    pmix_app_t *single_app = PMIx_App_create(1);
    PMIx_App_release(single_app);
    pmix_app_t app;
    PMIx_App_construct(&app);
    EXPECT(app.cmd == NULL && app.argv == NULL);
    PMIx_App_destruct(&app);

    pmix_regattr_t *attrs = PMIx_Regattr_create(2);
    EXPECT(attrs != NULL && attrs[0].name == NULL);
    PMIx_Regattr_load(&attrs[0], "PMIX_TIMEOUT", PMIX_TIMEOUT, PMIX_INT, "seconds");
    EXPECT(strcmp(attrs[0].name, "PMIX_TIMEOUT") == 0 && strcmp(attrs[0].string, PMIX_TIMEOUT) == 0 &&
           attrs[0].type == PMIX_INT && PMIx_Argv_count(attrs[0].description) == 1);
    PMIx_Regattr_xfer(&attrs[1], &attrs[0]);
    EXPECT(attrs[1].name != attrs[0].name && strcmp(attrs[1].name, "PMIX_TIMEOUT") == 0);
    PMIx_Regattr_free(attrs, 2);
    pmix_regattr_t ra;
    PMIx_Regattr_construct(&ra);
    EXPECT(ra.name == NULL && ra.description == NULL);
    PMIx_Regattr_destruct(&ra);

    pmix_data_array_t *da = PMIx_Data_array_create(3, PMIX_INFO);
    EXPECT(da != NULL && da->size == 3 && da->type == PMIX_INFO && da->array != NULL);
    PMIX_INFO_LOAD(&((pmix_info_t *) da->array)[1], "k", "v", PMIX_STRING);
    PMIx_Data_array_free(da);
    pmix_data_array_t arr;
    PMIx_Data_array_init(&arr, PMIX_PROC);
    EXPECT(arr.type == PMIX_PROC && arr.size == 0 && arr.array == NULL);
    PMIx_Data_array_construct(&arr, 2, PMIX_PROC);
    EXPECT(arr.size == 2 && arr.array != NULL);
    PMIx_Data_array_destruct(&arr);
}

int main(void)
{
    test_argv();
    test_setenv();
    test_ids();
    test_info_flags();
    test_truth();
    test_structs();
    test_more_structs();
    if (failures == 0) printf("newer_helpers_c_test: all checks passed\n");
    return failures == 0 ? 0 : 1;
}
