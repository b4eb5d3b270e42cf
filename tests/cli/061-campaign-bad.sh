# 061-campaign-bad: every malformed campaign file is refused with one line naming the file, the
# line and the key (exit 2), and nothing is stored.
. "$FT_TEST_LIB"
B="$FATUNE_SOURCE_DIR/tests/campaigns/bad"
check() { # FILE LINE KEY TEXT
	run search --arch sm_89 --campaign "$B/$1"
	expect_bad_input "$B/$1:$2: key '$3': .*$4"
}
check unknown_key.yaml 3 speed "unknown key"
check no_shapes.yaml 1 shapes "missing required key"
check bad_set.yaml 4 "shapes\[1\]" "bad shape set"
check bad_dtype.yaml 2 dtype "bad dtype 'fp8'"
check bad_causal.yaml 2 causal "not 0 or 1"
check bad_version.yaml 1 fatune_campaign "version 2 is not supported"
check no_version.yaml 1 fatune_campaign "missing required key"
check missing_space.yaml 2 spaces "nowhere.yaml' is not a readable file"
check not_a_mapping.yaml 1 "\(top level\)" "not a mapping"
check entry_no_shape.yaml 3 "shapes\[0\]" "missing 'shape'"
check kv_comma.yaml 3 "shapes\[0\]" "not one value, list"
check kv_heads_divide.yaml 3 "shapes\[0\]" "not a multiple of 5 KV heads"
run search --arch sm_89 --campaign "$B/nothing-here.yaml"
expect_bad_input "cannot open campaign file"
[ ! -e "$FATUNE_DB" ] || fail "a refused campaign created a database"
echo "ok"
