/* fuzz_expr.c - the expression engine (expr.c) on its own: the input is one
 * expression, checked, evaluated once and run as a guard and a value over a
 * two-parameter space and the context row.
 *
 * Properties: anything refused is FT_EINPUT with one line; the locked engine
 * cannot be made to change its tables (the row count of the cross join stays
 * the same whatever the expression). */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "space/expr.h"

static void refusal(const struct ft_err *err)
{
	if (err->status != FT_EINPUT || !err->msg[0] || strchr(err->msg, '\n'))
		FZ_FAIL(err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const tm[] = { "TILE_M" }, *const tn[] = { "TILE_N" };
	static const char *const ctx[] = { FT_CONTEXT_NAMES };
	static const long long tm_rows[] = { 16, 64, 128 }, tn_rows[] = { 32, 64 };
	static const long long ctx_row[FT_CONTEXT_COUNT] = { 2, 8, 256, 64, 0, 2, 256, 8, 0, 0,
							     49152, 232448, 233472, 1024, 65536, 1024, 2048, 90 };
	struct ft_expr *x = NULL;
	struct ft_err err = { 0 };
	long long v, cols[2 + FT_CONTEXT_COUNT + 2];
	char *text = fz_string(data, size);
	const char *guards[1] = { text }, *values[1] = { text };
	int rows = 0, rc;

	if (ft_expr_open(&x, &err) || ft_expr_add_table(x, tm, 1, tm_rows, 3, &err) ||
	    ft_expr_add_table(x, tn, 1, tn_rows, 2, &err) ||
	    ft_expr_add_table(x, ctx, FT_CONTEXT_COUNT, ctx_row, 1, &err) || ft_expr_lock(x, &err))
		FZ_FAIL(&err);
	if (ft_expr_check(x, text, &err)) {
		refusal(&err);
		goto out;
	}
	if (ft_expr_eval(x, text, NULL, &v, &err))
		refusal(&err);
	ft_err_clear(&err);
	if (ft_expr_query(x, guards, 1, values, 1, &err)) {
		refusal(&err);
		goto out;
	}
	/* columns: TILE_M, TILE_N, the context row, the failed guard, the value */
	while ((rc = ft_expr_step(x, cols, 2 + FT_CONTEXT_COUNT + 2, &err)) == 1)
		rows++;
	if (rc < 0)
		refusal(&err);
	else if (rows != 6)
		FZ_FAIL(&err);
out:
	ft_expr_close(x);
	free(text);
	return 0;
}
