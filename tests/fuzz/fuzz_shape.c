/* fuzz_shape.c - the shape parser (ft_shape_parse) and shape sets (ft_shape_expand).
 *
 * Properties beyond "no crash": a refusal is FT_EINPUT with one line of
 * message; every shape accepted passes ft_shape_check; the canonical text of
 * a parsed shape parses back to the same shape. */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "base/shape.h"

static void refusal(const struct ft_err *err)
{
	if (err->status != FT_EINPUT || !err->msg[0] || strchr(err->msg, '\n'))
		FZ_FAIL(err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ft_shape set[64];
	char *text = fz_string(data, size), canon[FT_SHAPE_TEXT_MAX];
	struct ft_shape sh, back, proto = { 0 };
	struct ft_err err = { 0 };
	int n = 0;

	memset(&sh, 0, sizeof(sh));
	if (ft_shape_parse(text, &sh, &err) == 0) {
		if (ft_shape_check(&sh, &err))
			FZ_FAIL(&err);
		memset(&back, 0, sizeof(back));
		ft_shape_format(&sh, canon, sizeof(canon));
		if (ft_shape_parse(canon, &back, &err) || memcmp(&sh, &back, sizeof(sh)))
			FZ_FAIL(&err);
	} else {
		refusal(&err);
	}
	ft_err_clear(&err);
	if (ft_shape_expand(text, &proto, set, 64, &n, &err) == 0) {
		if (n < 1 || n > 64)
			FZ_FAIL(&err);
		for (int i = 0; i < n; i++)
			if (ft_shape_check(&set[i], &err))
				FZ_FAIL(&err);
	} else {
		refusal(&err);
	}
	free(text);
	return 0;
}
