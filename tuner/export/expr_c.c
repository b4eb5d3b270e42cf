/* expr_c.c - a space expression as a C expression (see expr_c.h).
 *
 * A recursive-descent parser over SQLite's precedence levels, lowest first:
 * OR; AND; NOT (prefix, right-associative); = == != <> IS [NOT], [NOT] IN,
 * [NOT] BETWEEN; < <= > >=; & |; + -; * / %; unary - + ~. Every sub-result is
 * a malloc'd C text; each operator wraps its operands, so the output is fully
 * parenthesised and C's own precedence never matters.
 */
#include "export/expr_c.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char ft_expr_c_helpers[] =
	"/* Checked 64-bit arithmetic with SQLite's verdicts: where SQLite gives NULL\n"
	" * (x / 0, x % 0) or a real (overflow), fatune stops, so *bad is set. */\n"
	"static inline long long fd_add_(int *bad, long long a, long long b)\n{\n"
	"\tif ((b > 0 && a > 0x7fffffffffffffffLL - b) || (b < 0 && a < -0x7fffffffffffffffLL - 1 - b)) {\n"
	"\t\t*bad = 1;\n\t\treturn 0;\n\t}\n\treturn a + b;\n}\n\n"
	"static inline long long fd_sub_(int *bad, long long a, long long b)\n{\n"
	"\tif ((b < 0 && a > 0x7fffffffffffffffLL + b) || (b > 0 && a < -0x7fffffffffffffffLL - 1 + b)) {\n"
	"\t\t*bad = 1;\n\t\treturn 0;\n\t}\n\treturn a - b;\n}\n\n"
	"static inline long long fd_neg_(int *bad, long long a)\n{\n"
	"\treturn fd_sub_(bad, 0, a);\n}\n\n"
	"static inline long long fd_mul_(int *bad, long long a, long long b)\n{\n"
	"\tconst long long mx = 0x7fffffffffffffffLL, mn = -0x7fffffffffffffffLL - 1;\n\n"
	"\tif (a > 0 ? (b > 0 ? a > mx / b : b < mn / a) : (b > 0 ? a < mn / b : (a != 0 && b < mx / a))) {\n"
	"\t\t*bad = 1;\n\t\treturn 0;\n\t}\n\treturn a * b;\n}\n\n"
	"static inline long long fd_div_(int *bad, long long a, long long b)\n{\n"
	"\tif (b == 0 || (b == -1 && a == -0x7fffffffffffffffLL - 1)) {\n"
	"\t\t*bad = 1;\n\t\treturn 0;\n\t}\n\treturn a / b;\n}\n\n"
	"static inline long long fd_mod_(int *bad, long long a, long long b)\n{\n"
	"\tif (b == 0) {\n\t\t*bad = 1;\n\t\treturn 0;\n\t}\n\treturn b == -1 ? 0 : a % b;\n}\n\n"
	"/* ceil_div(a, b): the smallest integer >= a / b */\n"
	"static inline long long fd_ceil_div_(int *bad, long long a, long long b)\n{\n"
	"\tlong long q = fd_div_(bad, a, b);\n\n"
	"\tif (!*bad && a % b != 0 && ((a < 0) == (b < 0)))\n\t\tq++;\n\treturn q;\n}\n\n"
	"static inline long long fd_abs_(int *bad, long long a)\n{\n"
	"\treturn a < 0 ? fd_neg_(bad, a) : a;\n}\n\n"
	"static inline long long fd_min_(long long a, long long b)\n{\n\treturn a < b ? a : b;\n}\n\n"
	"static inline long long fd_max_(long long a, long long b)\n{\n\treturn a > b ? a : b;\n}\n\n"
	"static inline long long fd_is_pow2_(long long a)\n{\n\treturn a > 0 && (a & (a - 1)) == 0;\n}\n";

enum { MAX_ARGS = 16 };

struct parser {
	const char *text;	/* the whole expression, for messages */
	const char *p;		/* the next character */
	const char *const *names;
	int nnames;
	const char *prefix;
	char why[160];		/* the first problem, "" none */
};

/* printf into a malloc'd string; NULL (and p->why) when out of memory. */
static char *fmt(struct parser *ps, const char *f, ...) __attribute__((format(printf, 2, 3)));

