#!/usr/bin/env bash
# Issue 37: a program built against our headers (without
# PMIX_CXX_FUNCTION_MACROS, so with OpenPMIx 4.2.2's inline macros) runs on
# Debian's OpenPMIx 4.2.2 libpmix.so.2 (libpmix-dev, tools/deps.sh), and the
# same object runs on ours. The program uses the common helper macros and a
# few calls that need no server (a tool that does not connect packs and
# unpacks a buffer), checks each result and prints one success line.
set -uo pipefail
include=api/include
ours=$(pwd)/api/libpmix.so.2
openpmix=/usr/lib/x86_64-linux-gnu/libpmix.so.2
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
oneline() { tr '\n' ' ' <<<"$1"; }

[ -f "$openpmix" ] || { echo "FAIL $openpmix is not installed"; exit 1; }
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/ourbuilt.XXXXXX")
trap 'rm -rf "$work"' EXIT

cat > "$work/program.c" <<'C'
#include <pmix.h>
#include <pmix_tool.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "line %d: failed: %s\n", __LINE__, #cond);         \
            ++failures;                                                        \
        }                                                                      \
    } while (0)

static void keys_ids_argv(void)
{
    pmix_key_t key;
    PMIX_LOAD_KEY(key, PMIX_JOB_SIZE);
    CHECK(strcmp(key, "pmix.job.size") == 0);
    pmix_proc_t a, b;
    PMIX_LOAD_PROCID(&a, "job-a", 2);
    PMIX_XFER_PROCID(&b, &a);
    CHECK(strcmp(b.nspace, "job-a") == 0 && b.rank == 2 && PMIX_CHECK_PROCID(&a, &b));

    char **argv = NULL;
    pmix_status_t rc = PMIX_ERROR;
    PMIX_ARGV_APPEND(rc, argv, "a");
    CHECK(rc == PMIX_SUCCESS);
    PMIX_ARGV_APPEND(rc, argv, "b");
    int count = 0;
    PMIX_ARGV_COUNT(count, argv);
    CHECK(count == 2);
    char *joined = NULL;
    PMIX_ARGV_JOIN(joined, argv, ',');
    CHECK(joined != NULL && strcmp(joined, "a,b") == 0);
    free(joined);
    PMIX_ARGV_FREE(argv);
}

static void infos_values(void)
{
    pmix_info_t *info = NULL;
    PMIX_INFO_CREATE(info, 3);
    CHECK(info != NULL && PMIX_INFO_IS_END(&info[2]) && !PMIX_INFO_IS_END(&info[0]));
    int timeout = 10;
    bool yes = true;
    PMIX_INFO_LOAD(&info[0], PMIX_TIMEOUT, &timeout, PMIX_INT);
    PMIX_INFO_LOAD(&info[1], "my.flag", &yes, PMIX_BOOL);
    CHECK(PMIX_CHECK_KEY(&info[0], PMIX_TIMEOUT) && info[0].value.data.integer == 10);
    CHECK(PMIX_INFO_TRUE(&info[1]));
    PMIX_INFO_REQUIRED(&info[0]);
    CHECK(PMIX_INFO_IS_REQUIRED(&info[0]));
    CHECK(PMIx_Info_load(&info[2], "my.text", "hello", PMIX_STRING) == PMIX_SUCCESS);
    CHECK(strcmp(info[2].value.data.string, "hello") == 0);

    pmix_value_t *val = NULL;
    PMIX_VALUE_CREATE(val, 1);
    CHECK(val != NULL && PMIx_Value_load(val, "text", PMIX_STRING) == PMIX_SUCCESS);
    pmix_value_t *copy = NULL;
    pmix_status_t rc = PMIX_ERROR;
    PMIX_VALUE_XFER(rc, copy, val);
    CHECK(rc == PMIX_SUCCESS && copy != NULL && strcmp(copy->data.string, "text") == 0);
    PMIX_VALUE_RELEASE(copy);
    PMIX_VALUE_RELEASE(val);
    CHECK(val == NULL);
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    PMIX_VALUE_LOAD(&v, &timeout, PMIX_INT);
    CHECK(v.type == PMIX_INT && v.data.integer == 10);
    PMIX_VALUE_DESTRUCT(&v);

    pmix_data_array_t *darray = NULL;
    PMIX_DATA_ARRAY_CREATE(darray, 2, PMIX_INFO);
    CHECK(darray != NULL && darray->size == 2 && darray->type == PMIX_INFO);
    PMIX_INFO_XFER(&((pmix_info_t *)darray->array)[0], &info[2]);
    CHECK(strcmp(((pmix_info_t *)darray->array)[0].value.data.string, "hello") == 0);
    PMIX_DATA_ARRAY_FREE(darray);
    CHECK(darray == NULL);

    void *list = NULL;
    PMIX_INFO_LIST_START(list);
    PMIX_INFO_LIST_ADD(rc, list, PMIX_TIMEOUT, &timeout, PMIX_INT);
    CHECK(rc == PMIX_SUCCESS);
    PMIX_INFO_LIST_XFER(rc, list, &info[2]);
    CHECK(rc == PMIX_SUCCESS);
    pmix_data_array_t converted;
    PMIX_INFO_LIST_CONVERT(rc, list, &converted);
    CHECK(rc == PMIX_SUCCESS && converted.type == PMIX_INFO && converted.size == 2);
    PMIX_DATA_ARRAY_DESTRUCT(&converted);
    PMIX_INFO_LIST_RELEASE(list);

    PMIX_INFO_FREE(info, 3);
    CHECK(info == NULL);
}

