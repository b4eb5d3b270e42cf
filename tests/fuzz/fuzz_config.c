/* fuzz_config.c - the config-string parser (`--config NAME=V,...`, ft_config_parse)
 * against the shipped mma space.
 *
 * Properties: a refusal is FT_EINPUT with one line; an accepted config holds
 * one listed value per parameter, and its canonical text parses back to it. */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "space/space.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ft_space sp;
	static int loaded;
	long long values[FT_MAX_PARAMS], back[FT_MAX_PARAMS];
	char canon[FT_CONFIG_MAX], *text;
	struct ft_err err = { 0 };

	if (!loaded) {
		if (ft_space_load(&sp, fz_src("search_spaces/attention.yaml"), &err))
			FZ_FAIL(&err);
		loaded = 1;
	}
	text = fz_string(data, size);
	if (ft_config_parse(&sp, text, values, &err) == 0) {
		for (int i = 0; i < sp.nparams; i++) {
			int listed = 0;
			for (int k = 0; k < sp.params[i].nvalues; k++)
				listed |= sp.params[i].values[k] == values[i];
			if (!listed)
				FZ_FAIL(&err);
		}
		ft_config_format(&sp, values, canon, sizeof(canon));
		if (ft_config_parse(&sp, canon, back, &err) ||
		    memcmp(values, back, sizeof(values[0]) * (size_t)sp.nparams))
			FZ_FAIL(&err);
	} else if (err.status != FT_EINPUT || !err.msg[0] || strchr(err.msg, '\n')) {
		FZ_FAIL(&err);
	}
	free(text);
	return 0;
}