static char *fmt(struct parser *ps, const char *f, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, f);
	n = vsnprintf(NULL, 0, f, ap);
	va_end(ap);
	if (n < 0 || !(s = malloc((size_t)n + 1))) {
		if (!ps->why[0])
			snprintf(ps->why, sizeof(ps->why), "out of memory");
		return NULL;
	}
	va_start(ap, f);
	vsnprintf(s, (size_t)n + 1, f, ap);
	va_end(ap);
	return s;
}

static char *fail(struct parser *ps, const char *why)
{
	if (!ps->why[0])
		snprintf(ps->why, sizeof(ps->why), "%s at offset %d", why, (int)(ps->p - ps->text));
	return NULL;
}

static void skip(struct parser *ps)
{
	while (isspace((unsigned char)*ps->p))
		ps->p++;
}

/* Consumes the keyword kw (any case, not followed by a name character). */
static int keyword(struct parser *ps, const char *kw)
{
	size_t n = strlen(kw);

	skip(ps);
	if (strncasecmp(ps->p, kw, n) || isalnum((unsigned char)ps->p[n]) || ps->p[n] == '_')
		return 0;
	ps->p += n;
	return 1;
}

/* Consumes the operator op (exactly those characters, and not the start of a
 * longer operator that begins with them: "<" is not taken from "<=" or "<>"). */
static int op(struct parser *ps, const char *o)
{
	size_t n = strlen(o);

	skip(ps);
	if (strncmp(ps->p, o, n))
		return 0;
	if (n == 1 && strchr("<>=!|", o[0]) && ps->p[1] && strchr("<>=|", ps->p[1]))
		return 0;
	ps->p += n;
	return 1;
}

/* Joins two operands with a helper or an infix operator; frees both. */
static char *bin(struct parser *ps, const char *f, char *a, char *b)
{
	char *r = NULL;

	if (a && b)
		r = f[0] == 'f' ? fmt(ps, "%s(bad, %s, %s)", f, a, b) : fmt(ps, "(long long)((%s) %s (%s))", a, f, b);
	free(a);
	free(b);
	return r;
}

static char *parse_or(struct parser *ps);
static char *parse_bit(struct parser *ps);

static char *parse_name(struct parser *ps)
{
	const char *start = ps->p;
	size_t n = 0;

	while (isalnum((unsigned char)start[n]) || start[n] == '_')
		n++;
	for (int i = 0; i < ps->nnames; i++)
		if (strlen(ps->names[i]) == n && !strncasecmp(ps->names[i], start, n)) {
			ps->p += n;
			return fmt(ps, "%s%s", ps->prefix, ps->names[i]);
		}
	return fail(ps, "unknown name");
}

/* (a, b, ...) after a function name: the arguments, *n of them. */
static int parse_args(struct parser *ps, char **args, int *n)
{
	*n = 0;
	if (!op(ps, "("))
		return fail(ps, "'(' expected"), -1;
	if (op(ps, ")"))
		return 0;
	do {
		if (*n == MAX_ARGS)
			return fail(ps, "too many arguments"), -1;
		if (!(args[(*n)++] = parse_or(ps)))
			return -1;
	} while (op(ps, ","));
	if (!op(ps, ")"))
		return fail(ps, "')' expected"), -1;
	return 0;
}

static char *call(struct parser *ps, const char *fn)
{
	char *args[MAX_ARGS] = { 0 }, *r = NULL;
	int n = 0;

	if (parse_args(ps, args, &n))
		goto out;
	if (!strcasecmp(fn, "iif") && n == 3)
		r = fmt(ps, "((%s) ? (%s) : (%s))", args[0], args[1], args[2]);
	else if (!strcasecmp(fn, "ceil_div") && n == 2)
		r = fmt(ps, "fd_ceil_div_(bad, %s, %s)", args[0], args[1]);
	else if (!strcasecmp(fn, "abs") && n == 1)
		r = fmt(ps, "fd_abs_(bad, %s)", args[0]);
	else if (!strcasecmp(fn, "is_pow2") && n == 1)
		r = fmt(ps, "fd_is_pow2_(%s)", args[0]);
	else if ((!strcasecmp(fn, "min") || !strcasecmp(fn, "max")) && n >= 2) {
		/* SQLite's scalar min/max: folded pairwise */
		r = args[0];
		args[0] = NULL;
		for (int i = 1; i < n && r; i++) {
			char *t = fmt(ps, "fd_%s_(%s, %s)", tolower((unsigned char)fn[1]) == 'i' ? "min" : "max", r, args[i]);
			free(r);
			r = t;
		}
	} else
		fail(ps, "function or argument count outside the language");
out:
	for (int i = 0; i < MAX_ARGS; i++)
		free(args[i]);
	return r;
}

