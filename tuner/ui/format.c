/* format.c - printing rows as an aligned table, JSON or CSV (see format.h).
 *
 * Values arrive as text with a type (0 NULL, 1 integer, 2 real, 3 text, as
 * db.h's ft_row_fn defines them). What each format does with them:
 *
 *   table  header line, a rule of dashes, one line per row; columns two
 *          spaces apart, numbers right-aligned, text left-aligned, NULL as
 *          "-", control characters as spaces. Reals by column name: "_us",
 *          "_ms" and "_s" (durations) with 2 decimals ("%.2f"), names holding
 *          "err" or "spread" (ratios near 1e-4) with 4 significant digits
 *          ("%.4g"), any other real "%.6g". Widths count UTF-8 characters,
 *          so device names with non-ASCII letters still line up. No rows:
 *          nothing is printed (the caller may say so on stderr). Memory is
 *          bounded: the first TABLE_WINDOW rows size the columns and are
 *          printed once that many have come; later rows stream at those
 *          widths (a wider cell pushes the rest of its line right, except in
 *          a cut column). Narrowed (ft_printer_narrow): only the chosen
 *          columns, a "config" column of one parameter list as its values
 *          only ("4,64,128", the names said once on the note), and the widest
 *          text columns cut (cells ending "..") until a line fits the width;
 *          all decided from the first window, later rows follow it.
 *   json   "[", one object per line, "]"; integers and finite reals
 *          unquoted (reals re-printed "%.15g", all the digits SQLite keeps),
 *          NULL, NaN and infinities as null; strings escaped per RFC 8259
 *          (", \ and control characters; other bytes pass through, invalid
 *          UTF-8 becomes U+FFFD so the output is always valid JSON).
 *   csv    RFC 4180: a header record, CRLF line ends, a field quoted (with
 *          "" for ") when it holds a comma, quote, CR, LF or starts or ends
 *          with a space; NULL is an empty field.
 */
#include "ui/format.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rows buffered to size the table's columns (at most this many cells of ~100
 * bytes each are held: a few MB whatever the row count). 4096 is more than
 * any query or check of a real space prints, so those tables are sized by all
 * their rows; `check` over a huge space streams. */
#define TABLE_WINDOW 4096

struct row {
	int n;
	char **cells;		/* n strings, as the table will print them */
};

struct ft_printer {
	FILE *out;
	enum ft_format fmt;
	long long rows;		/* rows received */
	int failed;		/* out of memory (a write error shows in ferror) */
	/* table only */
	int ncols;		/* columns named so far (the widest row) */
	char **names;
	int *numeric;		/* 1 while every non-NULL value of the column is a number */
	struct row *buf;
	size_t nbuf, cap;
	const char *const *keep;	/* ft_printer_narrow: the columns shown (NULL: all) */
	int max_width;			/* 0: no limit */
	FILE *note;			/* where "hidden or cut" is said */
	const char *scripts;		/* the option that prints for scripts, named in that note */
	size_t *w;		/* column widths once the header is printed, else NULL */
	int *show;		/* the columns shown, beside w */
	int nw;			/* columns w and show cover */
	int ccol;		/* the config column shown as values only, or -1 */
	char *cnames;		/* its parameter names ("A,B"), which a later row must match */
};

int ft_format_parse(const char *text, enum ft_format *out, struct ft_err *err)
{
	static const char *const names[] = { "table", "json", "csv" };

	for (int i = 0; i < 3; i++) {
		if (text && !strcmp(text, names[i])) {
			*out = (enum ft_format)i;
			return 0;
		}
	}
	return ft_error(err, FT_EINPUT, "bad format '%s': use table, json or csv", text ? text : "");
}

struct ft_printer *ft_printer_new(FILE *out, enum ft_format fmt)
{
	struct ft_printer *p = calloc(1, sizeof(*p));

	if (p) {
		p->out = out;
		p->fmt = fmt;
		p->ccol = -1;
	}
	return p;
}

void ft_printer_narrow(struct ft_printer *p, const char *const *cols, int max_width, FILE *note)
{
	if (!p || p->fmt != FT_FMT_TABLE)
		return;
	p->keep = cols;
	p->max_width = max_width;
	p->note = note;
}

/* ---- numbers ------------------------------------------------------------ */

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* Parses a real value's text; 0 when it is not a number at all. */
static int parse_real(const char *v, double *d)
{
	char *end;

	errno = 0;
	*d = strtod(v, &end);
	return end != v && *end == '\0';
}

