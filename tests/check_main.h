/*
 * check_main: the end of every suite's main(): run it (CK_ENV honours CK_VERBOSITY,
 * CK_RUN_SUITE and CK_RUN_CASE) and turn failures into the exit status; a filter that runs
 * no test at all fails, saying so.
 */
#ifndef BS_CHECK_MAIN_H
#define BS_CHECK_MAIN_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

static inline int check_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	int nf = srunner_ntests_failed(sr), nrun = srunner_ntests_run(sr);
	srunner_free(sr);
	if (nrun == 0) { /* a CK_RUN_SUITE or CK_RUN_CASE that names nothing: not a pass */
		const char *su = getenv("CK_RUN_SUITE"), *ca = getenv("CK_RUN_CASE");
		fprintf(stderr, "no test ran (CK_RUN_SUITE=%s, CK_RUN_CASE=%s name no suite or case "
				"of this program)\n", su ? su : "", ca ? ca : "");
		return EXIT_FAILURE;
	}
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