/* CASE [base] WHEN a THEN b ... [ELSE c] END; no ELSE is SQL's NULL: bad. */
static char *parse_case(struct parser *ps)
{
	char *base = NULL, *r = NULL, *w, *t;
	char *arms[MAX_ARGS * 2];
	int n = 0;

	if (!keyword(ps, "WHEN") && !(base = parse_or(ps)))
		return NULL;
	if (base && !keyword(ps, "WHEN"))
		return free(base), fail(ps, "WHEN expected");
	do {
		if (n == MAX_ARGS * 2 || !(w = parse_or(ps)))
			goto out;
		arms[n++] = w;
		if (!keyword(ps, "THEN"))
			return fail(ps, "THEN expected"), NULL;
		if (!(t = parse_or(ps)))
			goto out;
		arms[n++] = t;
	} while (keyword(ps, "WHEN"));
	r = keyword(ps, "ELSE") ? parse_or(ps) : fmt(ps, "(*bad = 1, 0LL)");
	if (r && !keyword(ps, "END")) {
		free(r);
		r = fail(ps, "END expected");
	}
	for (int i = n - 2; i >= 0 && r; i -= 2) {
		char *nr = base ? fmt(ps, "((%s) == (%s) ? (%s) : (%s))", base, arms[i], arms[i + 1], r)
				: fmt(ps, "((%s) ? (%s) : (%s))", arms[i], arms[i + 1], r);
		free(r);
		r = nr;
	}
out:
	for (int i = 0; i < n; i++)
		free(arms[i]);
	free(base);
	return r;
}

static char *parse_primary(struct parser *ps)
{
	skip(ps);
	if (isdigit((unsigned char)*ps->p)) {
		char *end;
		long long v;

		errno = 0;
		v = strtoll(ps->p, &end, 10);
		if (errno || isalnum((unsigned char)*end) || *end == '_')
			return fail(ps, "integer outside the language (decimal, 64-bit)");
		ps->p = end;
		return fmt(ps, "%lldLL", v);
	}
	if (op(ps, "(")) {
		char *r = parse_or(ps);

		if (r && !op(ps, ")")) {
			free(r);
			return fail(ps, "')' expected");
		}
		return r;
	}
	if (keyword(ps, "CASE"))
		return parse_case(ps);
	if (isalpha((unsigned char)*ps->p) || *ps->p == '_') {
		const char *start = ps->p;
		size_t n = 0;
		char fn[16];

		while (isalnum((unsigned char)start[n]) || start[n] == '_')
			n++;
		skip(ps);
		if (n < sizeof(fn)) {
			const char *after = start + n;

			while (isspace((unsigned char)*after))
				after++;
			if (*after == '(') {
				memcpy(fn, start, n);
				fn[n] = '\0';
				ps->p = after;
				return call(ps, fn);
			}
		}
		return parse_name(ps);
	}
	return fail(ps, "operand expected");
}

static char *parse_unary(struct parser *ps)
{
	char *a;

	if (op(ps, "-"))
		return (a = parse_unary(ps)) ? bin(ps, "fd_sub_", fmt(ps, "0LL"), a) : NULL;
	if (op(ps, "+"))
		return parse_unary(ps);
	if (op(ps, "~")) {
		char *r = (a = parse_unary(ps)) ? fmt(ps, "(~(%s))", a) : NULL;

		free(a);
		return r;
	}
	return parse_primary(ps);
}

static char *parse_mul(struct parser *ps)
{
	char *a = parse_unary(ps);

	while (a) {
		const char *f = op(ps, "*") ? "fd_mul_" : op(ps, "/") ? "fd_div_" : op(ps, "%") ? "fd_mod_" : NULL;

		if (!f)
			break;
		a = bin(ps, f, a, parse_unary(ps));
	}
	return a;
}

static char *parse_add(struct parser *ps)
{
	char *a = parse_mul(ps);

	while (a) {
		const char *f = op(ps, "+") ? "fd_add_" : op(ps, "-") ? "fd_sub_" : NULL;

		if (!f)
			break;
		a = bin(ps, f, a, parse_mul(ps));
	}
	return a;
}

