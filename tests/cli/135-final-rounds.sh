# 135-final-rounds: bench/final_rounds.py reads how a race final's rounds drifted from its rows' logs. The fake
# runner's @drift=1 is a GPU that gets 1 % slower with every timed job, and @tie gives every config one time, so
# a finalist's time says only when it ran: --by-round must show each round slower than the one before and, within
# round 1, the last places slower than the first; the default form (round 1 over the later rounds) below 1 in every
# quarter; over a FATUNE_RACE_ROUNDS=5 final, --by-round reads its five rounds. A final smaller than
# --min-finalists is not read; a database that cannot be opened is one line, exit 2. The finals here are the rounds'
# (FATUNE_RACE_FINAL=rounds), a job per finalist per round, whose places the script was written to read.
. "$FT_TEST_LIB"
export FATUNE_RACE_FINAL=rounds
FR="$FATUNE_SOURCE_DIR/bench/final_rounds.py"

run search --arch sm_90 --shape 1x8x512x64 --space "$SPACES/attention.yaml" --runner fake:@tie,@drift=1 --db "$T/d.db" --quiet
expect_rc 0
n=$(sql "$T/d.db" "SELECT count(*) FROM trials WHERE reason LIKE 'race final%' AND log LIKE '%round 3: %'")
[ "$n" -ge 4 ] || fail "the search stored $n final rows with three rounds logged (want >= 4)"

python3 "$FR" --by-round --min-finalists 2 "$T/d.db" >"$T/by" 2>"$T/err" || { cat "$T/err" >&2; fail "final_rounds.py --by-round failed"; }
python3 - "$T/by" <<'PY' || fail "--by-round: $(cat "$T/by")"
import re, sys
text = open(sys.argv[1]).read()
assert "1 finals of >= 2 finalists" in text, text
rounds = {}
for line in text.splitlines():
    m = re.match(r"\s+round (\d): (.*)", line)
    if m:
        rounds[int(m.group(1))] = [float(x) for x in re.findall(r"Q\d ([0-9.]+) \(\d+\)", m.group(2))]
assert sorted(rounds) == [1, 2, 3] and all(len(q) == 4 for q in rounds.values()), rounds
mean = {k: sum(v) / 4 for k, v in rounds.items()}
assert mean[1] < mean[2] < mean[3], f"the rounds do not drift slower: {mean}"
assert rounds[1][3] > rounds[1][0], f"round 1's last places are not slower than its first: {rounds[1]}"
PY

# a final of FATUNE_RACE_ROUNDS=5: --by-round reads its five rounds, each slower than the one before
FATUNE_RACE_ROUNDS=5 run search --arch sm_90 --shape 1x8x512x64 --space "$SPACES/attention.yaml" --runner fake:@tie,@drift=1 --db "$T/d5.db" --quiet
expect_rc 0
python3 "$FR" --by-round --min-finalists 2 "$T/d5.db" >"$T/by5" || fail "final_rounds.py --by-round (5 rounds) failed"
python3 - "$T/by5" <<'PY' || fail "--by-round over 5 rounds: $(cat "$T/by5")"
import re, sys
rounds = {int(m.group(1)): [float(x) for x in re.findall(r"Q\d ([0-9.]+) \(\d+\)", m.group(2))]
          for m in re.finditer(r"round (\d+): (.*)", open(sys.argv[1]).read())}
assert sorted(rounds) == [1, 2, 3, 4, 5], rounds
mean = [sum(rounds[k]) / len(rounds[k]) for k in range(1, 6)]
assert mean == sorted(mean) and mean[0] < mean[4], f"the rounds do not drift slower: {mean}"
PY

python3 "$FR" --min-finalists 2 "$T/d.db" >"$T/r1" || fail "final_rounds.py failed"
python3 - "$T/r1" <<'PY' || fail "round 1 over the later rounds: $(cat "$T/r1")"
import re, sys
q = [float(x) for x in re.findall(r"Q\d ([0-9.]+) \(\d+\)", open(sys.argv[1]).read())]
assert len(q) == 4 and all(x < 1 for x in q), q
PY

python3 "$FR" --by-round --min-finalists 5 "$T/d.db" >"$T/none" || fail "final_rounds.py --min-finalists 5 failed"
grep -q "0 finals of >= 5 finalists" "$T/none" || fail "a final of 4 was read with --min-finalists 5: $(cat "$T/none")"

set +e
python3 "$FR" "$T/missing/x.db" >"$T/out" 2>"$T/err"
rc=$?
set -e
expect_bad_input "final_rounds: .*missing/x.db"
echo ok
