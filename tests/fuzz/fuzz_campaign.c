/* fuzz_campaign.c - the campaign file reader (campaign_yaml.c over yaml_doc.c
 * and the shape-set parser), then sharding of what it loaded.
 *
 * Properties: a refusal is FT_EINPUT with one line; a loaded campaign has
 * 1..FT_CAMPAIGN_MAX_UNITS units that each pass ft_shape_check. The input is
 * placed beside links to tests/spaces/ etc., so "../spaces/fault.yaml"
 * resolves (fuzz.h). */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "space/campaign.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ft_campaign c;
	struct ft_err err = { 0 };

	ft_campaign_init(&c);
	if (ft_campaign_load(&c, fz_file(data, size, "campaign.yaml"), &err) == 0) {
		if (c.nunits < 1 || c.nunits > FT_CAMPAIGN_MAX_UNITS)
			FZ_FAIL(&err);
		for (int i = 0; i < c.nunits; i++)
			if (ft_shape_check(&c.units[i], &err))
				FZ_FAIL(&err);
		ft_campaign_shard(&c, 1, 3);
		for (int i = 0; i < c.nunits; i++)
			if (c.index[i] % 3 != 1)
				FZ_FAIL(&err);
	} else if ((err.status != FT_EINPUT && !strstr(err.msg, "out of memory")) || !err.msg[0] ||
		   strchr(err.msg, '\n')) {
		FZ_FAIL(&err);
	}
	ft_campaign_release(&c);
	return 0;
}