static void bytes_procs(void)
{
    pmix_byte_object_t bo;
    PMIX_BYTE_OBJECT_CONSTRUCT(&bo);
    char *bytes = malloc(3);
    memcpy(bytes, "xyz", 3);
    size_t size = 3;
    PMIX_BYTE_OBJECT_LOAD(&bo, bytes, size);
    CHECK(bytes == NULL && size == 0 && bo.size == 3 && memcmp(bo.bytes, "xyz", 3) == 0);
    PMIX_BYTE_OBJECT_DESTRUCT(&bo);
    CHECK(bo.bytes == NULL);
    pmix_byte_object_t *bos = NULL;
    PMIX_BYTE_OBJECT_CREATE(bos, 2);
    CHECK(bos != NULL && bos[1].bytes == NULL);
    PMIX_BYTE_OBJECT_FREE(bos, 2);
    CHECK(bos == NULL);

    pmix_proc_t *procs = NULL;
    PMIX_PROC_CREATE(procs, 2);
    CHECK(procs != NULL);
    PMIX_PROC_LOAD(&procs[1], "job-b", 7);
    CHECK(strcmp(procs[1].nspace, "job-b") == 0 && procs[1].rank == 7);
    PMIX_PROC_FREE(procs, 2);
    CHECK(procs == NULL);
}

/* Packing needs an initialized library: a tool that does not connect. */
static void pack_unpack(void)
{
    pmix_info_t *directives = NULL;
    PMIX_INFO_CREATE(directives, 1);
    PMIX_INFO_LOAD(&directives[0], PMIX_TOOL_DO_NOT_CONNECT, NULL, PMIX_BOOL);
    pmix_proc_t me;
    pmix_status_t rc = PMIx_tool_init(&me, directives, 1);
    PMIX_INFO_FREE(directives, 1);
    CHECK(rc == PMIX_SUCCESS);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_tool_init: %s\n", PMIx_Error_string(rc));
        return;
    }
    pmix_data_buffer_t *buf = NULL;
    PMIX_DATA_BUFFER_CREATE(buf);
    int32_t numbers[3] = {5, -6, 7};
    char *text = "packed";
    CHECK(PMIx_Data_pack(NULL, buf, numbers, 3, PMIX_INT32) == PMIX_SUCCESS);
    CHECK(PMIx_Data_pack(NULL, buf, &text, 1, PMIX_STRING) == PMIX_SUCCESS);
    /* Move the bytes into a second buffer and read them from there. */
    char *bytes = NULL;
    size_t size = 0;
    PMIX_DATA_BUFFER_UNLOAD(buf, bytes, size);
    CHECK(bytes != NULL && size > 0);
    PMIX_DATA_BUFFER_RELEASE(buf);
    pmix_data_buffer_t other;
    PMIX_DATA_BUFFER_CONSTRUCT(&other);
    PMIX_DATA_BUFFER_LOAD(&other, bytes, size);
    int32_t back[3] = {0, 0, 0};
    int32_t count = 3;
    CHECK(PMIx_Data_unpack(NULL, &other, back, &count, PMIX_INT32) == PMIX_SUCCESS);
    CHECK(count == 3 && back[0] == 5 && back[1] == -6 && back[2] == 7);
    char *read = NULL;
    count = 1;
    CHECK(PMIx_Data_unpack(NULL, &other, &read, &count, PMIX_STRING) == PMIX_SUCCESS);
    CHECK(read != NULL && strcmp(read, "packed") == 0);
    free(read);
    PMIX_DATA_BUFFER_DESTRUCT(&other);
    CHECK(PMIx_tool_finalize() == PMIX_SUCCESS);
}

