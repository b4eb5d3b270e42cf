/* replay.h - recorded trials standing in for the GPU.
 *
 * `fatune search --replay DB` runs the pipeline (enumeration, model check,
 * strategy, budget) but takes each candidate's compile verdict, check and times from
 * the trials recorded in DB for the same arch, shape, dtype, causal flag and
 * template, instead of a GPU. It tests strategies with no GPU (in CI) and
 * measures how many evaluations each needs to come near the exhaustive optimum.
 */
#ifndef FT_REPLAY_H
#define FT_REPLAY_H

#include "base/err.h"
#include "base/shape.h"
#include "base/trial.h"

struct ft_replay;

/* Loads the latest recorded timed trial per config. Fails with FT_EINPUT when
 * the DB holds no timed trial for the target ("... record one with 'fatune
 * search' on a GPU first"). */
int ft_replay_open(struct ft_replay **out, const char *db_path, const char *arch,
		   const struct ft_shape *shape, const char *template_name, struct ft_err *err);

/* Fills t's stage, status, reason, rel_err and times from the record of
 * t->config, or else of a recorded config whose every NAME=V t->config holds
 * (a space that grew parameters since): such a record is given to the first
 * candidate that holds it, only to that one - a twin differing only in a
 * parameter the recording lacks was never measured. "First" is the order of
 * the calls: the pipeline looks up on its main thread in the order its
 * strategy sends (search/pipeline.c), so a seed gives the same replay. A config with no record
 * becomes not_in_recording at stage MODEL, with no time. Records of runs that
 * were themselves replayed are not used. Not thread-safe. */
void ft_replay_lookup(struct ft_replay *r, struct ft_trial *t);

/* Device the recorded trials were measured on ("" if unknown). */
const char *ft_replay_device(const struct ft_replay *r);

/* Number of configs recorded, and the best recorded median time (NAN if none ok). */
long long ft_replay_size(const struct ft_replay *r);
double ft_replay_best_us(const struct ft_replay *r);

void ft_replay_close(struct ft_replay *r);

#endif
