/*  tests/test.h: the few assertions shoal's tests use.

    A test file has one function per behaviour, each named for what it shows,
    and a main that runs them with RUN (name). A failed CHECK prints where and
    what, and makes the file's exit status non-zero; the function goes on so
    one run shows every broken expectation of it.
*/
#ifndef SHOAL_TEST_H
#define SHOAL_TEST_H

#include <stdio.h>
#include <string.h>

static int test_failures;
static int test_checks;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        test_checks++;                                                                             \
        if (!(cond)) {                                                                             \
            test_failures++;                                                                       \
            fprintf (stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);              \
        }                                                                                          \
    } while (0)

#define CHECK_EQ(a, b)                                                                             \
    do {                                                                                           \
        long long check_a_ = (long long) (a), check_b_ = (long long) (b);                          \
        test_checks++;                                                                             \
        if (check_a_ != check_b_) {                                                                \
            test_failures++;                                                                       \
            fprintf (stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n", __FILE__, __LINE__, \
                     #a, #b, check_a_, check_b_);                                                  \
        }                                                                                          \
    } while (0)

#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *check_a_ = (a), *check_b_ = (b);                                               \
        test_checks++;                                                                             \
        if (!check_a_ || !check_b_ || strcmp (check_a_, check_b_) != 0) {                          \
            test_failures++;                                                                       \
            fprintf (stderr, "%s:%d: CHECK failed: %s == %s (\"%s\" != \"%s\")\n", __FILE__,       \
                     __LINE__, #a, #b, check_a_ ? check_a_ : "(null)",                             \
                     check_b_ ? check_b_ : "(null)");                                              \
        }                                                                                          \
    } while (0)

//  True when haystack contains needle: for error texts, which name a field.
#define CHECK_CONTAINS(haystack, needle)                                                           \
    do {                                                                                           \
        const char *check_h_ = (haystack), *check_n_ = (needle);                                   \
        test_checks++;                                                                             \
        if (!strstr (check_h_, check_n_)) {                                                        \
            test_failures++;                                                                       \
            fprintf (stderr, "%s:%d: CHECK failed: \"%s\" contains \"%s\"\n", __FILE__, __LINE__,  \
                     check_h_, check_n_);                                                          \
        }                                                                                          \
    } while (0)

#define RUN(test)                                                                                  \
    do {                                                                                           \
        int before_ = test_failures;                                                               \
        test ();                                                                                   \
        printf ("%s %s\n", test_failures == before_ ? "ok  " : "FAIL", #test);                     \
    } while (0)

//  Ends main: the summary line and the exit status.
#define TEST_DONE()                                                                                \
    (printf ("%d checks, %d failed\n", test_checks, test_failures), test_failures ? 1 : 0)

#endif
