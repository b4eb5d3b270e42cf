/* cmd_check.c - `fatune check`: a space's candidates, accepted or rejected with the reason.
 *
 * GPU-free. By default only the model check runs (constraints, threads, grid,
 * shared memory against the arch's static or opt-in limit), so nothing is
 * compiled; --compile also compiles the survivors with NVRTC (through the
 * cache) and applies the compiled check (real smem, registers, spills).
 * The table lists the candidates that pass the model check (and, with
 * --compile, what compiling made of them); those rejected before are counted
 * per reason in one line (--all lists every candidate).
 * Nothing is written to the tuning database.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/interrupt.h"
#include "compile/cache.h"
#include "compile/feasibility.h"
#include "space/candidate.h"
#include "cmd/cmd.h"
#include "ui/format.h"
#include "search/pipeline.h"
#include "cmd/target.h"

/* Distinct reasons counted for the one-line summary of unlisted rejections. */
#define CHECK_REASONS 48

struct check_ctx {
	struct ft_printer *pr;
	int compile;
	int all;			/* --all: list the model's rejections too */
	long long counts[FT_ST_COUNT];
	FILE *logs;			/* --log: every compile log, printed after the table */
	long long unlisted;		/* rejections before compiling left out of the table */
	int nreasons;
	char reasons[CHECK_REASONS][160];	/* their reasons, without the file:line */
	long long reason_count[CHECK_REASONS];
};

/* Counts a rejection left out of the table under its reason ("constraint
 * 'X'", "derived parameter 'X'", "shared memory over the limit", else its
 * status; past CHECK_REASONS
 * distinct ones, the last slot takes the rest). */
static void count_unlisted(struct check_ctx *c, const struct ft_trial *t)
{
	char key[160];
	size_t n;
	int i;

	c->unlisted++;
	if (t->status == FT_ST_REJECTED_CONSTRAINT && !strncmp(t->reason, "constraint '", 12)) {
		n = 12 + strcspn(t->reason + 12, "'");	/* "constraint 'NAME'" */
		snprintf(key, sizeof(key), "%.*s'", (int)n, t->reason);
	} else if (t->status == FT_ST_REJECTED_CONSTRAINT && !strncmp(t->reason, "derived parameter '", 19)) {
		n = 19 + strcspn(t->reason + 19, "'");	/* "derived parameter 'NAME'" */
		snprintf(key, sizeof(key), "%.*s'", (int)n, t->reason);
	} else if (t->status == FT_ST_REJECTED_SMEM) {
		snprintf(key, sizeof(key), "shared memory over the limit");
	} else {
		snprintf(key, sizeof(key), "%s", ft_status_name(t->status));
	}
	for (i = 0; i < c->nreasons && strcmp(c->reasons[i], key); i++)
		;
	if (i == c->nreasons) {
		if (c->nreasons == CHECK_REASONS)
			i = CHECK_REASONS - 1;	/* the last slot takes the rest */
		else
			snprintf(c->reasons[c->nreasons++], sizeof(c->reasons[0]), "%s", key);
	}
	c->reason_count[i]++;
}

/* "check: N rejected before compiling are not listed (--all lists them):
 * COUNT REASON, ..." on stderr, the most frequent first. */
static void print_unlisted(struct check_ctx *c)
{
	int order[CHECK_REASONS];

	if (!c->unlisted)
		return;
	for (int i = 0; i < c->nreasons; i++)
		order[i] = i;
	for (int i = 1; i < c->nreasons; i++)
		for (int j = i; j > 0 && c->reason_count[order[j]] > c->reason_count[order[j - 1]]; j--) {
			int tmp = order[j];
			order[j] = order[j - 1];
			order[j - 1] = tmp;
		}
	fprintf(stderr, "check: %lld rejected before compiling are not listed (--all lists them):", c->unlisted);
	for (int i = 0; i < c->nreasons; i++)
		fprintf(stderr, "%s %lld %s", i ? "," : "", c->reason_count[order[i]], c->reasons[order[i]]);
	fprintf(stderr, "\n");
}

/* The columns a default check table shows; the compile ones only with --compile. */
static const char *const check_cols[] = { "config", "status", "reason", "regs", "spill_bytes",
					  NULL };

