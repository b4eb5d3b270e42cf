/* report_html.c - the report as one self-contained HTML file (see report.h).
 *
 * Inline CSS and SVG only: no script, no font, no image or style sheet is
 * fetched, so the file reads the same offline, from a mail attachment or a CI
 * artifact. Hover texts are SVG <title> elements, which browsers show
 * without script. Every text that comes from the database (shapes, configs,
 * reasons, device and space names) goes through html() before it is written:
 * the database is user input. The output has no clock in it: the same
 * database gives the same bytes.
 *
 * The heatmap of a search puts one parameter on the rows and one on the
 * columns; a cell holds the fastest verified config with those two values
 * (the other parameters free), coloured on a log scale from green (the
 * search's fastest) through yellow to red (its slowest cell). A cell with no
 * verified config names the furthest status any of its configs reached (blue
 * "untimed" for compiled ones: an untimed search shows its feasible region;
 * hatched grey for rejections and failures); the legend under it gives each status's most common reason.
 */
#include "export/report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

/* Cell size and margins of the heatmap, in CSS pixels: wide enough for
 * "123.45" in 12 px text, tall enough for one line. */
#define CELL_W 76
#define CELL_H 30
#define LEFT_MIN 80	/* the row labels' column, widened for a long parameter name */
#define TOP 58
#define AXIS_MAX 64

/* Writes s with &, <, >, " and ' escaped (control characters dropped). */
static void html(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '&')
			fputs("&amp;", out);
		else if (c == '<')
			fputs("&lt;", out);
		else if (c == '>')
			fputs("&gt;", out);
		else if (c == '"')
			fputs("&quot;", out);
		else if (c == '\'')
			fputs("&#39;", out);
		else if (c >= 0x20 && c != 0x7f)
			fputc(c, out);
		else if (c == '\n' || c == '\t')
			fputc(' ', out);
	}
}

/* Short names of the statuses, as cells show them. */
static const char *short_status(enum ft_status s)
{
	static const char *const names[FT_ST_COUNT] = { "constraint", "smem", "compile", "spills", "untimed",
							 "ok", "wrong", "crashed", "timeout",
							 "unrecorded", "accepted", "cut" };

	return (int)s >= 0 && s < FT_ST_COUNT ? names[s] : "?";
}

static double tflops(const struct ft_report_shape *s, double us)
{
	return isfinite(us) && us > 0 ? ft_shape_flops(&s->shape) / (us * 1e-6) / 1e12 : NAN;
}

static void shape_title(FILE *out, const struct ft_report_shape *s)
{
	char shape[FT_SHAPE_TEXT_MAX];

	html(out, ft_shape_format(&s->shape, shape, sizeof(shape)));
	fprintf(out, " %s%s", ft_dtype_name(s->shape.dtype), s->shape.causal ? " causal" : "");
}

static void target(FILE *out, const struct ft_report_shape *s)
{
	html(out, s->arch);
	if (s->device[0]) {
		fputs(s->replayed ? " replayed from a recording on " : " on ", out);
		html(out, s->device);
		if (s->replayed)
			fputs(" (not measured)", out);
	} else {
		fputs(" (no GPU: not timed)", out);
	}
}

/* The search's shape, target and space, each after its markup in m[0..2],
 * then m[3]. */
static void describe(FILE *out, const struct ft_report_shape *s, const char *const m[4])
{
	fputs(m[0], out);
	shape_title(out, s);
	fputs(m[1], out);
	target(out, s);
	fputs(m[2], out);
	html(out, s->space);
	fputs(m[3], out);
}

static void us_cell(FILE *out, double v, const char *fmt)
{
	if (isfinite(v))
		fprintf(out, fmt, v);
	else
		fputs("<td class=n>&mdash;</td>", out);
}

/* ---- the campaign table -------------------------------------------------- */