int main(void)
{
    CHECK(PMIx_Error_string(PMIX_ERR_NOT_FOUND) != NULL);
    CHECK(strstr(PMIx_Error_string(PMIX_ERR_NOT_FOUND), "NOT") != NULL);
    keys_ids_argv();
    infos_values();
    bytes_procs();
    pack_unpack();
    if (failures != 0) return 1;
    printf("ours-built program: all checks passed | %s\n", PMIx_Get_version());
    return 0;
}
C

flags=(-std=c11 -Wall -Wextra -Werror -pedantic -I"$include")
/usr/bin/gcc "${flags[@]}" -c -o "$work/program.o" "$work/program.c" || { echo "FAIL compile"; exit 1; }

# Every PMIx symbol the object needs is one OpenPMIx 4.2.2 defines.
needed=$(nm -u "$work/program.o" | awk '{print $2}' | grep -i '^pmix' | sort -u)
theirs=$(nm -D --defined-only "$openpmix" | awk '{print $3}' | sort -u)
missing=$(comm -23 <(echo "$needed") <(echo "$theirs"))
[ -z "$missing" ] || fail "OpenPMIx 4.2.2 does not define: $(oneline "$missing")"
[ "$(echo "$needed" | wc -l)" -ge 15 ] || fail "the program calls too few PMIx functions: $(oneline "$needed")"
echo "the program needs $(echo "$needed" | wc -l) PMIx symbols, all in OpenPMIx 4.2.2: $(oneline "$needed")"

# run NAME LIBRARY-DIR-OR-EMPTY EXPECTED-VERSION-WORD
run() {
  local name=$1 dir=$2 word=$3 out status
  if [ -z "$dir" ]; then
    out=$(cd "$work" && env -u LD_LIBRARY_PATH TMPDIR="$work" timeout 60 "./$name" 2>&1)
  else
    out=$(cd "$work" && env LD_LIBRARY_PATH="$dir" TMPDIR="$work" timeout 60 "./$name" 2>&1)
  fi
  status=$?
  echo "$name: $out"
  [ "$status" -eq 0 ] || fail "$name exited with $status"
  grep -q '^ours-built program: all checks passed' <<<"$out" || fail "$name did not print its success line"
  grep -q "$word" <<<"$out" || fail "$name did not run on the expected library ($word)"
}

# Linked with Debian's library by path; found at run time by its soname.
/usr/bin/gcc -o "$work/on_openpmix" "$work/program.o" "$openpmix" || fail "link with $openpmix"
readelf -d "$work/on_openpmix" | grep -q 'NEEDED.*\[libpmix.so.2\]' || fail "on_openpmix does not need libpmix.so.2"
resolved=$(env -u LD_LIBRARY_PATH ldd "$work/on_openpmix" | awk '$1 == "libpmix.so.2" {print $3}')
[ "$(readlink -f "$resolved")" = "$(readlink -f "$openpmix")" ] || fail "libpmix.so.2 resolves to $resolved"
run on_openpmix "" OpenPMIx

# The same object linked with ours.
/usr/bin/gcc -o "$work/on_ours" "$work/program.o" "$ours" || fail "link with $ours"
run on_ours "$(dirname "$ours")" PMIx-CXX

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "openpmix_runs_ours_built_test: ok"