static char *parse_bit(struct parser *ps)
{
	char *a = parse_add(ps);

	while (a) {
		skip(ps);
		if (!strncmp(ps->p, "<<", 2) || !strncmp(ps->p, ">>", 2) || !strncmp(ps->p, "||", 2)) {
			free(a);
			return fail(ps, "shifts and || are outside the language");
		}
		const char *f = op(ps, "&") ? "&" : op(ps, "|") ? "|" : NULL;

		if (!f)
			break;
		a = bin(ps, f, a, parse_add(ps));
	}
	return a;
}

static char *parse_rel(struct parser *ps)
{
	char *a = parse_bit(ps);

	while (a) {
		const char *f = op(ps, "<=") ? "<=" : op(ps, ">=") ? ">=" : op(ps, "<") ? "<" : op(ps, ">") ? ">" : NULL;

		if (!f)
			break;
		a = bin(ps, f, a, parse_bit(ps));
	}
	return a;
}

/* [NOT] IN (list) after a: frees a. */
static char *parse_in(struct parser *ps, char *a, int negate)
{
	char *args[MAX_ARGS] = { 0 }, *r = NULL;
	int n = 0;

	if (!parse_args(ps, args, &n) && n >= 1) {
		r = fmt(ps, "0");
		for (int i = 0; i < n && r; i++) {
			char *t = fmt(ps, "%s || (%s) == (%s)", r, a, args[i]);

			free(r);
			r = t;
		}
		if (r) {
			char *t = fmt(ps, "(long long)(%s(%s))", negate ? "!" : "", r);

			free(r);
			r = t;
		}
	} else if (!ps->why[0])
		fail(ps, "empty IN list");
	for (int i = 0; i < MAX_ARGS; i++)
		free(args[i]);
	free(a);
	return r;
}

static char *parse_eq(struct parser *ps)
{
	char *a = parse_rel(ps);

	while (a) {
		const char *save = ps->p;
		int negate = keyword(ps, "NOT");

		if (keyword(ps, "IN")) {
			a = parse_in(ps, a, negate);
			continue;
		}
		if (keyword(ps, "BETWEEN")) {
			char *lo = parse_rel(ps), *hi = NULL, *r = NULL;

			if (lo && !keyword(ps, "AND"))
				fail(ps, "AND expected after BETWEEN");
			else if (lo && (hi = parse_rel(ps)))
				r = fmt(ps, "(long long)(%s((%s) >= (%s) && (%s) <= (%s)))", negate ? "!" : "", a, lo, a, hi);
			free(lo);
			free(hi);
			free(a);
			a = r;
			continue;
		}
		if (negate) {
			ps->p = save;	/* a NOT that starts no IN/BETWEEN is not ours */
			break;
		}
		if (keyword(ps, "IS")) {
			int not_ = keyword(ps, "NOT");

			a = bin(ps, not_ ? "!=" : "==", a, parse_rel(ps));
			continue;
		}
		const char *f = op(ps, "==") ? "==" : op(ps, "=") ? "==" : op(ps, "!=") ? "!=" : op(ps, "<>") ? "!=" : NULL;

		if (!f)
			break;
		a = bin(ps, f, a, parse_rel(ps));
	}
	return a;
}

static char *parse_not(struct parser *ps)
{
	if (keyword(ps, "NOT")) {
		char *a = parse_not(ps), *r = a ? fmt(ps, "(long long)(!(%s))", a) : NULL;

		free(a);
		return r;
	}
	return parse_eq(ps);
}

static char *parse_and(struct parser *ps)
{
	char *a = parse_not(ps);

	while (a && keyword(ps, "AND"))
		a = bin(ps, "&&", a, parse_not(ps));
	return a;
}

static char *parse_or(struct parser *ps)
{
	char *a = parse_and(ps);

	while (a && keyword(ps, "OR"))
		a = bin(ps, "||", a, parse_and(ps));
	return a;
}

int ft_expr_to_c(const char *text, const char *const *names, int nnames, const char *var_prefix,
		 char *out, size_t size, struct ft_err *err)
{
	struct parser ps = { text, text, names, nnames, var_prefix, "" };
	char *r = parse_or(&ps);

	skip(&ps);
	if (r && *ps.p) {
		free(r);
		r = fail(&ps, "unexpected text");
	}
	if (r && strlen(r) >= size) {
		free(r);
		r = NULL;
		snprintf(ps.why, sizeof(ps.why), "its C form is longer than %zu bytes", size);
	}
	if (!r)
		return ft_error(err, FT_EINPUT, "cannot translate '%.200s' into C: %s", text,
				ps.why[0] ? ps.why : "malformed");
	memcpy(out, r, strlen(r) + 1);
	free(r);
	return 0;
}
