# 006-export-golden: export on a database holding a best row writes exactly the golden header; the
# space comes from the row's run, else the shipped space of its name, else --space.
. "$FT_TEST_LIB"
# make a database with fatune itself, then put a best row in by hand (as a GPU search would)
run search --arch sm_89 --shape 1x2x64x64 --space "$TESTSPACES/fault.yaml" --quiet; expect_rc 0
put_best
run export --arch sm_89 --shape 1x8x512x64 -o "$T/build_config.h"
expect_rc 0 "export"
diff -u "$FATUNE_SOURCE_DIR/tests/golden/cli_build_config.h" "$T/build_config.h" || fail "header differs from the golden file"
run export --arch sm_89 --shape 1x8x512x64 --style c
expect_rc 0
diff -u "$FATUNE_SOURCE_DIR/tests/golden/cli_build_config_c.h" "$T/out" || fail "C-style header differs from the golden file"
# a second device of the same arch: export must ask which
sql "$FATUNE_DB" "INSERT INTO best (arch, device, space_name, template_hash, template_name, b, h, s,
  d, s_kv, h_kv, layout, dtype, causal, config, fatune_version, updated_at) SELECT arch,
  'NVIDIA RTX 4090', space_name, template_hash, template_name, b, h, s, d, s_kv, h_kv, layout, dtype,
  causal, config, fatune_version, updated_at FROM best"
run export --arch sm_89 --shape 1x8x512x64 -o "$T/other.h"
expect_bad_input "--device"
[ ! -e "$T/other.h" ] || fail "an ambiguous export wrote a file"
run export --arch sm_89 --shape 1x8x512x64 --device "NVIDIA L4"
expect_rc 0
diff -q "$FATUNE_SOURCE_DIR/tests/golden/cli_build_config.h" "$T/out" >/dev/null || fail "--device picked the wrong row"
# a second space over another template for the same shape: the faster one is exported (its space
# found through its run), and --space picks a space's own best
sql "$FATUNE_DB" "INSERT INTO best (arch, device, space_name, template_hash, template_name, family, b,
  h, s, d, s_kv, h_kv, layout, dtype, causal, config, fatune_version, t_median_us, t_min_us,
  updated_at, run_id) VALUES ('sm_89', 'NVIDIA L4', 'fault', '1111222233334444', 'fault', 'cuda', 1, 8, 512, 64,
  512, 8, 'bhsd', 'fp16', 0, 'FAULT=0,ROWS_PER_BLOCK=2', '0.1.0', 4.50, 4.40, '2026-11-22T03:00:00Z',
  (SELECT max(id) FROM runs))"
run export --arch sm_89 --shape 1x8x512x64 --device "NVIDIA L4"
expect_rc 0
grep -q "^#define FAULT 0$" "$T/out" || fail "the faster space's config was not exported"
grep -q "space            fault (family cuda)" "$T/out" || fail "the header does not name the winning space"
grep -q -- "--space '.*tests/spaces/fault.yaml'$" "$T/out" || fail "the regenerate line does not name the space"
run export --arch sm_89 --shape 1x8x512x64 --device "NVIDIA L4" --space "$FATUNE_SOURCE_DIR/search_spaces/attention.yaml"
expect_rc 0
sed "s| --space '[^']*'||" "$T/out" | diff -q "$FATUNE_SOURCE_DIR/tests/golden/cli_build_config.h" - >/dev/null ||
	fail "--space did not pick that space's best"
# a row whose space cannot be found: export says to pass --space
sql "$FATUNE_DB" "UPDATE best SET run_id = NULL WHERE space_name = 'fault'"
run export --arch sm_89 --shape 1x8x512x64 --device "NVIDIA L4"
expect_bad_input "cannot find space 'fault'.*pass --space FILE"
# the same space name with a newer template hash replaces the old one (its current template)
sql "$FATUNE_DB" "INSERT INTO best (arch, device, space_name, template_hash, template_name, family, b,
  h, s, d, s_kv, h_kv, layout, dtype, causal, config, fatune_version, t_median_us, t_min_us,
  updated_at) VALUES ('sm_89', 'NVIDIA L4', 'fault', '5555666677778888', 'fault', 'cuda', 1, 8, 512, 64,
  512, 8, 'bhsd', 'fp16', 0, 'FAULT=1,ROWS_PER_BLOCK=2', '0.1.0', 9.50, 9.40, '2026-11-22T04:00:00Z')"
run export --arch sm_89 --shape 1x8x512x64 --device "NVIDIA L4"
expect_rc 0
diff -q "$FATUNE_SOURCE_DIR/tests/golden/cli_build_config.h" "$T/out" >/dev/null ||
	fail "an outdated template's row still won over the current templates"
echo "ok"
