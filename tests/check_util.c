/*
 * check_util: strict parsing, errors and atomic output of sim/util.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/util.h"
#include "tests/check_main.h"

START_TEST(parse_strict)
{
	int64_t v;
	double d;
	bool b;
	char why[128];
	ck_assert_int_eq(parse_i64("42", 0, 100, &v, why, sizeof why), 0);
	ck_assert_int_eq(v, 42);
	ck_assert_int_eq(parse_i64("4.0", 0, 100, &v, why, sizeof why), 0);
	ck_assert_int_eq(v, 4);
	ck_assert_int_eq(parse_i64("-3", 0, 100, &v, why, sizeof why), -1);
	ck_assert_int_eq(parse_i64("101", 0, 100, &v, why, sizeof why), -1);
	ck_assert_int_eq(parse_i64("12x", 0, 100, &v, why, sizeof why), -1);
	ck_assert_ptr_nonnull(strstr(why, "'12x'"));
	ck_assert_int_eq(parse_i64("", 0, 100, &v, why, sizeof why), -1);
	ck_assert_int_eq(parse_i64(" 1", 0, 100, &v, why, sizeof why), -1);
	ck_assert_int_eq(parse_i64("4.5", 0, 100, &v, why, sizeof why), -1);
	ck_assert_int_eq(parse_f64("0.25", 0, 1, &d, why, sizeof why), 0);
	ck_assert_double_eq(d, 0.25);
	ck_assert_int_eq(parse_f64("nan", 0, 1, &d, why, sizeof why), -1);
	ck_assert_int_eq(parse_f64("2", 0, 1, &d, why, sizeof why), -1);
	ck_assert_int_eq(parse_bool("On", &b, why, sizeof why), 0);
	ck_assert(b);
	ck_assert_int_eq(parse_bool("maybe", &b, why, sizeof why), -1);
}
END_TEST

START_TEST(first_error_wins)
{
	struct bs_err e = {0};
	ck_assert_int_eq(bs_errf(&e, BS_EXIT_INPUT, "a.csv", 7, "prompt_tokens", "bad %d", 1), -1);
	bs_errf(&e, BS_EXIT_USAGE, "b.csv", 9, NULL, "later");
	ck_assert_int_eq(e.code, BS_EXIT_INPUT);
	ck_assert_str_eq(e.file, "a.csv");
	ck_assert_int_eq(e.line, 7);
	ck_assert_str_eq(e.msg, "bad 1");
}
END_TEST

START_TEST(outset_atomic)
{
	char dir[] = "/tmp/bs_outsetXXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char *a = xasprintf("%s/a.txt", dir), *b = xasprintf("%s/b.txt", dir);
	struct bs_err e = {0};
	struct outset s;
	outset_init(&s);
	FILE *f = outset_open(&s, a, &e);
	ck_assert_ptr_nonnull(f);
	fputs("hello\n", f);
	ck_assert_int_eq(access(a, F_OK), -1); /* not visible before commit */
	outset_abort(&s);
	ck_assert_int_eq(access(a, F_OK), -1);
	outset_init(&s);
	fputs("x", outset_open(&s, a, &e));
	fputs("y", outset_open(&s, b, &e));
	ck_assert_int_eq(outset_commit(&s, &e), 0);
	ck_assert_int_eq(access(a, F_OK), 0);
	ck_assert_int_eq(access(b, F_OK), 0);
	unlink(a);
	unlink(b);
	rmdir(dir);
	free(a);
	free(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("util");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, parse_strict);
	tcase_add_test(tc, first_error_wins);
	tcase_add_test(tc, outset_atomic);
	suite_add_tcase(s, tc);
	return check_run(s);
}
