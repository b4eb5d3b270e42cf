/* family.c - the table of template families (see family.h); each family lives in family/. */
#include "space/family.h"

#include <stdio.h>
#include <string.h>


/* One line per family; each lives in its own family_<name>.c. */
static const struct ft_family *const families[] = {
	&ft_family_mma,
	&ft_family_wgmma,
	&ft_family_cuda,
};
#define NFAMILIES ((int)(sizeof(families) / sizeof(families[0])))

const struct ft_family *ft_family_find(const char *name)
{
	for (int i = 0; i < NFAMILIES; i++)
		if (!strcmp(families[i]->name, name))
			return families[i];
	return NULL;
}

const char *ft_family_names(void)
{
	static char buf[256];

	if (!buf[0])
		for (int i = 0, n = 0; i < NFAMILIES; i++)
			n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%s%s", i ? ", " : "",
				      families[i]->name);
	return buf;
}

int ft_family_count(void)
{
	return NFAMILIES;
}

const struct ft_family *ft_family_at(int i)
{
	return i >= 0 && i < NFAMILIES ? families[i] : NULL;
}
