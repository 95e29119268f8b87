/*
 * csv_cell: see csv_cell.h.
 */
#include <csv.h>
#include <stdlib.h>
#include <string.h>

#include "sim/csv_cell.h"
#include "sim/util.h"

/* A decimal number as C's strtod and JSON write it: [+-] digits [. digits] [e [+-] digits]
 * (either side of the point may be empty, not both). */
static bool is_number(const char *s)
{
	if (*s == '+' || *s == '-')
		s++;
	size_t a = strspn(s, "0123456789");
	s += a;
	size_t b = 0;
	if (*s == '.') {
		s++;
		b = strspn(s, "0123456789");
		s += b;
	}
	if (!a && !b)
		return false;
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		size_t c = strspn(s, "0123456789");
		if (!c)
			return false;
		s += c;
	}
	return !*s;
}

bool csv_cell_is_formula(const char *s)
{
	return *s && strchr("=+-@\t\r", *s) && !is_number(s);
}

void csv_cell(FILE *f, const char *s)
{
	bool formula = csv_cell_is_formula(s);
	if (!strpbrk(s, ",\"\n\r")) {
		if (formula)
			fputc('\'', f);
		fputs(s, f);
		return;
	}
	if (!formula) {
		csv_fwrite(f, s, strlen(s));
		return;
	}
	char *t = xasprintf("'%s", s);
	csv_fwrite(f, t, strlen(t));
	free(t);
}
