/* The C tests' one check: EXPECT(cond) prints the failed condition with its
 * file and line and counts it in `failures`, which main() turns into the
 * exit status. Include it once per test program. */
#ifndef PMIX_CXX_TESTS_C_EXPECT_H
#define PMIX_CXX_TESTS_C_EXPECT_H

#include <stdio.h>

static int failures = 0;

#define EXPECT(cond)                                                           \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
            ++failures;                                                        \
        }                                                                      \
    } while (0)

#endif
