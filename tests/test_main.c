/*
 * The one CUnit runner. Every tests/test_<name>.c defines test_<name>_register(),
 * which adds one suite; the Makefile collects them into suites.h. Run all suites, or
 * only those named on the command line: `build/test_runner robots warc`.
 *
 * Exit status is non-zero when any assertion failed: CU_get_number_of_failures(),
 * not CU_get_error(), which stays 0 after failed assertions.
 */
#include <CUnit/Basic.h>
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

#define SUITE(name) void test_##name##_register(void);
#include "suites.h"
#undef SUITE

struct suite_entry {
    const char *name;
    void (*reg)(void);
};

static const struct suite_entry suites[] = {
#define SUITE(name) {#name, test_##name##_register},
#include "suites.h"
#undef SUITE
    {NULL, NULL}};

static int wanted(const char *name, int argc, char **argv)
{
    if (argc < 2)
        return 1;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    /* process-wide, as in simcrawl's main(): the libraries leave it to the program (the
     * extractor's libxml2 allocators are not set up: the tests run without them) */
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "cannot initialise libcurl\n");
        return 2;
    }
    if (CU_initialize_registry() != CUE_SUCCESS) {
        fprintf(stderr, "cannot initialise CUnit: %s\n", CU_get_error_msg());
        return 2;
    }
    for (const struct suite_entry *s = suites; s->name; s++)
        if (wanted(s->name, argc, argv))
            s->reg();
    CU_basic_set_mode(CU_BRM_NORMAL);
    CU_basic_run_tests();
    unsigned failures = CU_get_number_of_failures();
    unsigned run = CU_get_number_of_tests_run();
    unsigned failed_tests = CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    curl_global_cleanup();
    printf("\n%u passed, %u failed\n", run - failed_tests, failed_tests);
    return failures ? 1 : 0;
}
