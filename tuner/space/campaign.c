/* campaign.c - a campaign's units: adding shape sets, dropping repeats, sharding (see campaign.h). */
#include "space/campaign.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ft_campaign_init(struct ft_campaign *c)
{
	memset(c, 0, sizeof(*c));
}

void ft_campaign_release(struct ft_campaign *c)
{
	free(c->units);
	free(c->index);
	c->units = NULL;
	c->index = NULL;
	c->nunits = c->total = 0;
}

static int same(const struct ft_shape *a, const struct ft_shape *b)
{
	return a->b == b->b && a->h == b->h && a->s == b->s && a->d == b->d &&
	       a->s_kv == b->s_kv && a->h_kv == b->h_kv && a->layout == b->layout &&
	       a->dtype == b->dtype && a->causal == b->causal;
}

int ft_campaign_add(struct ft_campaign *c, const char *shape_set, const struct ft_shape *proto,
		    struct ft_err *err)
{
	struct ft_shape *set = malloc(sizeof(*set) * FT_CAMPAIGN_MAX_UNITS);
	int n, ret = -1;

	if (!set)
		return ft_error(err, FT_EFAIL, "out of memory reading a campaign");
	if (ft_shape_expand(shape_set, proto, set, FT_CAMPAIGN_MAX_UNITS, &n, err))
		goto out;
	for (int i = 0; i < n; i++) {
		int dup = 0;

		for (int j = 0; j < c->nunits && !dup; j++)
			dup = same(&c->units[j], &set[i]);
		if (dup)
			continue;
		if (c->nunits == FT_CAMPAIGN_MAX_UNITS) {
			ft_error(err, FT_EINPUT, "the campaign has more than %d units: split it",
				 FT_CAMPAIGN_MAX_UNITS);
			goto out;
		}
		if (!c->units) {
			c->units = malloc(sizeof(*c->units) * FT_CAMPAIGN_MAX_UNITS);
			c->index = malloc(sizeof(*c->index) * FT_CAMPAIGN_MAX_UNITS);
			if (!c->units || !c->index) {
				ft_error(err, FT_EFAIL, "out of memory reading a campaign");
				goto out;
			}
		}
		c->index[c->nunits] = c->nunits;
		c->units[c->nunits++] = set[i];
	}
	c->total = c->nunits;
	ret = 0;
out:
	free(set);
	return ret;
}

void ft_campaign_shard(struct ft_campaign *c, int shard, int count)
{
	int k = 0;

	if (count <= 1)
		return;
	for (int i = 0; i < c->nunits; i++)
		if (c->index[i] % count == shard) {
			c->units[k] = c->units[i];
			c->index[k++] = c->index[i];
		}
	c->nunits = k;
}

static int env_int(const char *name, long *out)
{
	const char *v = getenv(name);
	char *end;

	if (!v || !*v)
		return 0;
	errno = 0;
	*out = strtol(v, &end, 10);
	return errno || *end ? -1 : 1;
}

int ft_shard_parse(const char *text, int *shard, int *count, struct ft_err *err)
{
	long i = 0, n = 0, min = 0;
	char *end;
	int rid, rn, rmin;

	*shard = 0;
	*count = 1;
	if (text) {
		errno = 0;
		i = strtol(text, &end, 10);
		if (end == text || *end != '/' || errno)
			goto bad;
		n = strtol(end + 1, &end, 10);
		if (*end || errno || n < 1 || n > FT_CAMPAIGN_MAX_UNITS || i < 0 || i >= n)
			goto bad;
		*shard = (int)i;
		*count = (int)n;
		return 0;
	}
	rid = env_int("SLURM_ARRAY_TASK_ID", &i);
	rn = env_int("SLURM_ARRAY_TASK_COUNT", &n);
	rmin = env_int("SLURM_ARRAY_TASK_MIN", &min);
	if (rid == 0 && rn == 0)
		return 0;
	if (rid != 1 || rn != 1 || rmin < 0 || n < 1 || i - min < 0 || i - min >= n)
		return ft_error(err, FT_EINPUT,
				"SLURM_ARRAY_TASK_ID/_MIN/_COUNT do not make a shard (%s, %s, %s): submit "
				"with sbatch --array=0-(N-1), or pass --shard I/N",
				getenv("SLURM_ARRAY_TASK_ID") ? getenv("SLURM_ARRAY_TASK_ID") : "unset",
				getenv("SLURM_ARRAY_TASK_MIN") ? getenv("SLURM_ARRAY_TASK_MIN") : "unset",
				getenv("SLURM_ARRAY_TASK_COUNT") ? getenv("SLURM_ARRAY_TASK_COUNT") : "unset");
	*shard = (int)(i - min);
	*count = (int)n;
	return 0;
bad:
	return ft_error(err, FT_EINPUT,
			"bad --shard '%s': use I/N with 0 <= I < N, e.g. 0/4 (the first of four shards)",
			text);
}

char *ft_campaign_label(const struct ft_campaign *c, int i, char *buf, size_t size)
{
	char shape[FT_SHAPE_TEXT_MAX];
	const struct ft_shape *s = &c->units[i];

	snprintf(buf, size, "%d/%d %s %s%s", i + 1, c->nunits, ft_shape_format(s, shape, sizeof(shape)),
		 ft_dtype_name(s->dtype), s->causal ? " causal" : "");
	return buf;
}

int ft_campaign_name_check(const char *name, struct ft_err *err)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < n; i++)
		if (!(isalnum((unsigned char)name[i]) || name[i] == '_' || name[i] == '-'))
			n = 0;
	if (!n || n >= FT_NAME_MAX)
		return ft_error(err, FT_EINPUT, "bad --name '%.64s': use 1 to %d letters, digits, '_' and '-'", name,
				FT_NAME_MAX - 1);
	return 0;
}
