/* cmd_common.c - what every subcommand shares: reporting errors, parsing options. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "target.h"

int ft_report(const struct ft_err *err)
{
	fprintf(stderr, "fatune: error: %s\n", err->msg[0] ? err->msg : "unknown failure");
	return err->status ? err->status : FT_EFAIL;
}

void ft_warn(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fatune: warning: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int ft_cmd_parse(const struct ft_command_help *h, const struct ft_option *opts, int argc,
		 char **argv, int max_pos, int *npos)
{
	struct ft_err err = { 0 };
	int rc = ft_parse_options(h, opts, argc, argv, max_pos, npos, &err);

	if (rc == 1)
		return FT_OK;
	if (rc < 0)
		return ft_report(&err);
	return -1;
}

int ft_cmd_arch(const char *cmd, const char *arch_opt, const struct ft_device_info *dev,
		const struct ft_arch **out, struct ft_err *err)
{
	if (arch_opt) {
		*out = ft_arch_find(arch_opt, err);
		return *out ? 0 : -1;
	}
	if (dev && dev->present) {
		*out = ft_arch_for_cc(dev->lim.cc);
		if (*out)
			return 0;
		return ft_error(err, FT_EINPUT,
				"fatune %s: the GPU '%s' is sm_%d, which fatune has no limits for: pass --arch",
				cmd, dev->lim.name, dev->lim.cc);
	}
	return ft_error(err, FT_EINPUT, "fatune %s: no GPU to take the arch from (%s): pass --arch sm_XX",
			cmd, dev && dev->why_not[0] ? dev->why_not : "not probed");
}

/* Seconds to wait for a new worker: loading the driver, creating a context and
 * compiling the reference kernel with NVRTC take a few seconds on a cold machine. */
#define WORKER_START_MS 60000

int ft_cmd_worker(struct ft_worker **w, struct ft_device_info *dev, struct ft_err *err)
{
	char ref[4096];

	snprintf(ref, sizeof(ref), "%s/kernel_templates/reference.cu", ft_data_dir());
	*w = NULL;
	memset(dev, 0, sizeof(*dev));
	if (ft_worker_start(w, ref, WORKER_START_MS, dev, err))
		return -1;
	if (!dev->present) {
		ft_worker_stop(*w);
		*w = NULL;
	}
	return 0;
}

int ft_ncores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : (int)n;
}