static int is_integer(const char *v)
{
	char *end;

	errno = 0;
	(void)strtoll(v, &end, 10);
	return end != v && *end == '\0' && errno == 0;
}

/* A real for the table, its precision chosen by the column name (see top). */
static void table_real(const char *name, const char *v, char *buf, size_t size)
{
	double d;

	if (!parse_real(v, &d))
		snprintf(buf, size, "%s", v);
	else if (ends_with(name, "_us") || ends_with(name, "_ms") || ends_with(name, "_s"))
		snprintf(buf, size, "%.2f", d);
	else if (strstr(name, "err") || strstr(name, "spread"))
		snprintf(buf, size, "%.4g", d);
	else
		snprintf(buf, size, "%.6g", d);
}

/* ---- table -------------------------------------------------------------- */

/* Characters, not bytes: UTF-8 continuation bytes do not take a column. */
static size_t width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

static char *dup_cell(const char *s)
{
	char *c = strdup(s);

	if (c)
		for (char *q = c; *q; q++)
			if ((unsigned char)*q < 0x20 || *q == 0x7f)
				*q = ' ';
	return c;
}

static int table_row(struct ft_printer *p, int ncols, const char *const *names,
		     const char *const *values, const int *types)
{
	struct row r = { ncols, calloc((size_t)(ncols ? ncols : 1), sizeof(char *)) };
	char num[64];

	if (!r.cells)
		return -1;
	if (ncols > p->ncols) {
		char **nn = realloc(p->names, (size_t)ncols * sizeof(*nn));
		int *nu = nn ? realloc(p->numeric, (size_t)ncols * sizeof(*nu)) : NULL;

		if (nn)
			p->names = nn;
		if (!nu) {
			free(r.cells);
			return -1;
		}
		p->numeric = nu;
		for (int i = p->ncols; i < ncols; i++) {
			p->names[i] = dup_cell(names[i]);
			p->numeric[i] = 1;
			if (!p->names[i]) {
				p->ncols = i;
				free(r.cells);
				return -1;
			}
		}
		p->ncols = ncols;
	}
	if (p->nbuf == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct row *nb = realloc(p->buf, cap * sizeof(*nb));

		if (!nb) {
			free(r.cells);
			return -1;
		}
		p->buf = nb;
		p->cap = cap;
	}
	p->buf[p->nbuf++] = r;	/* owned by p from here, even if a cell fails below */
	for (int i = 0; i < ncols; i++) {
		const char *v = values[i];

		if (!v || types[i] == 0) {
			v = "-";
		} else if (types[i] == 2) {
			table_real(names[i], v, num, sizeof(num));
			v = num;
		}
		if (values[i] && (types[i] < 0 || types[i] > 2))
			p->numeric[i] = 0;	/* one text value: the column is text */
		if (!(r.cells[i] = dup_cell(v)))
			return -1;
	}
	return 0;
}

static void pad(FILE *out, size_t n)
{
	while (n--)
		fputc(' ', out);
}

/* Writes the first n characters of c (UTF-8 aware). */
static void put_chars(FILE *out, const char *c, size_t n)
{
	for (; *c; c++) {
		if (((unsigned char)*c & 0xc0) != 0x80 && !n--)
			break;
		fputc(*c, out);
	}
}

/* One line: the shown cells (NULL past the row's end: empty), a cell wider
 * than its column cut to fit with "..", no trailing blanks. */
static void table_line(struct ft_printer *p, char *const *cells, int n, const size_t *w,
		       const int *show)
{
	int last = n - 1, first = 1;

	while (last >= 0 && (!show[last] || !cells[last] || !*cells[last]))
		last--;
	for (int i = 0; i <= last; i++) {
		const char *c = cells[i] ? cells[i] : "";
		size_t cw = width(c);

		if (!show[i])
			continue;
		if (!first)
			fputs("  ", p->out);
		first = 0;
		/* a narrowed text column cuts a cell wider than it; otherwise a
		 * streamed cell wider than its column pushes the rest right */
		if (p->max_width > 0 && !p->numeric[i] && cw > w[i] && w[i] > 2) {
			put_chars(p->out, c, w[i] - 2);
			fputs("..", p->out);
			continue;
		}
		if (p->numeric[i] && cw < w[i])
			pad(p->out, w[i] - cw);
		fputs(c, p->out);
		if (!p->numeric[i] && i < last && cw < w[i])
			pad(p->out, w[i] - cw);
	}
	fputc('\n', p->out);
}

