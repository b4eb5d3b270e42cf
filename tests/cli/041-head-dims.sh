# 041-head-dims: a space refuses the head dims its template cannot build, with the reason (the space's
# head_dims list), before any candidate is enumerated; `spills:` and `wgmma_serialized:` are checked at load; a search where nothing can run exits != 0 with a
# clear line; an empty shard says it has nothing to do.
. "$FT_TEST_LIB"

for d in 63 96 256 1024; do
	run check --arch sm_89 --shape 1x8x512x$d
	expect_bad_input "space 'attention' .* cannot run here: its template builds head dims 32, 64, 128, not $d \(head_dims, line [0-9]+\)"
	grep -q "division by zero" "$T/err" && fail "D $d blames the shipped space: $(cat "$T/err")"
done
for d in 63 96 1024; do
	run check --arch sm_90 --shape 1x8x512x$d --space "$SPACES/attention_sm90.yaml"
	expect_bad_input "its template builds head dims 64, 128, 256, not $d"
done
# the dims each template builds still run
run check --arch sm_90 --shape 1x8x512x256 --space "$SPACES/attention_sm90.yaml" --format csv
expect_rc 0 "D 256 in the wgmma space"
run check --arch sm_89 --shape 1x8x512x128 --format csv; expect_rc 0 "D 128 in the mma space"

# search: one error line with every space's reason, exit 2, nothing stored
run search --arch sm_90 --shape 1x8x512x96
expect_bad_input "^fatune: error: search: no space is searched for 1x8x512x96 on sm_90 \\(space 'attention_sm90': .*head dims 64, 128, 256, not 96.*; space 'attention': .*head dims 32, 64, 128, not 96"

# a space that runs but where every candidate is rejected: exit 1, and the line says why
run search --arch sm_89 --shape 1x8x512x48 --space "$TESTSPACES/static_smem.yaml" --quiet
expect_rc 1 "a search with nothing feasible"
expect_err "^fatune: error: search: no candidate of 1x8x512x48 can run on sm_89: every one was rejected"
run search --arch sm_89 --shape 1x8x512x48 --shape 1x8x512x40 --space "$TESTSPACES/static_smem.yaml" --quiet
expect_rc 1 "a campaign with nothing feasible"
expect_err "2 of 2 units have no candidate that can run on sm_89 \(the first: 1x8x512x48\)"

# head_dims is checked when the space loads
sed 's/^parameters:/head_dims: [64, 0]\nparameters:/' "$TESTSPACES/static_smem.yaml" >"$T/bad.yaml"
sed -i "s|\.\./kernels/|$FATUNE_SOURCE_DIR/tests/kernels/|" "$T/bad.yaml"
run check --arch sm_89 --shape 1x8x512x64 --space "$T/bad.yaml"
expect_bad_input "bad.yaml:[0-9]+: key 'head_dims': head dim 0 is out of range"
sed -i 's/^head_dims: \[64, 0\]/head_dims: [32, 64]/' "$T/bad.yaml"
run check --arch sm_89 --shape 1x8x512x128 --space "$T/bad.yaml"
expect_bad_input "space 'static_smem' .*its template builds head dims 32, 64, not 128"

# spills is a space choice: reject (the default) or allow N bytes; anything else is refused at load
sed -i 's/^head_dims: .*/spills: allow 64/' "$T/bad.yaml"
run check --arch sm_89 --shape 1x8x512x64 --space "$T/bad.yaml" --format csv; expect_rc 0 "spills: allow 64"
for bad in "maybe" "allow" "allow -1" "allow 1k" "[1]"; do
	sed -i "s/^spills: .*/spills: $bad/" "$T/bad.yaml"
	run check --arch sm_89 --shape 1x8x512x64 --space "$T/bad.yaml"
	expect_bad_input "bad.yaml:[0-9]+: key 'spills': "
done

# so is wgmma_serialized: reject (the default) or allow
sed -i 's/^spills: .*/wgmma_serialized: allow/' "$T/bad.yaml"
run check --arch sm_89 --shape 1x8x512x64 --space "$T/bad.yaml" --format csv; expect_rc 0 "wgmma_serialized: allow"
for bad in "maybe" "allow 1" "[1]"; do
	sed -i "s/^wgmma_serialized: .*/wgmma_serialized: $bad/" "$T/bad.yaml"
	run check --arch sm_89 --shape 1x8x512x64 --space "$T/bad.yaml"
	expect_bad_input "bad.yaml:[0-9]+: key 'wgmma_serialized': "
done

# a shard with no unit says so and is no failure (a SLURM array wider than the campaign)
run search --arch sm_89 --shape 1x8x512x64 --shard 1/2 --db "$T/shard.db"
expect_rc 0 "an empty shard"
expect_err "^fatune: shard 1/2 has nothing to do: the campaign has 1 unit"
[ ! -e "$T/shard.db" ] || fail "an empty shard created a database"
echo "ok"