static int check_row(void *ctx, struct ft_trial *t)
{
	struct check_ctx *c = ctx;
	char grid[96], smem_model[32], threads[32], regs[16], smem_static[16], spills[32], ms[32];
	const char *status = ft_status_name(t->status);	/* "accepted" without --compile */
	int compiled = t->stage >= FT_STAGE_COMPILED && t->res.regs >= 0;
	const char *names[] = { "config", "status", "reason", "smem_model", "threads", "grid",
				"regs", "smem_static", "spill_bytes", "compile_ms" };
	const char *values[10];
	int types[] = { 3, 3, 3, 1, 1, 3, 1, 1, 1, 2 };

	c->counts[t->status]++;
	if (!c->all && t->stage < FT_STAGE_COMPILED && t->status != FT_ST_ACCEPTED) {
		count_unlisted(c, t);
		return 0;
	}
	if (c->logs && t->log && t->log[0])
		fprintf(c->logs, "== %s: %s\n%s%s", t->config, status, t->log,
			t->log[strlen(t->log) - 1] == '\n' ? "" : "\n");
	snprintf(grid, sizeof(grid), "%lldx%lldx%lld", t->grid[0], t->grid[1], t->grid[2]);
	snprintf(smem_model, sizeof(smem_model), "%lld", t->smem_model);
	snprintf(threads, sizeof(threads), "%lld", t->threads);
	snprintf(regs, sizeof(regs), "%d", t->res.regs);
	snprintf(smem_static, sizeof(smem_static), "%d", t->res.smem_static);
	snprintf(spills, sizeof(spills), "%d", t->res.spill_stores + t->res.spill_loads);
	snprintf(ms, sizeof(ms), "%.1f", t->compile_ms);
	values[0] = t->config;
	values[1] = status;
	values[2] = t->reason[0] ? t->reason : NULL;
	values[3] = smem_model;
	values[4] = threads;
	values[5] = grid;
	values[6] = compiled ? regs : NULL;
	values[7] = compiled ? smem_static : NULL;
	values[8] = compiled ? spills : NULL;
	values[9] = compiled && t->compile_ms == t->compile_ms ? ms : NULL;
	ft_printer_row(c->pr, c->compile ? 10 : 6, names, values, types);
	return 0;
}

/* One config at one shape, as the search would judge it before compiling:
 * 1 accepted (its launch in reason), 0 rejected (why in reason), -1 error. */
static int check_one(const struct ft_space *sp, const struct ft_arch *a, const struct ft_shape *sh,
		     const char *config, char *reason, size_t size, struct ft_err *err)
{
	long long values[FT_MAX_PARAMS];
	struct ft_candidate c;
	struct ft_trial *t;
	int ok;

	if (ft_space_unfit(sp, a, sh, reason, size))
		return 0;
	if (ft_config_parse(sp, config, values, err) || ft_candidate_eval(sp, sh, a, values, &c, err))
		return -1;
	if (!(t = calloc(1, sizeof(*t))))
		return ft_error(err, FT_EFAIL, "out of memory");
	ok = ft_feasible_model(sp, a, &c, t);
	snprintf(reason, size, "%s", t->reason);
	if (ok) {	/* the launch the worker would make (candidate.h) */
		struct ft_launch l;

		if (ft_candidate_launch(sp, sh, &c, &l, err)) {
			free(t);
			return -1;
		}
		snprintf(reason, size, "%lld %lld %lld %lld %lld %lld %lld %lld %lld %lld", l.smem_bytes, l.threads,
			 l.grid[0], l.grid[1], l.grid[2], l.combine_threads, l.combine_grid[0], l.combine_grid[1],
			 l.combine_grid[2], l.workspace_bytes);
	}
	free(t);
	return ok;
}

/* --pairs FILE: one "SHAPE DTYPE CAUSAL CONFIG" per line (blank lines and
 * lines starting with # skipped); prints "LINE accepted SMEM THREADS GX GY GZ
 * COMBINE_THREADS CGX CGY CGZ WORKSPACE" (the launch) or "LINE rejected:
 * REASON" for each. 0 when every pair is accepted, 1 when one is not, 2 on a
 * malformed line (naming FILE:LINE). */