static void campaign_table(FILE *out, const struct ft_report *r)
{
	fputs("<h2>Every search</h2>\n<table>\n<tr><th>shape</th><th>target</th><th>space</th>"
	      "<th class=n>best &micro;s</th><th class=n>TFLOP/s</th><th class=n>verified</th>"
	      "<th class=n>rejected</th><th>best config</th><th>campaign</th></tr>\n", out);
	for (int g = 0; g < r->n; g++) {
		const struct ft_report_shape *s = &r->s[g];
		int rejected = s->status_count[FT_ST_REJECTED_CONSTRAINT] + s->status_count[FT_ST_REJECTED_SMEM];

		static const char *const m[4] = { "\">", "</a></td><td>", "</td><td>", "</td>" };

		fprintf(out, "<tr><td><a href=\"#s%d", g + 1);
		describe(out, s, m);
		us_cell(out, s->nok ? s->t[0].t_median_us : NAN, "<td class=n>%.2f</td>");
		us_cell(out, s->nok ? tflops(s, s->t[0].t_median_us) : NAN, "<td class=n>%.1f</td>");
		fprintf(out, "<td class=n>%d of %d</td><td class=n>%d</td><td><code>", s->nok, s->nt, rejected);
		html(out, s->nok ? s->t[0].config : "");
		fputs("</code></td><td>", out);
		html(out, s->campaign);
		fputs("</td></tr>\n", out);
	}
	fputs("</table>\n<p class=muted>TFLOP/s counts 4&middot;B&middot;H&middot;S&middot;S<sub>kv</sub>&middot;D "
	      "(the unmasked part when causal) over the median latency. Peers: none recorded in the tuning "
	      "database (docs/perf.md measures them next to fatune with bench/peers.py).</p>\n", out);
}

/* ---- one search ------------------------------------------------------------ */

static void top_configs(FILE *out, const struct ft_report_shape *s)
{
	static const char *const rank[] = { "best", "runner-up" };

	if (!s->nok) {
		fputs("<p>No verified config: nothing was timed for this search (no GPU of its arch, "
		      "or every candidate failed).</p>\n", out);
		return;
	}
	fputs("<table>\n<tr><th></th><th class=n>median &micro;s</th><th class=n>min &micro;s</th>"
	      "<th class=n>TFLOP/s</th><th class=n>rel. error</th><th>config</th></tr>\n", out);
	for (int i = 0; i < 2 && i < s->nok; i++) {
		const struct ft_report_trial *t = &s->t[i];

		fprintf(out, "<tr><td>%s</td>", rank[i]);
		us_cell(out, t->t_median_us, "<td class=n>%.2f</td>");
		us_cell(out, t->t_min_us, "<td class=n>%.2f</td>");
		us_cell(out, tflops(s, t->t_median_us), "<td class=n>%.1f</td>");
		us_cell(out, t->rel_err, "<td class=n>%.1e</td>");
		fputs("<td><code>", out);
		html(out, t->config);
		fputs("</code></td></tr>\n", out);
	}
	fputs("</table>\n", out);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The sorted distinct values of parameter p (one 0 when p < 0). */
static int axis_values(const struct ft_report_shape *s, int p, int *v)
{
	int n = 0;

	if (p < 0) {
		v[0] = 0;
		return 1;
	}
	for (int i = 0; i < s->nt; i++) {
		int k = 0;

		while (k < n && v[k] != s->t[i].vals[p])
			k++;
		if (k == n && n < AXIS_MAX)
			v[n++] = s->t[i].vals[p];
	}
	qsort(v, (size_t)n, sizeof(*v), cmp_int);
	return n;
}

struct cell {
	double best;			/* fastest ok median, NAN none */
	int count[FT_ST_COUNT];
	int top;			/* index of its fastest ok trial, -1 none */
};

/* green (fast) - yellow - red (slow) at x in [0, 1] */
static void ramp(double x, int rgb[3])
{
	static const int stops[3][3] = { { 26, 152, 80 }, { 254, 224, 139 }, { 215, 48, 39 } };
	int i = x < 0.5 ? 0 : 1;
	double f = x < 0.5 ? x * 2 : (x - 0.5) * 2;

	for (int k = 0; k < 3; k++)
		rgb[k] = (int)lround(stops[i][k] + f * (stops[i + 1][k] - stops[i][k]));
}

static void cell_text(FILE *out, int x, int y, const char *fill, const char *text)
{
	fprintf(out, "<text x=\"%d\" y=\"%d\" fill=\"%s\">%s</text>\n", x + CELL_W / 2, y + CELL_H / 2 + 4, fill, text);
}

static void axis_label(FILE *out, const struct ft_report_shape *s, int p, int v)
{
	if (p < 0)
		return;
	html(out, s->params[p]);
	fprintf(out, "=%d", v);
}

/* How far down the pipeline a status got: the model's rejections first, then
 * the compiler's, then the GPU's verdicts, and "compiled" (feasible, never
 * timed: no GPU of the arch) furthest, so an untimed search's cells show its
 * feasible region. */
static int progress(enum ft_status st)
{
	switch (st) {
	case FT_ST_REJECTED_CONSTRAINT:
		return 0;
	case FT_ST_REJECTED_SMEM:
		return 1;
	case FT_ST_COMPILE_FAILED:
		return 2;
	case FT_ST_SPILLS:
		return 3;
	case FT_ST_COMPILED:
	case FT_ST_NOT_IN_RECORDING:	/* compiled; a replay had no result for it */
		return 5;
	default:
		return 4;	/* ran on a GPU: wrong_result, crashed, timeout */
	}
}

/* The status a cell with no verified config shows: the furthest any of its
 * configs got (the most frequent among equals), not the majority, which in
 * a space mostly cut by constraints would hide every feasible config. */
static enum ft_status furthest(const struct cell *c)
{
	enum ft_status best = FT_ST_REJECTED_CONSTRAINT;

	for (int k = 0; k < FT_ST_COUNT; k++) {
		enum ft_status st = (enum ft_status)k;
		if (st == FT_ST_OK || !c->count[k])
			continue;
		if (!c->count[best] || progress(st) > progress(best) ||
		    (progress(st) == progress(best) && c->count[k] > c->count[best]))
			best = st;
	}
	return best;
}

static void draw_cell(FILE *out, const struct ft_report_shape *s, const struct cell *c, int x, int y, double lo,
		      double hi, int rv, int cv)
{
	char num[32];
	int total = 0;

	for (int k = 0; k < FT_ST_COUNT; k++)
		total += c->count[k];
	fputs("<g><title>", out);
	axis_label(out, s, s->row_param, rv);
	fputs(s->row_param >= 0 ? " " : "", out);
	axis_label(out, s, s->col_param, cv);
	fprintf(out, ": %d config%s", total, total == 1 ? "" : "s");
	for (int k = 0; k < FT_ST_COUNT; k++)
		if (c->count[k])
			fprintf(out, ", %d %s", c->count[k], ft_status_name((enum ft_status)k));
	if (c->top >= 0) {
		fprintf(out, "; fastest %.2f us: ", c->best);
		html(out, s->t[c->top].config);
	}
	fputs("</title>\n", out);
	if (!total) {
		fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fff\" stroke=\"#ddd\"/>\n", x, y,
			CELL_W, CELL_H);
		cell_text(out, x, y, "#bbb", "none");
	} else if (c->top >= 0) {
		int rgb[3];
		double f = hi > lo ? (log(c->best) - log(lo)) / (log(hi) - log(lo)) : 0;

		ramp(f, rgb);
		fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"rgb(%d,%d,%d)\" stroke=\"#fff\"/>\n",
			x, y, CELL_W, CELL_H, rgb[0], rgb[1], rgb[2]);
		snprintf(num, sizeof(num), "%.2f", c->best);
		cell_text(out, x, y, f < 0.2 || f > 0.85 ? "#fff" : "#222", num);
	} else {
		enum ft_status st = furthest(c);

		fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" stroke=\"#fff\"/>\n", x, y,
			CELL_W, CELL_H, progress(st) == 5 ? "#c6dbef" : "url(#hatch)");
		cell_text(out, x, y, "#333", short_status(st));
	}
	fputs("</g>\n", out);
}

