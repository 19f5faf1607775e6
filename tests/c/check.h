/* The C tests' whole framework (no third-party one): a test is a function of CHECKs.
 *
 *   CHECK(condition, "format", ...)   records a failure (file:line, the condition, the
 *                                     message) and goes on with the test;
 *   RUN(test_function)                runs one test: it passed when none of its CHECKs failed;
 *   return check_summary();           from main: prints "<program>: N passed, N failed" (tests)
 *                                     and returns the exit status (1 on any failure).
 *
 * Every test binary is single-file and runs in well under a second (tests/c/CMakeLists.txt
 * registers each with ctest; .ci/sanitize runs them under ASan+UBSan). */
#ifndef AERON_PY_TESTS_C_CHECK_H
#define AERON_PY_TESTS_C_CHECK_H

#include <stdio.h>

static int check_failures_total;
static int check_tests_passed;
static int check_tests_failed;
static const char *check_program = "test";

#define CHECK(condition, ...)                                                                  \
    do                                                                                         \
    {                                                                                          \
        if (!(condition))                                                                      \
        {                                                                                      \
            check_failures_total++;                                                            \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #condition);      \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fputc('\n', stderr);                                                               \
        }                                                                                      \
    }                                                                                          \
    while (0)

#define RUN(test)                                                                              \
    do                                                                                         \
    {                                                                                          \
        const int before = check_failures_total;                                               \
        test();                                                                                \
        if (check_failures_total == before)                                                    \
        {                                                                                      \
            check_tests_passed++;                                                              \
        }                                                                                      \
        else                                                                                   \
        {                                                                                      \
            check_tests_failed++;                                                              \
            fprintf(stderr, "FAILED: %s\n", #test);                                            \
        }                                                                                      \
    }                                                                                          \
    while (0)

static inline int check_summary(void)
{
    printf("%s: %d passed, %d failed\n", check_program, check_tests_passed, check_tests_failed);
    return check_tests_failed > 0 ? 1 : 0;
}

#endif
