/*
 * csv_cell: one text cell of a CSV bucketsim writes (sweep.csv, capacity_curve.csv).
 *
 * A cell holding a comma, a double quote, CR or LF is quoted (RFC 4180, by libcsv).  A cell
 * that a spreadsheet would read as a formula (it begins with '=', '+', '-', '@', a tab or CR)
 * and is not a number gets a leading "'" (OWASP's advice for CSV injection): spreadsheets show
 * it as text, and a reader of the CSV sees the value with one "'" before it.  Numbers ("-3",
 * "+1e5", "-0.25") stay as they are: they are numeric cells.
 */
#ifndef BS_CSV_CELL_H
#define BS_CSV_CELL_H

#include <stdbool.h>
#include <stdio.h>

/* Whether text S begins as a spreadsheet formula and is not a number. */
bool csv_cell_is_formula(const char *s);
/* Writes S as one cell (no separator). */
void csv_cell(FILE *f, const char *s);

#endif
