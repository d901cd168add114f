/* The ABI facts table. Compiled twice from the same generated entries: with
 * ABI_TABLE=abi_ours against api/include, and with ABI_TABLE=abi_openpmix
 * against the installed OpenPMIx 4.2.2 headers. */
#include <stddef.h>

#include <pmix_server.h>
#include <pmix_tool.h>

#include "tests/api/abi_entry.h"

#define ABI_JOIN2(a, b) a##b
#define ABI_JOIN(a, b) ABI_JOIN2(a, b)

const struct abi_entry ABI_TABLE[] = {
#include "tests/api/abi_table.inc"
};

const size_t ABI_JOIN(ABI_TABLE, _count) = sizeof(ABI_TABLE) / sizeof(ABI_TABLE[0]);