static int check_pairs(const char *path, const struct ft_space *sp, const struct ft_arch *a, struct ft_err *err)
{
	FILE *f = fopen(path, "r");
	char line[1024], shape_txt[256], dtype[16], config[FT_CONFIG_MAX], reason[512];
	long long lineno = 0, accepted = 0, rejected = 0;
	int causal;

	if (!f)
		return ft_error(err, FT_EINPUT, "fatune check: cannot read --pairs '%s': %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		struct ft_shape sh = { 0 };
		int ok;

		lineno++;
		if (line[0] == '#' || line[strspn(line, " \t\r\n")] == '\0')
			continue;
		if (sscanf(line, "%255s %15s %d %511s", shape_txt, dtype, &causal, config) != 4 ||
		    (causal != 0 && causal != 1)) {
			fclose(f);
			return ft_error(err, FT_EINPUT, "%s:%lld: want 'SHAPE DTYPE CAUSAL CONFIG', e.g. '1x8x512x64 fp16 0 NAME=V,...'",
					path, lineno);
		}
		if (ft_shape_parse(shape_txt, &sh, err) || ft_dtype_parse(dtype, &sh.dtype, err)) {
			fclose(f);
			return ft_error(err, FT_EINPUT, "%s:%lld: %s", path, lineno, err->msg);
		}
		sh.causal = causal;
		if ((ok = check_one(sp, a, &sh, config, reason, sizeof(reason), err)) < 0) {
			fclose(f);
			return ft_error(err, err->status, "%s:%lld: %s", path, lineno, err->msg);
		}
		if (ok)
			printf("%lld accepted %s\n", lineno, reason);
		else
			printf("%lld rejected: %s\n", lineno, reason);
		ok ? accepted++ : rejected++;
	}
	fclose(f);
	fprintf(stderr, "check: %s: %lld pairs, %lld accepted, %lld rejected\n", path, accepted + rejected, accepted,
		rejected);
	return rejected ? FT_EFAIL : FT_OK;
}