static int same_cell(const struct ft_report_shape *s, const struct ft_report_trial *a, const struct ft_report_trial *b)
{
	return a->vals[s->col_param] == b->vals[s->col_param] &&
	       (s->row_param < 0 || a->vals[s->row_param] == b->vals[s->row_param]);
}

/* Outlines the cell of trial t (best: solid, runner-up: dashed). */
static void mark(FILE *out, const struct ft_report_shape *s, int left, const int *rows, int nr, const int *cols,
		 int nc, const struct ft_report_trial *t, const char *dash)
{
	int r = 0, c = 0;

	while (s->row_param >= 0 && r < nr && rows[r] != t->vals[s->row_param])
		r++;
	while (c < nc && cols[c] != t->vals[s->col_param])
		c++;
	if (r < nr && c < nc)
		fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#000\" stroke-width=\"3\"%s/>\n",
			left + c * CELL_W + 1, TOP + r * CELL_H + 1, CELL_W - 2, CELL_H - 2, dash);
}

static void heatmap(FILE *out, const struct ft_report_shape *s)
{
	int rows[AXIS_MAX], cols[AXIS_MAX], nr, nc, w, h, left = LEFT_MIN;
	double lo = INFINITY, hi = -INFINITY;
	struct cell *cells;

	if (s->col_param < 0 || !s->nt) {
		fputs("<p class=muted>No heatmap: the configs of this search have no parameter that varies.</p>\n", out);
		return;
	}
	nr = axis_values(s, s->row_param, rows);
	nc = axis_values(s, s->col_param, cols);
	cells = calloc((size_t)(nr * nc), sizeof(*cells));
	if (!cells)
		return;
	for (int i = 0; i < nr * nc; i++)
		cells[i] = (struct cell){ NAN, { 0 }, -1 };
	for (int i = 0; i < s->nt; i++) {
		const struct ft_report_trial *t = &s->t[i];
		int r = 0, c = 0;
		struct cell *cl;

		while (s->row_param >= 0 && r < nr && rows[r] != t->vals[s->row_param])
			r++;
		while (c < nc && cols[c] != t->vals[s->col_param])
			c++;
		if (r == nr || c == nc)
			continue;
		cl = &cells[r * nc + c];
		cl->count[t->status]++;
		if (i < s->nok && cl->top < 0) {	/* ranked: the first ok one is the fastest */
			cl->top = i;
			cl->best = t->t_median_us;
			lo = fmin(lo, t->t_median_us);
			hi = fmax(hi, t->t_median_us);
		}
	}
	/* 12 px bold sans: at most ~8 px a character, plus the arrow */
	if (s->row_param >= 0 && (int)strlen(s->params[s->row_param]) * 8 + 40 > left)
		left = (int)strlen(s->params[s->row_param]) * 8 + 40;
	w = left + nc * CELL_W + 20;
	if (w < left + 660)
		w = left + 660;	/* room for the colour scale and its note */
	h = TOP + nr * CELL_H + (s->nok ? 60 : 10);	/* the colour scale, when there is one */
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"font-family=\"sans-serif\" font-size=\"12\" text-anchor=\"middle\">\n", w, h, w, h);
	fputs("<defs><pattern id=\"hatch\" width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\" "
	      "patternTransform=\"rotate(45)\"><rect width=\"8\" height=\"8\" fill=\"#e6e6e6\"/>"
	      "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"8\" stroke=\"#bdbdbd\" stroke-width=\"3\"/></pattern>"
	      "<linearGradient id=\"ramp\"><stop offset=\"0\" stop-color=\"rgb(26,152,80)\"/>"
	      "<stop offset=\"0.5\" stop-color=\"rgb(254,224,139)\"/><stop offset=\"1\" stop-color=\"rgb(215,48,39)\"/>"
	      "</linearGradient></defs>\n", out);
	fprintf(out, "<text x=\"%d\" y=\"16\" font-weight=\"bold\">", left + nc * CELL_W / 2);
	html(out, s->params[s->col_param]);
	fputs("</text>\n", out);
	for (int c = 0; c < nc; c++)
		fprintf(out, "<text x=\"%d\" y=\"%d\">%d</text>\n", left + c * CELL_W + CELL_W / 2, TOP - 10, cols[c]);
	if (s->row_param >= 0) {	/* the row parameter's name heads the row labels */
		fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-weight=\"bold\">", left - 10, TOP - 10);
		html(out, s->params[s->row_param]);
		fputs(" \xe2\x86\x93</text>\n", out);
	}
	for (int r = 0; r < nr; r++) {
		fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 10, TOP + r * CELL_H + CELL_H / 2 + 4);
		if (s->row_param >= 0)
			fprintf(out, "%d", rows[r]);
		else
			fputs("all", out);
		fputs("</text>\n", out);
		for (int c = 0; c < nc; c++)
			draw_cell(out, s, &cells[r * nc + c], left + c * CELL_W, TOP + r * CELL_H, lo, hi, rows[r], cols[c]);
	}
	if (s->nok)
		mark(out, s, left, rows, nr, cols, nc, &s->t[0], "");
	if (s->nok > 1 && !same_cell(s, &s->t[0], &s->t[1]))
		mark(out, s, left, rows, nr, cols, nc, &s->t[1], " stroke-dasharray=\"6 4\"");
	if (s->nok) {	/* the colour scale */
		int y = TOP + nr * CELL_H + 22;

		fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"200\" height=\"12\" fill=\"url(#ramp)\"/>\n", left, y);
		fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"start\">%.2f &#181;s (fastest)</text>\n", left, y + 28, lo);
		fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.2f &#181;s</text>\n", left + 200, y + 28, hi);
		fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"start\">solid frame: the best config's cell, dashed: "
			"the runner-up's%s</text>\n", left + 220, y + 10,
			s->nok > 1 && same_cell(s, &s->t[0], &s->t[1]) ? " (the same)" : "");
	}
	fputs("</svg>\n", out);
	free(cells);
}

