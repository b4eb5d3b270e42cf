# 134-readme-strategies: the README's strategies example (bench/strategies.py over the recorded H100
# campaign, tests/data/recorded_h100_campaign.sql) still prints the two lines the README shows after
# its "...": the mean evaluations to within 5 % per strategy and transfer's worst final quality. Every
# search in it is a replay (no GPU, no compile), so the figures are exact and any change to a
# strategy's rules that moves them fails here until the README says what it prints now.
. "$FT_TEST_LIB"
sql_load "$T/rec.db" "$FATUNE_SOURCE_DIR/tests/data/recorded_h100_campaign.sql"
python3 - "$FATUNE_SOURCE_DIR/README.md" > "$T/want" <<'PY' || fail "the README's strategies example is gone"
import sys
lines = open(sys.argv[1]).read().split("\n")
cmd = [i for i, l in enumerate(lines)
       if l.startswith("$ python3 bench/strategies.py --recorded rec.db --seeds 10 --transfer")]
assert len(cmd) == 1, cmd
i = cmd[0] + 1
assert lines[i] == "...", lines[i]
i += 1
while not lines[i].startswith("```"):
    print(lines[i])
    i += 1
PY
(cd "$T" && FATUNE_CACHE_DIR="$T/cache" python3 "$FATUNE_SOURCE_DIR/bench/strategies.py" --fatune "$FATUNE" \
	--recorded rec.db --seeds 10 --transfer) >"$T/out" 2>"$T/err" || fail "bench/strategies.py: $(tail -5 "$T/err")"
n=$(wc -l <"$T/want")
[ "$n" -ge 1 ] || fail "the README shows no output for the strategies example"
if ! diff <(tail -n "$n" "$T/out") "$T/want" >"$T/diff"; then
	cat "$T/diff" >&2
	fail "bench/strategies.py prints other figures than the README's strategies example (diff above: < now, > README)"
fi
echo "the README's strategies example prints what it says ($n lines)"
