/* campaign_types.c - a campaign's result: its winner per unit, its release (see campaign_types.h). */
#include "search/campaign_types.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int ft_campaign_winner(const struct ft_campaign_outcome *out, int n)
{
	int w = -1;

	for (int i = 0; i < n; i++)
		if (!isnan(out[i].res.top[0].t_median_us) &&
		    (w < 0 || out[i].res.top[0].t_median_us < out[w].res.top[0].t_median_us))
			w = i;
	return w;
}

void ft_campaign_result_release(struct ft_campaign_result *r)
{
	free(r->out);
	free(r->first);
	free(r->count);
	memset(r, 0, sizeof(*r));
}

