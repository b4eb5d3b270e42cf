/* campaign.h - many shapes tuned as one job: its units, where they come from, sharding.
 *
 * A kernel is built once and serves every shape a model produces, so shapes
 * are tuned in sets: a campaign is an ordered list of units, each one shape
 * with its dtype and causal flag (struct ft_shape holds all of it). Units come
 * from `--shape` given several times, from shape sets ("1x8x256..8192x64",
 * "2:4x16x2048x128", see ft_shape_expand) or from a campaign file:
 *
 *     fatune_campaign: 1
 *     name: llama-serving
 *     dtype: [fp16, bf16]              # default for every entry (fp16)
 *     causal: [0, 1]                   # default for every entry (0)
 *     spaces: [../search_spaces/attention.yaml]   # optional, relative to this file
 *     shapes:
 *       - 1x8x256..8192x64
 *       - {shape: 4x16x2048x128, causal: [1]}
 *       - {shape: 16x32x1x128, kv_heads: 8, kv_len: 1024..32768, layout: bshd}
 *
 * read by campaign_yaml.c (over yaml_doc.c: same error style as spaces).
 * Units follow the entries in the order written; within an entry, for each
 * dtype, for each causal flag, the shapes of its set in order. A unit given
 * twice is kept once. A campaign file only lists shapes
 * and names space files: it cannot run anything or write any file.
 *
 * Sharding (SLURM arrays): shard I of N keeps the units whose index u in the
 * campaign satisfies u % N == I, so N shards cover every unit exactly once
 * and each can run anywhere, writing its own database (fatune db merge joins
 * them).
 */
#ifndef FT_CAMPAIGN_H
#define FT_CAMPAIGN_H

#include "base/err.h"
#include "space/space.h"

#define FT_CAMPAIGN_MAX_UNITS 4096
#define FT_CAMPAIGN_MAX_SPACES 16

struct ft_campaign {
	char name[FT_NAME_MAX];		/* the file's name:, or "" */
	char path[FT_PATH_MAX];		/* the file, "" for units from the command line */
	int nunits;
	struct ft_shape *units;		/* malloc'd, nunits of them */
	int *index;			/* each unit's position in the whole campaign (sharding) */
	int total;			/* units before sharding */
	int nspaces;			/* spaces: the file's (resolved), else none */
	char spaces[FT_CAMPAIGN_MAX_SPACES][FT_PATH_MAX];
};

/* An empty campaign (call before the adds). */
void ft_campaign_init(struct ft_campaign *c);
void ft_campaign_release(struct ft_campaign *c);

/* Adds the units of one shape set with the given dtype and causal flag. */
int ft_campaign_add(struct ft_campaign *c, const char *shape_set, const struct ft_shape *proto,
		    struct ft_err *err);

/* Loads a campaign file (FT_EINPUT "FILE:LINE: key 'KEY': ..." on any problem). */
int ft_campaign_load(struct ft_campaign *c, const char *path, struct ft_err *err);

/* Keeps shard `shard` of `count` (see above). */
void ft_campaign_shard(struct ft_campaign *c, int shard, int count);

/* Parses "I/N" (0 <= I < N), or, with text NULL, SLURM's array task
 * (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT); with
 * neither, *count = 1 (no sharding). FT_EINPUT on bad text or environment. */
int ft_shard_parse(const char *text, int *shard, int *count, struct ft_err *err);

/* "3/24 1x8x512x64 fp16 causal" for unit i, into buf. */
char *ft_campaign_label(const struct ft_campaign *c, int i, char *buf, size_t size);

/* A campaign's name from the command line (`search --name`): the rule of a
 * campaign file's `name:` (ft_yaml_name: 1 to FT_NAME_MAX - 1 of
 * [A-Za-z0-9_-]), since it is stored with every run and shown by query and
 * report. FT_EINPUT naming the option otherwise. */
int ft_campaign_name_check(const char *name, struct ft_err *err);

#endif
