/* format.h - printing rows as an aligned table, JSON or CSV.
 *
 * Rows arrive one at a time (an ft_row_fn, see db.h); the table format buffers
 * the first few thousand to size its columns and streams the rest at those
 * widths, JSON and CSV stream: memory stays bounded for any row count. JSON is an array of objects
 * with numbers unquoted and NULL as null; CSV follows RFC 4180 quoting.
 */
#ifndef FT_FORMAT_H
#define FT_FORMAT_H

#include <stdio.h>

#include "base/err.h"

enum ft_format { FT_FMT_TABLE, FT_FMT_JSON, FT_FMT_CSV };

int ft_format_parse(const char *text, enum ft_format *out, struct ft_err *err);

struct ft_printer;

/* A printer writing to out in format fmt. */
struct ft_printer *ft_printer_new(FILE *out, enum ft_format fmt);

/* Tables only (other formats ignore it): show only the columns named in cols
 * (NULL-terminated; NULL: all) and, with max_width > 0, show a column named
 * "config" whose rows all list the same parameters as values only (the names
 * once on note), and cut the widest text
 * columns (their cells end "..", never below 16 characters) until a line fits
 * max_width characters. When a column was hidden or cut, one line on note
 * (NULL: none) says so and names --wide. cols must outlive the printer.
 * Decided from the first rows that size the table (see format.c); later
 * streamed rows follow them. */
void ft_printer_narrow(struct ft_printer *p, const char *const *cols, int max_width, FILE *note);

/* The option the note of ft_printer_narrow names for scripts (default
 * "--format csv or json"), for a command whose machine-readable output is
 * another option ("--json"). option must outlive the printer. */
void ft_printer_scripts(struct ft_printer *p, const char *option);

/* The width of a default table: what a terminal of 120 columns shows
 * without wrapping (`--wide` lifts it). */
#define FT_TABLE_WIDTH 120

/* An ft_row_fn: pass it with the printer as ctx. */
int ft_printer_row(void *printer, int ncols, const char *const *names,
		   const char *const *values, const int *types);

/* Writes what is buffered and the closing text (JSON's "]"; an empty JSON
 * array when there were no rows; a table with no rows prints nothing), frees
 * the printer; returns the row count, or -1 after a write or memory error. */
long long ft_printer_finish(struct ft_printer *p);

/* s as a JSON string literal (quotes included; RFC 8259 escapes, invalid
 * UTF-8 as U+FFFD), for commands that print their own JSON objects. */
void ft_json_string(FILE *out, const char *s);

#endif
