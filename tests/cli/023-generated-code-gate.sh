# 023-generated-code-gate: strings from an untrusted database or space never become code (issue 18.1).
# A merged shard's family, a best row's date, a config's names: each attack of the issue is replayed
# against build_config.h and the dispatch table (C and C++), and every header must compile on its own
# with -Wall -Werror, keep the code's meaning, and define nothing that fatune did not write.
. "$FT_TEST_LIB"
REC="$T/rec.db"
sql_load "$REC" "$FATUNE_SOURCE_DIR/tests/data/recorded_h100_campaign.sql"
CC=${CC:-cc}
command -v "$CC" >/dev/null || { echo "no C compiler: skipped"; exit 77; }
CXX=$(command -v c++ || command -v g++ || true)

# compile_ok HEADER WHAT: a program that includes HEADER and relies on `if` compiles with -Werror (C11,
# trigraphs on; and C++ when there is a compiler and the header is C++) and returns 0 when run
compile_ok() {
	printf '#include "%s"\nint main(void) { if (0) return 1; return 0; }\n' "$1" >"$T/prog.c"
	"$CC" -std=c11 -Wall -Wextra -Werror -I"$T" -o "$T/prog" "$T/prog.c" 2>"$T/cc.err" ||
		{ cat "$T/cc.err" >&2; fail "$2: the C program does not compile"; }
	"$T/prog" || fail "$2: the header changed what 'if' means"
}
compile_ok_cxx() {
	[ -n "$CXX" ] || return 0
	printf '#include "%s"\nint main() { if (0) return 1; return 0; }\n' "$1" >"$T/prog.cc"
	"$CXX" -std=c++14 -trigraphs -Wall -Wextra -Werror -I"$T" -o "$T/prog" "$T/prog.cc" 2>"$T/cc.err" ||
		{ cat "$T/cc.err" >&2; fail "$2: the C++ program does not compile"; }
	"$T/prog" || fail "$2: the header changed what 'if' means"
}
# no_foreign HEADER WHAT: no preprocessor line that fatune does not write
no_foreign() {
	! grep -qE '^[[:space:]]*#[[:space:]]*(include|undef|pragma|line)' "$1" || fail "$2: an #include/#undef/#pragma/#line"
	! grep -qE '^[[:space:]]*#[[:space:]]*define[[:space:]]+(if|int|q)\b' "$1" || fail "$2: a foreign #define"
}

# one shard of a replayed search, then the attacks
run search --replay "$REC" --arch sm_90 --shape 1x8x512x64 --db "$T/shard.db" --quiet; expect_rc 0 "replay"

# 1. family='*/int q;/*' in a merged shard: a program that uses q must not compile
sql "$T/shard.db" "UPDATE runs SET family='*/int q;/*'; DELETE FROM best"
run db merge "$T/merged.db" "$T/shard.db"; expect_rc 0 "merge"
for style in c cxx; do
	run export --dispatch --allow-replayed --db "$T/merged.db" --arch sm_90 --style $style -o "$T/d_$style.h"; expect_rc 0 "dispatch $style"
	no_foreign "$T/d_$style.h" "family in a merged shard ($style)"
done
compile_ok d_c.h "family in a merged shard"
compile_ok_cxx d_cxx.h "family in a merged shard"
printf '#include "d_c.h"\nint main(void) { return q; }\n' >"$T/q.c"
! "$CC" -std=c11 -I"$T" -o "$T/q" "$T/q.c" 2>/dev/null || fail "a program using q compiles: the family became code"

# 2. updated_at with a line break and a #define; 3. with an #include; 4. with a trigraph
for attack in "'*/' || char(10) || '#define if(x) if(!(x))' || char(10) || '/*'" \
	"'*/' || char(10) || '#include \"/etc/hostname\"' || char(10) || '/*'" \
	"'2026??/'" "'2026?' || char(10) || '?/'" "'x*' || char(10) || '/ #define if(x) if(!(x))'"; do
	sql "$T/merged.db" "UPDATE best SET updated_at = $attack"
	run export --dispatch --allow-replayed --db "$T/merged.db" --arch sm_90 --style c -o "$T/d.h"; expect_rc 0 "dispatch, updated_at=$attack"
	no_foreign "$T/d.h" "dispatch, updated_at=$attack"
	compile_ok d.h "dispatch, updated_at=$attack"
	run export --dispatch --allow-replayed --db "$T/merged.db" --arch sm_90 -o "$T/dx.h"; expect_rc 0
	compile_ok_cxx dx.h "C++ dispatch, updated_at=$attack"
	for style in c cxx; do
		run export --db "$T/merged.db" --arch sm_90 --shape 1x8x512x64 --style $style --allow-replayed -o "$T/b_$style.h"
		expect_rc 0 "build_config.h ($style), updated_at=$attack"
		no_foreign "$T/b_$style.h" "build_config.h ($style), updated_at=$attack"
	done
	compile_ok b_c.h "build_config.h, updated_at=$attack"
	compile_ok_cxx b_cxx.h "C++ build_config.h, updated_at=$attack"
done

# 5. a config naming a C keyword (int=3 would be `#define int 3`): refused, nothing written (build_config.h
# reads configs through their space, which has no such parameter; the dispatch table through the gate)
for name in int auto class _Bool A__B; do
	sql "$T/merged.db" "UPDATE best SET config = '$name=3'"
	run export --db "$T/merged.db" --arch sm_90 --shape 1x8x512x64 --style c --allow-replayed -o "$T/k.h"
	expect_rc 1 "config $name=3"
	expect_err "bad config '$name=3': unknown parameter '$name'"
	[ ! -e "$T/k.h" ] || fail "config $name=3: a header was written"
	run export --dispatch --allow-replayed --db "$T/merged.db" --arch sm_90 --style c -o "$T/k.h"
	expect_rc 1 "dispatch of config $name=3"
	expect_err "cannot be a name in generated code"
	[ ! -e "$T/k.h" ] || fail "dispatch of config $name=3: a header was written"
done

# 6. and a space cannot name a parameter or a define so in the first place
for name in int auto class; do
	sed "s/^  TILE_M: \[16, 32\]/  $name: [16, 32]/; s/TILE_M)/$name)/" "$TESTSPACES/good_minimal.yaml" >"$T/kw.yaml"
	sed -i "s|\.\./kernels/|$TESTSPACES/../kernels/|" "$T/kw.yaml"
	run check --arch sm_89 --shape 1x8x64x64 --space "$T/kw.yaml"
	expect_bad_input "parameter name '$name' cannot be used: it is a C or C\+\+ keyword"
	printf 'compile:\n  defines:\n    %s: 1\n' "$name" >"$T/def.yaml"
	cat "$TESTSPACES/good_minimal.yaml" "$T/def.yaml" | sed "s|\.\./kernels/|$TESTSPACES/../kernels/|" >"$T/kw.yaml"
	run check --arch sm_89 --shape 1x8x64x64 --space "$T/kw.yaml"
	expect_bad_input "'$name' cannot be defined: it is a C or C\+\+ keyword"
done
echo "ok"