/* The narrowest a cut column gets: room for a status name or a short config. */
#define CUT_MIN 16

/* The parameter names of a config "A=1,B=2" into names ("A,B"); 0 when the
 * text is not of that form or does not fit. */
static int config_names(const char *cfg, char *names, size_t size)
{
	size_t n = 0;

	while (*cfg) {
		size_t k = strcspn(cfg, "=,");
		if (cfg[k] != '=' || !k || n + k + 2 > size)
			return 0;
		if (n)
			names[n++] = ',';
		memcpy(names + n, cfg, k);
		n += k;
		cfg += k + 1;
		cfg += strcspn(cfg, ",");
		if (*cfg)
			cfg++;
	}
	names[n] = '\0';
	return n > 0;
}

/* Keeps only the values of a config cell "A=1,B=2" ("1,2"), in place. */
static void config_values(char *c)
{
	char *out = c;

	for (const char *q = c; *q;) {
		q = strchr(q, '=') + 1;
		while (*q && *q != ',')
			*out++ = *q++;
		if (*q)
			*out++ = *q++;
	}
	*out = '\0';
}

/* A row's config cell as values only when it lists the parameters the
 * first window's rows did (a row that differs keeps its names). */
static void compact_row(struct ft_printer *p, struct row *r)
{
	char names[1024];

	if (p->ccol >= 0 && p->ccol < r->n && r->cells[p->ccol] &&
	    config_names(r->cells[p->ccol], names, sizeof(names)) && !strcmp(names, p->cnames))
		config_values(r->cells[p->ccol]);
}

/* A narrowed table's "config" column, when every row of the first window has
 * the same parameters in the same order: each cell keeps only the values
 * ("4,64,128"), and note says which parameters they are. Lossless, and a
 * third as wide. */
static void compact_configs(struct ft_printer *p, const int *show)
{
	char first[1024], names[1024];
	int col = -1;

	for (int i = 0; i < p->ncols; i++)
		if (show[i] && !strcmp(p->names[i], "config"))
			col = i;
	if (col < 0 || !p->nbuf || col >= p->buf[0].n || !p->buf[0].cells[col] ||
	    !config_names(p->buf[0].cells[col], first, sizeof(first)))
		return;
	for (size_t r = 1; r < p->nbuf; r++)
		if (col >= p->buf[r].n || !p->buf[r].cells[col] ||
		    !config_names(p->buf[r].cells[col], names, sizeof(names)) || strcmp(names, first))
			return;
	if (!(p->cnames = strdup(first)))
		return;	/* (not compacted: still right, only wider) */
	p->ccol = col;
	for (size_t r = 0; r < p->nbuf; r++)
		config_values(p->buf[r].cells[col]);
	if (p->note)
		fprintf(p->note, "fatune: config lists the values of %s (--wide: NAME=V)\n", first);
}

/* Whether column i is one ft_printer_narrow keeps. */
static int kept(const struct ft_printer *p, int i)
{
	if (!p->keep)
		return 1;
	for (int k = 0; p->keep[k]; k++)
		if (!strcmp(p->keep[k], p->names[i]))
			return 1;
	return 0;
}

/* Narrowing: hides the columns not kept and cuts the widest text columns
 * until a line fits p->max_width; says on p->note what it hid or cut. */
