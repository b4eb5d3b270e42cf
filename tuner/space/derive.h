/* derive.h - derived parameters: a space's `derive:` entries checked at load and written out.
 *
 * A derived parameter is computed per candidate from the shape, the
 * enumerated parameters and earlier derived ones (search_spaces/README.md,
 * "derive"). The loader (space_yaml.c) collects the entries, ft_derive_resolve
 * turns them into parameters and checks their names; the enumeration
 * (enumerate.c) writes each one out, in parentheses, wherever a later
 * expression names it (ft_derive_expand), so the engine only ever sees
 * enumerated parameters and the shape.
 */
#ifndef FT_DERIVE_H
#define FT_DERIVE_H

#include <stddef.h>

#include "base/yaml_doc.h"
#include "space/space.h"

/* The `derive:` entries of a space file, in file order, before they are resolved. */
struct ft_derive_pending {
	int n;
	char names[FT_MAX_PARAMS][FT_NAME_MAX];
	struct ft_expr_src expr[FT_MAX_PARAMS];
	int nchoices[FT_MAX_PARAMS];	/* 0: one expression; n: a list of n (joined by ", ") */
};

/* The ft_yaml_mapping callback of `derive:`: one entry, NAME: expression
 * (or NAME: [expression, ...], a choice), appended to the ft_derive_pending
 * arg after checking its name and text; resolved once the whole file is read
 * (ft_derive_resolve), since parameters: may come after it. */
int ft_derive_pair(struct ft_yaml *y, const char *key, yaml_node_t *k, yaml_node_t *v, void *arg);

/* space_yaml.c's reading of an expression (a scalar, non-empty, passing
 * ft_expr_precheck) into *e with its key and line. */
int ft_space_yaml_expression(struct ft_yaml *y, yaml_node_t *n, const char *key, struct ft_expr_src *e);

/* Turns the pending entries into derived parameters of sp (after the whole
 * file was read): a name under parameters: becomes derived there (its place
 * in the config and its values kept), any other name is a new parameter
 * after the others (kind compile, any integer). Each expression may name only
 * the shape, the arch limits, enumerated parameters and derived ones before
 * it: a later or its own name is a cycle, anything else an unknown name; both
 * fail with "FILE:LINE: key 'derive.NAME': ..." through y. -1 on failure. */
int ft_derive_resolve(struct ft_yaml *y, struct ft_space *sp, const struct ft_derive_pending *pd);

/* text with every name of a derived parameter of sp replaced by
 * "(EXPANDED)", expanded[k] being the already written-out expression of
 * sp->derived[k] (k < nexpanded: only those are replaced), into out. -1 when
 * it does not fit in size. */
int ft_derive_expand(const struct ft_space *sp, const char *const *expanded, int nexpanded, const char *text,
		     char *out, size_t size);

/* Item i of a list of expressions joined by ", " (text split at its commas
 * outside parentheses) into out. -1 when there is no item i or it does not fit. */
int ft_derive_choice(const char *text, int i, char *out, size_t size);

/* How many items such a list has (its commas outside parentheses, plus one). */
int ft_derive_nchoices(const char *text);

#endif