int cmd_check(int argc, char **argv)
{
	static const struct ft_command_help help = {
		"check", "fatune check --arch sm_XX --shape BxHxSxD [options]",
		"List the candidates of a search space for an arch and shape that pass its model\n"
		"check (with --all: every candidate, accepted or rejected with the reason); the\n"
		"rejected ones are counted per reason. No GPU is needed and nothing is stored.",
		"Rejections before compiling: a false constraint, too many threads, a grid over the\n"
		"launch limits, or shared memory over the arch's limit (48 KB static for\n"
		"shared_memory: static, the opt-in limit for dynamic). --compile also runs NVRTC on\n"
		"the accepted ones and rejects by what ptxas reports (smem, registers, spills,\n"
		"wgmma it serialized);\n"
		"--log then prints every compile log in full after the table (the reason column\n"
		"holds its first error line). The table shows the main columns within 120 characters\n"
		"(--wide: every column in full).\n"
		"--pairs FILE checks given configs instead, one 'SHAPE DTYPE CAUSAL CONFIG' per line\n"
		"(no --shape): each line gets 'N accepted' and the launch, or 'N rejected: REASON'.\n"
		"Exit code 0 when at least one candidate is accepted (with --pairs: every pair),\n"
		"1 when none is (with --pairs: one is not)."
	};
	struct ft_target_opts o = { 0 };
	const char *format = "table", *pairs = NULL;
	long long jobs = 0;
	int compile = 0, wide = 0, logs = 0, all = 0, npos;
	char *log_text = NULL;
	size_t log_size = 0;
	struct ft_option opts[] = {
		FT_TARGET_OPTIONS(&o), FT_SPACE_OPTION(&o),
		FT_OPT_FLAG_("compile", 0, &compile, "also compile accepted candidates and check their resources"),
		FT_OPT_INT_("jobs", 'j', &jobs, "N", "compile threads (default: all cores)", 1, 256),
		FT_OPT_STR_("format", 0, &format, "FMT", "table, json or csv (default table)"),
		FT_OPT_FLAG_("all", 0, &all, "list every candidate, the ones rejected before compiling too"),
		FT_OPT_FLAG_("wide", 0, &wide, "tables: every column, in full (default: the main ones in 120 characters)"),
		FT_OPT_FLAG_("log", 0, &logs, "with --compile: print each compile log in full after the table"),
		FT_OPT_STR_("pairs", 0, &pairs, "FILE", "check the configs of FILE at their shapes instead"),
		FT_OPT_END_
	};
	struct ft_err err = { 0 };
	struct ft_shape shape;
	struct ft_space *sp = NULL;
	const struct ft_arch *arch;
	struct check_ctx c = { 0 };
	struct ft_pipeline_cfg cfg = { 0 };
	struct ft_pipeline_stats st;
	char tpl_hash[17], shape_txt[FT_SHAPE_TEXT_MAX];
	enum ft_format fmt;
	long long accepted, rejected;
	int rc;

	if ((rc = ft_cmd_parse(&help, opts, argc, argv, 0, &npos)) >= 0)
		return rc;
	if (!o.arch) {
		ft_error(&err, FT_EINPUT, "fatune check: --arch is required (check never asks the GPU), e.g. --arch sm_89");
		return ft_report(&err);
	}
	if (pairs) {
		if (o.shape || compile) {
			ft_error(&err, FT_EINPUT, "fatune check: --pairs takes its shapes from the file: drop --shape and --compile");
			return ft_report(&err);
		}
		if (!(arch = ft_arch_find(o.arch, &err)) || ft_target_space(&o, &sp, &err))
			goto fail;
		rc = check_pairs(pairs, sp, arch, &err);
		free(sp);
		return rc == FT_OK || rc == FT_EFAIL ? rc : ft_report(&err);
	}
	if (!(arch = ft_arch_find(o.arch, &err)) || ft_target_shape("check", &o, &shape, &err) ||
	    ft_format_parse(format, &fmt, &err) || ft_target_space(&o, &sp, &err) ||
	    ft_space_template_hash(sp, tpl_hash, &err))
		goto fail;
	{
		char why[512];
		if (ft_space_unfit(sp, arch, &shape, why, sizeof(why))) {
			ft_error(&err, FT_EINPUT, "fatune check: space '%s' (%s) cannot run here: %s",
				 sp->name, sp->path, why);
			goto fail;
		}
	}

	if (logs && !compile) {
		ft_error(&err, FT_EINPUT, "fatune check: --log prints compile logs: add --compile");
		goto fail;
	}
	c.compile = compile;
	c.all = all;
	c.pr = ft_printer_new(stdout, fmt);
	if (!wide)
		ft_printer_narrow(c.pr, check_cols, FT_TABLE_WIDTH, stderr);
	if (logs && !(c.logs = open_memstream(&log_text, &log_size))) {
		ft_error(&err, FT_EFAIL, "fatune check: no memory for the compile logs");
		goto fail;
	}
	cfg.sp = sp;
	cfg.arch = arch;
	cfg.shape = &shape;
	cfg.template_hash = tpl_hash;
	cfg.jobs = jobs ? (int)jobs : ft_ncores();
	cfg.compile = compile;
	cfg.budget_evals = -1;
	cfg.emit = check_row;
	cfg.ctx = &c;
	ft_interrupt_install(1);
	rc = ft_pipeline_run(&cfg, &st, &err);
	ft_interrupt_install(0);
	ft_printer_finish(c.pr);
	if (c.logs) {
		fclose(c.logs);
		c.logs = NULL;
		/* after a table on stdout; beside csv or json (which stay parseable) on stderr */
		FILE *to = fmt == FT_FMT_TABLE ? stdout : stderr;
		if (log_size)
			fprintf(to, "\n%s", log_text);
		else
			fprintf(to, "\nno compile logs (every compile was clean or came from the cache, "
				"whose entries keep no log: 'fatune cache clear' and run again)\n");
	}
	if (rc && ft_interrupted())
		ft_interrupt_error(&err, "check stopped after %lld candidates (nothing is stored)", st.enumerated);
	if (rc)
		goto fail;
	print_unlisted(&c);
	accepted = c.counts[compile ? FT_ST_COMPILED : FT_ST_ACCEPTED];
	rejected = st.enumerated - accepted;
	fprintf(stderr, "check: %s %s: %lld candidates, %lld %s, %lld rejected (constraint %lld, smem %lld",
		arch->name, ft_shape_format(&shape, shape_txt, sizeof(shape_txt)), st.enumerated, accepted, compile ? "compiled" : "accepted", rejected,
		c.counts[FT_ST_REJECTED_CONSTRAINT], c.counts[FT_ST_REJECTED_SMEM]);
	if (compile)
		fprintf(stderr, ", compile_failed %lld, spills %lld; %lld compiled, %lld cache hits",
			c.counts[FT_ST_COMPILE_FAILED], c.counts[FT_ST_SPILLS], st.compiled, st.cache_hits);
	fprintf(stderr, ")\n");
	free(sp);
	free(log_text);
	return accepted > 0 ? FT_OK : FT_EFAIL;
fail:
	if (c.logs)
		fclose(c.logs);
	free(log_text);
	free(sp);
	return ft_report(&err);
}
