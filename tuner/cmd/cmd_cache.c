/* cmd_cache.c - `fatune cache stats|clear`: the compiled-CUBIN cache. */
#include <stdio.h>
#include <string.h>

#include "compile/cache.h"
#include "cmd/cmd.h"

int cmd_cache(int argc, char **argv)
{
	static const struct ft_command_help help = {
		"cache", "fatune cache stats|clear",
		"Show (stats) or empty (clear) the cache of compiled CUBINs.",
		"Location: $FATUNE_CACHE_DIR, else $XDG_CACHE_HOME/fatune, else ~/.cache/fatune.\n"
		"Entries are keyed by the template (and its headers), NVRTC version, options, arch and\n"
		"compile-time parameters: a changed template never gets an old CUBIN back."
	};
	struct ft_option opts[] = { FT_OPT_END_ };
	struct ft_err err = { 0 };
	struct ft_cache_stats st;
	long long removed;
	int npos, rc;

	if ((rc = ft_cmd_parse(&help, opts, argc, argv, 1, &npos)) >= 0)
		return rc;
	if (npos != 1 || (strcmp(argv[1], "stats") && strcmp(argv[1], "clear"))) {
		ft_error(&err, FT_EINPUT, "fatune cache: say 'stats' or 'clear', e.g. 'fatune cache stats'");
		return ft_report(&err);
	}
	if (!strcmp(argv[1], "stats")) {
		if (ft_cache_stats(&st, &err))
			return ft_report(&err);
		printf("cache: %s\nentries: %lld\nbytes: %lld\n", st.dir, st.entries, st.bytes);
		return FT_OK;
	}
	if (ft_cache_clear(&removed, &err))
		return ft_report(&err);
	printf("cache: removed %lld entries\n", removed);
	return FT_OK;
}
