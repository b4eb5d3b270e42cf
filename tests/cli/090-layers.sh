# 090-layers: tuner/ has no include cycle between modules or folders and no folder includes one above it in tuner/README.md.
. "$FT_TEST_LIB"

L="$FATUNE_SOURCE_DIR/tools/layers.py"
python3 "$L" --root "$FATUNE_SOURCE_DIR" >"$T/out" 2>"$T/err" || { cat "$T/out" "$T/err" >&2; fail "tools/layers.py found problems"; }
grep -q "^layers: no cycles, no upward includes" "$T/out" || fail "layers.py did not say the tree is clean"
grep -qE "^folders: [0-9]+ on [0-9]+ floors" "$T/out" || fail "layers.py printed no folder floors"

# the checker itself: a copy with a planted module cycle, a folder cycle and an upward include fails
mkdir -p "$T/r"
cp -r "$FATUNE_SOURCE_DIR/tuner" "$T/r/tuner"
echo '#include "run/worker.h"' >>"$T/r/tuner/run/job.h"
python3 "$L" --root "$T/r" >"$T/out" 2>&1 && rc=0 || rc=$?
[ "$rc" -eq 1 ] || { cat "$T/out" >&2; fail "a module cycle should exit 1, got $rc"; }
grep -qE "module cycle: (run/[a-z_]+ <-> )*run/job <-> (run/[a-z_]+ <-> )*run/worker" "$T/out" || { cat "$T/out" >&2; fail "module cycle not named"; }

cp -r "$FATUNE_SOURCE_DIR/tuner/." "$T/r/tuner/"
echo '#include "search/search.h"' >>"$T/r/tuner/db/db.h"
python3 "$L" --root "$T/r" >"$T/out" 2>&1 && rc=0 || rc=$?
[ "$rc" -eq 1 ] || { cat "$T/out" >&2; fail "an upward include should exit 1, got $rc"; }
grep -q "folder cycle: db <-> search" "$T/out" || { cat "$T/out" >&2; fail "folder cycle not named"; }
grep -q "db/db includes search/search, but search/ sits below db/" "$T/out" || { cat "$T/out" >&2; fail "upward include not named"; }

# a folder missing from the README's table is named
cp -r "$FATUNE_SOURCE_DIR/tuner/." "$T/r/tuner/"
mkdir "$T/r/tuner/extra" && printf '/* x */\n#include "base/err.h"\n' >"$T/r/tuner/extra/x.c"
python3 "$L" --root "$T/r" --quiet >"$T/out" 2>&1 && rc=0 || rc=$?
[ "$rc" -eq 1 ] && grep -q "folder extra/ is not in tuner/README.md" "$T/out" || { cat "$T/out" >&2; fail "unlisted folder not caught"; }
echo "ok"
