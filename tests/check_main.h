/*
 * check_main: the end of every suite's main(): run it (CK_ENV honours CK_VERBOSITY,
 * CK_RUN_SUITE and CK_RUN_CASE) and turn failures into the exit status.
 */
#ifndef BS_CHECK_MAIN_H
#define BS_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

static inline int check_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	int nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