/* The trials being sorted by by_status_reason (qsort passes no context;
 * the report is written from one thread). */
static const struct ft_report_trial *sort_trials;

/* indexes into sort_trials by status, then reason */
static int by_status_reason(const void *pa, const void *pb)
{
	const struct ft_report_trial *a = &sort_trials[*(const int *)pa], *b = &sort_trials[*(const int *)pb];

	if (a->status != b->status)
		return (int)a->status - (int)b->status;
	return strcmp(a->reason, b->reason);
}

/* Per status that is not ok: its count and its most common reason. */
static void reasons(FILE *out, const struct ft_report_shape *s)
{
	int *idx = malloc((size_t)(s->nt ? s->nt : 1) * sizeof(*idx));
	int i = 0, any = 0;

	if (!idx)
		return;
	for (int k = 0; k < s->nt; k++)
		idx[k] = k;
	sort_trials = s->t;
	qsort(idx, (size_t)s->nt, sizeof(*idx), by_status_reason);
	while (i < s->nt) {
		enum ft_status st = s->t[idx[i]].status;
		int end = i, top = i, topn = 0;

		while (end < s->nt && s->t[idx[end]].status == st) {
			int run = end;

			while (run < s->nt && s->t[idx[run]].status == st &&
			       !strcmp(s->t[idx[run]].reason, s->t[idx[end]].reason))
				run++;
			if (run - end > topn)
				topn = run - end, top = end;
			end = run;
		}
		if (st != FT_ST_OK) {
			fprintf(out, "%s<li><b>%s</b> (%s): %d config%s; most often (%d): ", any ? "" : "<ul class=reasons>\n",
				short_status(st), ft_status_name(st), end - i, end - i == 1 ? "" : "s", topn);
			html(out, s->t[idx[top]].reason[0] ? s->t[idx[top]].reason : "no reason recorded");
			fputs("</li>\n", out);
			any = 1;
		}
		i = end;
	}
	if (any)
		fputs("</ul>\n", out);
	free(idx);
}