static void narrow(struct ft_printer *p, size_t *w, int *show)
{
	int hidden = 0, cut = 0;
	size_t total = 0;

	for (int i = 0; i < p->ncols; i++) {
		show[i] = kept(p, i);
		hidden += !show[i];
	}
	if (p->max_width > 0) {
		compact_configs(p, show);
		for (int i = 0; i < p->ncols; i++) {
			w[i] = width(p->names[i]);
			for (size_t r = 0; r < p->nbuf; r++)
				if (i < p->buf[r].n && p->buf[r].cells[i] && width(p->buf[r].cells[i]) > w[i])
					w[i] = width(p->buf[r].cells[i]);
		}
	}
	for (int i = 0; i < p->ncols; i++)
		if (show[i])
			total += w[i] + (total ? 2 : 0);
	/* cut the widest text column down to the next widest (never below its
	 * header or CUT_MIN), so that the cuts are shared among the wide ones */
	while (p->max_width > 0 && total > (size_t)p->max_width) {
		int widest = -1;
		size_t floor, next = 0, target;

		for (int i = 0; i < p->ncols; i++)
			if (show[i] && !p->numeric[i] && (widest < 0 || w[i] > w[widest]))
				widest = i;
		if (widest < 0)
			break;
		for (int i = 0; i < p->ncols; i++)
			if (show[i] && !p->numeric[i] && i != widest && w[i] > next)
				next = w[i];
		floor = width(p->names[widest]);
		if (floor < CUT_MIN)
			floor = CUT_MIN;
		if (w[widest] <= floor)
			break;
		target = w[widest] - (total - (size_t)p->max_width);
		if (target > w[widest] || target < next) /* (wrapped) or past the next widest */
			target = next < w[widest] ? next : w[widest] - 1;
		if (target < floor)
			target = floor;
		total -= w[widest] - target;
		w[widest] = target;
		cut++;
	}
	if (p->note && (hidden || cut))
		fprintf(p->note,
			"fatune: %d column%s hidden%s to fit %d characters: --wide shows every column in "
			"full (%s for scripts)\n",
			hidden, hidden == 1 ? "" : "s", cut ? " and the widest cut" : "", p->max_width,
			p->scripts ? p->scripts : "--format csv or json");
}

static void free_rows(struct ft_printer *p)
{
	for (size_t r = 0; r < p->nbuf; r++) {
		for (int i = 0; i < p->buf[r].n; i++)
			free(p->buf[r].cells[i]);
		free(p->buf[r].cells);
	}
	p->nbuf = 0;
}

/* Sizes the columns (first call: from the names and the rows buffered,
 * narrowed when asked, then prints the header and its rule) and prints the
 * buffered rows, which are freed. A column that first appears later is sized
 * by its name. */
static void table_flush(struct ft_printer *p)
{
	char **rule = NULL;

	if (!p->nbuf && !p->w)
		return;
	if (p->nw < p->ncols) {
		size_t *w = realloc(p->w, (size_t)p->ncols * sizeof(*w));
		int *show = w ? realloc(p->show, (size_t)p->ncols * sizeof(*show)) : NULL;
		int first = !p->nw;

		if (w)
			p->w = w;
		if (!show) {
			p->failed = 1;
			goto out;
		}
		p->show = show;
		for (int i = p->nw; i < p->ncols; i++) {
			w[i] = width(p->names[i]);
			show[i] = kept(p, i);
		}
		p->nw = p->ncols;
		if (first) {
			for (size_t r = 0; r < p->nbuf; r++)
				for (int i = 0; i < p->buf[r].n; i++)
					if (p->buf[r].cells[i] && width(p->buf[r].cells[i]) > w[i])
						w[i] = width(p->buf[r].cells[i]);
			if (p->keep || p->max_width)
				narrow(p, w, show);
			if (!(rule = calloc((size_t)p->ncols, sizeof(*rule)))) {
				p->failed = 1;
				goto out;
			}
			for (int i = 0; i < p->ncols; i++) {
				if (!(rule[i] = malloc(w[i] + 1))) {
					p->failed = 1;
					goto out;
				}
				memset(rule[i], '-', w[i]);
				rule[i][w[i]] = '\0';
			}
			table_line(p, p->names, p->ncols, w, show);
			table_line(p, rule, p->ncols, w, show);
		} else {
			for (size_t r = 0; r < p->nbuf; r++)
				compact_row(p, &p->buf[r]);
		}
	} else {
		for (size_t r = 0; r < p->nbuf; r++)
			compact_row(p, &p->buf[r]);
	}
	for (size_t r = 0; r < p->nbuf; r++)
		table_line(p, p->buf[r].cells, p->buf[r].n, p->w, p->show);
out:
	if (rule)
		for (int i = 0; i < p->ncols; i++)
			free(rule[i]);
	free(rule);
	free_rows(p);
}

/* ---- JSON ---------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (2 to 4), or 0 when it is not one
 * (overlong forms, surrogates and code points past U+10FFFF are invalid). */
