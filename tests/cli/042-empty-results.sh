# 042-empty-results: the query front door: plain `query` summarises the latest run (never every trial),
# every empty result says so on stderr (and names the shape a --layout filter hid), default tables fit
# 120 columns with --wide for all; check --log shows a full compile log with the hint; merge and replay
# name their file mistakes.
. "$FT_TEST_LIB"

sql_load "$FATUNE_DB" "$FATUNE_SOURCE_DIR/tests/data/recorded_h100_campaign.sql"
last=$(sql "$FATUNE_DB" "SELECT max(id) FROM runs")
nruns=$(sql "$FATUNE_DB" "SELECT count(*) FROM runs")
ntrials=$(sql "$FATUNE_DB" "SELECT count(*) FROM trials WHERE run_id = $last")

# plain query: a few lines about the latest run
run query; expect_rc 0
[ "$(wc -l <"$T/out")" -le 5 ] || { cat "$T/out"; fail "plain query printed more than a summary"; }
expect_out "^latest run $last \(of $nruns\): sm_90 "
expect_out "^  $ntrials trials:  ok $ntrials$"
expect_out "^  best: [0-9.]+ us  [A-Z_]+=[0-9]+"
expect_out "'fatune query --trials --run $last'"

# default tables fit 120 columns and say what they hid; --wide shows every column
for mode in --best --trials --runs; do
	run query $mode; expect_rc 0
	w=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$T/out")
	[ "$w" -le 120 ] || fail "query $mode is $w columns wide"
	expect_err "columns? hidden.*--wide shows every column"
	run query $mode --wide; expect_rc 0
	[ -s "$T/err" ] && fail "query $mode --wide said: $(cat "$T/err")"
done
head -1 "$T/out" | grep -q "fatune_version" || fail "--wide lacks a column"
run query --trials --wide --limit 1
w=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$T/out")
[ "$w" -gt 120 ] || fail "--wide is only $w columns: nothing to show"
# a config column of one space lists the values, naming the parameters once; csv keeps NAME=V
run query --trials --limit 3 --run 1; expect_rc 0
expect_err "^fatune: config lists the values of NUM_WARPS_PER_BLOCK,TILE_M,TILE_N,"
expect_out "^ *[0-9]+ +1 +[0-9]+,[0-9]+,[0-9]+,"
run query --trials --limit 3 --format csv; expect_rc 0; expect_out ",\"NUM_WARPS_PER_BLOCK=[0-9]+,TILE_M="

# empty results say so
run query --trials --status crashed; expect_rc 0
[ -s "$T/out" ] && fail "an empty table printed something"
expect_err "^fatune: no trials match these filters \($nruns runs in "
run query --best --arch sm_80; expect_rc 0
expect_err "^fatune: no best configs match"
run query --runs --arch sm_86 --format json; expect_rc 0
[ "$(tr -d ' \n' <"$T/out")" = "[]" ] || fail "empty json is not []"
expect_err "^fatune: no runs match"
# a layout filter that hides rows names the shape that has them
sql "$FATUNE_DB" "UPDATE runs SET layout = 'bshd' WHERE b = 1 AND h = 8 AND s = 512 AND d = 64"
run query --trials --shape 1x8x512x64; expect_rc 0
expect_err "^fatune: no trials for 1x8x512x64 \(layout bhsd\); [0-9]+ runs have 1x8x512x64,layout=bshd: pass --shape 1x8x512x64,layout=bshd$"
run query --trials --shape 1x8x512x64,layout=bshd --limit 1 --format csv; expect_rc 0; expect_out "1x8x512x64,layout=bshd"

# check --log: the full compile log after the table, and a hint in the reason
mkdir -p "$T/k"
cat >"$T/k/k.cu" <<'CU'
#include "fatune_abi.h"
extern "C" __global__ void k(const __grid_constant__ struct fatune_attn_params p)
{
	if (threadIdx.x == 0 && p.s_q > 0) ((float *)p.o)[0] = 0;
}
CU
cat >"$T/k/k.yaml" <<'YAML'
fatune_space: 1
name: k
template: {file: k.cu, kernel: k, shared_memory: static}
parameters: {X: [1]}
smem_bytes: 0
launch: {threads: 32, grid: [1, 1, 1]}
YAML
run check --arch sm_89 --shape 1x8x512x64 --space "$T/k/k.yaml" --log; expect_bad_input "--log prints compile logs: add --compile"
run check --compile --arch sm_89 --shape 1x8x512x64 --space "$T/k/k.yaml" --log --wide
expect_rc 1
expect_out "compile_failed  k.cu\(4\): error: class \"fatune_attn_params_v1\" has no member \"s_q\"; hint: the template reads 's_q', a field of ABI v2, but"
expect_out "^== X=1: compile_failed$"
expect_out "^1 error detected in the compilation of \"k.cu\""
# and the search records the kernel's family as cuda (it names none), with the hint in the reason
run search --arch sm_89 --shape 1x8x512x64 --space "$T/k/k.yaml" --db "$T/k.db" --quiet
expect_rc 1
[ "$(sql "$T/k.db" "SELECT family FROM runs")" = cuda ] || fail "a space without a family is not recorded as cuda"
sql "$T/k.db" "SELECT reason FROM trials" | grep -q "add 'abi: 2' under template" || fail "no hint in the stored reason"

# merge: an output that is also an input is refused; adding to an existing file is said
run db merge "$FATUNE_DB" "$FATUNE_DB"; expect_bad_input "merge input '.*' is the output '.*' itself"
cp "$T/k.db" "$T/a.db"
run db merge "$T/a.db" "$FATUNE_DB"; expect_rc 0
expect_err "'$T/a.db' existed: the inputs were added to it"
run db merge "$T/new.db" "$T/k.db"; expect_rc 0
[ -s "$T/err" ] && fail "a merge into a new file warned: $(cat "$T/err")"
# replay: a missing file is named as such
run search --arch sm_90 --shape 1x8x512x64 --replay "$T/nope.db"
expect_bad_input "--replay '$T/nope.db' cannot be read \(No such file or directory\)"
echo "ok"
