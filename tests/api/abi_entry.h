/* One compared fact of the ABI test: a constant's value or a struct's size or
 * member offset, as seen by one header set. Plain C, shared by abi_table.c
 * (compiled against each header set) and abi_test.cpp (which includes no
 * PMIx header). */
#ifndef TESTS_API_ABI_ENTRY_H
#define TESTS_API_ABI_ENTRY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum abi_kind { ABI_INTEGER, ABI_STRING, ABI_ABSENT };

struct abi_entry {
    const char *name;
    enum abi_kind kind;
    long long as_signed;
    unsigned long long as_unsigned;
    const char *text; /* ABI_STRING only */
};

extern const struct abi_entry abi_ours[];
extern const size_t abi_ours_count;
extern const struct abi_entry abi_openpmix[];
extern const size_t abi_openpmix_count;

/* From the generated signature checks (compiled against our headers). */
extern const int abi_signatures_checked;
extern const char *const abi_functions_only_in_ours[];
extern const char *const abi_functions_only_in_openpmix[];

#ifdef __cplusplus
}
#endif

#endif