static int utf8_len(const unsigned char *s)
{
	unsigned cp;
	int n;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

void ft_json_string(FILE *out, const char *s)
{
	const unsigned char *q = (const unsigned char *)s;

	fputc('"', out);
	while (*q) {
		unsigned char c = *q;
		int n;

		if (c == '"' || c == '\\') {
			fputc('\\', out);
			fputc(c, out);
		} else if (c == '\n') {
			fputs("\\n", out);
		} else if (c == '\t') {
			fputs("\\t", out);
		} else if (c == '\r') {
			fputs("\\r", out);
		} else if (c < 0x20) {
			fprintf(out, "\\u%04x", c);
		} else if (c < 0x80) {
			fputc(c, out);
		} else if ((n = utf8_len(q)) > 0) {
			fwrite(q, 1, (size_t)n, out);
			q += n;
			continue;
		} else {
			fputs("\\ufffd", out);
		}
		q++;
	}
	fputc('"', out);
}

static void json_row(struct ft_printer *p, int ncols, const char *const *names,
		     const char *const *values, const int *types)
{
	double d;

	fputs(p->rows ? ",\n  {" : "[\n  {", p->out);
	for (int i = 0; i < ncols; i++) {
		const char *v = values[i];

		if (i)
			fputs(", ", p->out);
		ft_json_string(p->out, names[i]);
		fputs(": ", p->out);
		if (!v || types[i] == 0)
			fputs("null", p->out);
		else if (types[i] == 1 && is_integer(v))
			fputs(v, p->out);
		else if (types[i] == 2 && parse_real(v, &d))
			isfinite(d) ? fprintf(p->out, "%.15g", d) : fputs("null", p->out);
		else
			ft_json_string(p->out, v);	/* text, or a "number" that is not one */
	}
	fputc('}', p->out);
}

/* ---- CSV ----------------------------------------------------------------- */

static void csv_field(FILE *out, const char *s)
{
	size_t n = strlen(s);

	if (!strpbrk(s, ",\"\r\n") && !(n && (s[0] == ' ' || s[n - 1] == ' '))) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void csv_row(struct ft_printer *p, int ncols, const char *const *names,
		    const char *const *values, const int *types)
{
	char num[64];
	double d;

	if (p->rows == 0) {
		for (int i = 0; i < ncols; i++) {
			if (i)
				fputc(',', p->out);
			csv_field(p->out, names[i]);
		}
		fputs("\r\n", p->out);
	}
	for (int i = 0; i < ncols; i++) {
		const char *v = values[i];

		if (i)
			fputc(',', p->out);
		if (!v || types[i] == 0)
			continue;
		if (types[i] == 2 && parse_real(v, &d)) {
			snprintf(num, sizeof(num), "%.15g", d);
			v = num;
		}
		csv_field(p->out, v);
	}
	fputs("\r\n", p->out);
}

/* ---- the printer --------------------------------------------------------- */

int ft_printer_row(void *printer, int ncols, const char *const *names,
		   const char *const *values, const int *types)
{
	struct ft_printer *p = printer;

	if (!p || p->failed)
		return 1;	/* stops the query: the output is already incomplete */
	if (p->fmt == FT_FMT_TABLE) {
		if (table_row(p, ncols, names, values, types)) {
			p->failed = 1;
			return 1;
		}
		/* the window is full (or the widths are known): print what is held */
		if (p->nbuf >= TABLE_WINDOW || p->w)
			table_flush(p);
	} else if (p->fmt == FT_FMT_JSON) {
		json_row(p, ncols, names, values, types);
	} else {
		csv_row(p, ncols, names, values, types);
	}
	p->rows++;
	return 0;
}

/* Returns the row count, or -1 when memory ran out or writing to out failed
 * (the output is then incomplete). */
long long ft_printer_finish(struct ft_printer *p)
{
	long long n;

	if (!p)
		return -1;
	if (p->fmt == FT_FMT_TABLE)
		table_flush(p);
	else if (p->fmt == FT_FMT_JSON)
		fputs(p->rows ? "\n]\n" : "[]\n", p->out);
	n = p->failed || fflush(p->out) || ferror(p->out) ? -1 : p->rows;
	free_rows(p);
	free(p->w);
	free(p->show);
	free(p->cnames);
	for (int i = 0; i < p->ncols; i++)
		free(p->names[i]);
	free(p->names);
	free(p->numeric);
	free(p->buf);
	free(p);
	return n;
}

void ft_printer_scripts(struct ft_printer *p, const char *option)
{
	p->scripts = option;
}
