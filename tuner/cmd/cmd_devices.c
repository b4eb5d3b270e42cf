/* cmd_devices.c - `fatune devices`: the GPU a search would use, through the worker. */
#include <stdio.h>

#include "cmd/cmd.h"
#include "ui/format.h"

int cmd_devices(int argc, char **argv)
{
	static const struct ft_command_help help = {
		"devices", "fatune devices [--json]",
		"Show the GPU fatune would use ($FATUNE_DEVICE, default 0), its limits, and how they\n"
		"compare with fatune's built-in table for its arch. Exit code 1 when there is none.",
		NULL
	};
	int json = 0, npos, rc;
	struct ft_option opts[] = { FT_OPT_FLAG_("json", 0, &json, "print as JSON"), FT_OPT_END_ };
	struct ft_err err = { 0 }, cmp = { 0 };
	struct ft_device_info dev;
	struct ft_runner *w = NULL;
	const struct ft_arch *a;
	const struct ft_device_limits *l = &dev.lim;

	if ((rc = ft_cmd_parse(&help, opts, argc, argv, 0, &npos)) >= 0)
		return rc;
	if (ft_cmd_runner(&w, &dev, &err))
		return ft_report(&err);
	ft_runner_close(w);
	if (!dev.present) {
		ft_error(&err, FT_EFAIL, "no GPU: %s", dev.why_not);
		return ft_report(&err);
	}
	a = ft_arch_for_cc(l->cc);
	if (a && ft_arch_check_device(a, l, &cmp) == 0)
		snprintf(cmp.msg, sizeof(cmp.msg), "matches fatune's table for %s", a->name);
	else if (!a)
		snprintf(cmp.msg, sizeof(cmp.msg), "no built-in limits for sm_%d", l->cc);
	if (json) {
		printf("{\"name\":");
		ft_json_string(stdout, l->name);
		printf(",\"arch\":\"sm_%d\",\"sm_count\":%d,\"driver_version\":%d,"
		       "\"smem_static\":%d,\"smem_optin\":%d,\"smem_per_sm\":%d,\"smem_reserved\":%d,"
		       "\"regs_per_sm\":%d,\"threads_per_block\":%d,\"threads_per_sm\":%d,\"l2_bytes\":%d}\n",
		       l->cc, l->sm_count, dev.driver_version, l->smem_static, l->smem_optin,
		       l->smem_per_sm, l->smem_reserved, l->regs_per_sm, l->threads_per_block,
		       l->threads_per_sm, l->l2_bytes);
		return FT_OK;
	}
	printf("device 0: %s (sm_%d, %d SMs, driver %d)\n", l->name, l->cc, l->sm_count,
	       dev.driver_version);
	printf("  shared memory: %d static / %d opt-in per block, %d per SM, %d reserved per block\n",
	       l->smem_static, l->smem_optin, l->smem_per_sm, l->smem_reserved);
	printf("  registers per SM %d, threads %d per block / %d per SM, L2 %d bytes\n",
	       l->regs_per_sm, l->threads_per_block, l->threads_per_sm, l->l2_bytes);
	printf("  limits: %s\n", cmp.msg);
	return FT_OK;
}
