/* paths.c - where fatune's data and the CUDA headers are (see paths.h). */
#include "base/paths.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "config.h"

static const char *built_data_dir;
static pthread_once_t built_once = PTHREAD_ONCE_INIT;

/* the build tree's sources while they exist, else the installed copy: looked
 * at once per process (a search asks for each rejected candidate) */
static void find_built_data_dir(void)
{
	struct stat st;

	built_data_dir = !stat(FATUNE_SOURCE_DIR "/search_spaces", &st) && S_ISDIR(st.st_mode)
				 ? FATUNE_SOURCE_DIR
				 : FATUNE_INSTALL_DATADIR;
}

const char *ft_data_dir(void)
{
	const char *d = getenv("FATUNE_SOURCE_DIR");

	if (d && *d)
		return d;
	pthread_once(&built_once, find_built_data_dir);
	return built_data_dir;
}

const char *ft_cuda_include(char *buf, size_t size)
{
	const char *home = getenv("CUDA_HOME");
	struct stat st;

	if (home && *home) {
		snprintf(buf, size, "%s/include", home);
		if (!stat(buf, &st) && S_ISDIR(st.st_mode))
			return buf;
	}
	snprintf(buf, size, "%s", FATUNE_CUDA_INCLUDE);
	return buf;
}

void ft_default_space(char *path, size_t size)
{
	snprintf(path, size, "%s/search_spaces/attention.yaml", ft_data_dir());
}
