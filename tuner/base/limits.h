/* limits.h - the fixed sizes of a space, a config and a path, shared by every step.
 *
 * A space (space/space.h), a trial (base/trial.h) and the tables that print
 * them all hold these as arrays, so they live below all of them.
 */
#ifndef FT_LIMITS_H
#define FT_LIMITS_H

#define FT_MAX_PARAMS 16
#define FT_MAX_VALUES 64
#define FT_MAX_CONSTRAINTS 32
#define FT_EXPR_MAX 512
#define FT_NAME_MAX 64
#define FT_PATH_MAX 4096
#define FT_CONFIG_MAX 512	/* canonical config text, see ft_config_format */
#define FT_MAX_SPACE_DEFINES 8	/* compile.defines */
#define FT_MAX_COMPILE_OPTIONS 8	/* compile.options */
#define FT_MAX_INCLUDES 4	/* compile.include */
#define FT_OPTION_MAX 128	/* one compile option's text */

#endif