static void shape_section(FILE *out, const struct ft_report_shape *s, int g)
{
	static const char *const m[4] = { "\">\n<h2>", "</h2>\n<p>", ", space <b>", "</b>" };

	fprintf(out, "<section id=\"s%d", g + 1);
	describe(out, s, m);
	fprintf(out, ": %d config%s, %d verified and timed.", s->nt, s->nt == 1 ? "" : "s", s->nok);
	if (s->campaign[0]) {
		fputs(" Campaign <b>", out);
		html(out, s->campaign);
		fputs("</b>.", out);
	}
	fputs("</p>\n", out);
	top_configs(out, s);
	if (s->col_param >= 0) {
		fputs("<p class=muted>Fastest verified config per cell (the other parameters free); no config verified: "
		      "the furthest any of the cell's configs got (blue: compiled, not timed; hatched: rejected or "
		      "failed).</p>\n", out);
	}
	heatmap(out, s);
	reasons(out, s);
	fputs("</section>\n", out);
}

int ft_report_html(FILE *out, const struct ft_report *r, struct ft_err *err)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<!-- generated by fatune report: do not edit -->\n<title>fatune report</title>\n<style>\n"
	      "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px auto;max-width:1280px;"
	      "padding:0 16px;color:#222;background:#fff}\n"
	      "h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:32px 0 8px;padding-top:12px;"
	      "border-top:2px solid #444}\n"
	      "table{border-collapse:collapse;font-size:13px;margin:8px 0}th,td{padding:4px 10px;"
	      "border-bottom:1px solid #ddd;text-align:left;vertical-align:top}th{background:#f3f3f3}\n"
	      "th.n,td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}code{font-size:12px;word-break:break-all}\n"
	      ".muted{color:#666;font-size:13px}ul.reasons{font-size:13px;color:#333}a{color:#0b57d0}\n"
	      "svg{display:block;margin:8px 0}td:first-child{white-space:nowrap}\n</style>\n</head>\n<body>\n<h1>fatune report</h1>\n"
	      "<p class=muted>Tuning database <code>", out);
	html(out, r->db_path);
	fprintf(out, "</code>: %d search%s. Written by fatune %s.</p>\n", r->n, r->n == 1 ? "" : "es", FATUNE_VERSION);
	campaign_table(out, r);
	for (int g = 0; g < r->n; g++)
		shape_section(out, &r->s[g], g);
	fputs("</body>\n</html>\n", out);
	if (fflush(out) || ferror(out))
		return ft_error(err, FT_EFAIL, "cannot write the report: %s: check the disk and the output path",
				strerror(errno));
	return 0;
}
