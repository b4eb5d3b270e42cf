# 040-repeated-options: a single-valued option given twice is exit 2 naming both values (never "the last
# one wins"), in every command, because the option table parser checks it; a shape's own kv_heads/kv_len/
# layout contradicted by --kv-heads/--kv-len/--layout likewise; every error has one "fatune: error:" prefix.
. "$FT_TEST_LIB"

S="--shape 1x8x512x64"
run check --arch sm_80 --arch sm_89 $S;       expect_bad_input "^fatune: error: check: --arch given twice \('sm_80' and 'sm_89'\): give it once$"
run check --arch sm_89 $S --dtype fp16 --dtype bf16; expect_bad_input "--dtype given twice \('fp16' and 'bf16'\)"
run check --arch sm_89 $S --jobs 1 --jobs 2;  expect_bad_input "--jobs given twice"
run search --arch sm_89 $S --db "$T/a.db" --db "$T/b.db"; expect_bad_input "search: --db given twice"
[ ! -e "$T/a.db" ] && [ ! -e "$T/b.db" ] || fail "a refused search created a database"
run search --arch sm_89 $S --budget=3 --budget 4; expect_bad_input "--budget given twice \('3' and '4'\)"
run query --db "$T/a.db" --db "$T/b.db";      expect_bad_input "query: --db given twice"
run export --arch sm_89 $S -o "$T/x.h" --output "$T/y.h"; expect_bad_input "--output given twice"
run bench $S --best --timeout 5 --timeout 6;  expect_bad_input "bench: --timeout given twice"
run report --db "$T/a.db" --db "$T/a.db";     expect_bad_input "report: --db given twice"
# the repeatable ones still repeat, and a repeated flag is harmless
run check --arch sm_89 $S --causal --causal --format csv; expect_rc 0
run search --arch sm_89 --shape 1x8x512x64 --shape 1x8x1024x64 --db "$T/c.db" --budget 1 --quiet
[ "$rc" -ne 2 ] || fail "two --shape options were refused: $(cat "$T/err")"

# a shape's own key and the option both given, and different
run check --arch sm_89 --shape 1x8x512x64,kv_heads=2 --kv-heads 4
expect_bad_input "shape '1x8x512x64,kv_heads=2' sets kv_heads and the option --kv-heads says otherwise"
run check --arch sm_89 --shape 1x8x1x64,kv_len=1024 --kv-len 2048; expect_bad_input "sets kv_len and the option --kv-len"
run check --arch sm_89 --shape 1x8x512x64,layout=bshd --layout bhsd; expect_bad_input "sets layout and the option --layout"
# the same value twice is no contradiction
run check --arch sm_89 --shape 1x8x512x64,kv_heads=2 --kv-heads 2 --format csv; expect_rc 0

# one prefix: no error line names fatune twice
run db merge;                                 expect_bad_input "^fatune: error: db merge: "
run check --arch sm_42 $S;                    expect_bad_input "^fatune: error: "
grep -q 'fatune: error: fatune' "$T/err" && fail "doubled prefix: $(cat "$T/err")"
echo "ok"
