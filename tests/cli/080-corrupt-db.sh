# 080-corrupt-db: a damaged database (header, first page, a middle page, the last page, truncated, damage under a WAL left behind) is refused by search, query and export with one line saying what, that nothing was written and how to recover; the file and its WAL stay byte-identical. A healthy file with a WAL left behind keeps the WAL's rows.
. "$FT_TEST_LIB"
# a real fatune file of ~740 pages: the model rejects ~6800 candidates, two are compiled
run search --arch sm_89 --shape 1x8x512x64 --budget 2 --db "$T/base.db" -q
expect_rc 0 "making the base database"
[ ! -e "$T/base.db-wal" ] || [ ! -s "$T/base.db-wal" ] || fail "a closed search left a WAL"
rm -f "$T/base.db-wal" "$T/base.db-shm"

# damage KIND SRC DST: a copy of SRC with KIND of damage (deterministic bytes)
damage() {
	python3 - "$1" "$2" "$3" <<'PY'
import random, sys
kind, src, dst = sys.argv[1:]
data = bytearray(open(src, "rb").read())
page = int.from_bytes(data[16:18], "big")
npages = len(data) // page
rnd = random.Random(kind)
def smash(off, n=256):
    data[off:off + n] = bytes(rnd.randrange(256) for _ in range(n))
if kind == "header":
    data[0:16] = b"not SQLite here\0"
elif kind == "first":
    data[100:108] = b"\xee" * 8            # page 1's B-tree header (sqlite_master)
    smash(108, 200)
elif kind == "middle":
    smash((npages // 2) * page)
elif kind == "last":
    smash((npages - 1) * page)
elif kind == "truncated":
    data = data[: (npages * 6 // 10) * page]
open(dst, "wb").write(bytes(data))
PY
}

# sha FILE: its sha256, or "none" if it does not exist
sha() { if [ -e "$1" ]; then sha256sum <"$1" | cut -d' ' -f1; else echo none; fi; }

# refused DB: search, query and export all refuse DB with the one damage line, and
# neither DB nor DB-wal changes by one byte
refused() {
	local db=$1 before wal_before
	before=$(sha "$db")
	wal_before=$(sha "$db-wal")
	run search --arch sm_89 --shape 1x8x512x64 --budget 2 --db "$db" -q
	expect_rc 1 "search into damaged $db"
	# one error line (a search without a GPU also notes that timing needs one)
	[ "$(grep -vc '^fatune: no GPU here' "$T/err")" -eq 1 ] || { cat "$T/err" >&2; fail "the refusal should be one line"; }
	expect_err "tuning database '$db' is corrupt or not a database \(PRAGMA quick_check: "
	expect_err "nothing was written to it: recover what it holds with 'sqlite3 $db .recover > fixed.sql', or pass --db with another file"
	run query --db "$db"; expect_rc 1 "query of damaged $db"; expect_err "corrupt or not a database.*nothing was written"
	run export --arch sm_89 --shape 1x8x512x64 --db "$db" -o "$T/x.h"
	expect_rc 1 "export of damaged $db"; expect_err "corrupt or not a database.*nothing was written"
	[ ! -e "$T/x.h" ] || fail "export wrote a header from a damaged database"
	[ "$(sha "$db")" = "$before" ] || fail "$db was modified"
	[ "$(sha "$db-wal")" = "$wal_before" ] || fail "$db-wal was modified"
}

# really_damaged DB: SQLite itself (on a copy) agrees that DB is damaged, so the test means something
really_damaged() {
	rm -f "$T/probe.db"*
	cp "$1" "$T/probe.db"
	[ ! -e "$1-wal" ] || cp "$1-wal" "$T/probe.db-wal"
	v=$(sql "$T/probe.db" "PRAGMA quick_check" 2>&1 | head -1 || true)
	[ "$v" != "ok" ] || fail "$1: the damage went unnoticed by SQLite itself, the test proves nothing"
}

for kind in header first middle last truncated; do
	damage $kind "$T/base.db" "$T/$kind.db"
	really_damaged "$T/$kind.db"
	refused "$T/$kind.db"
	echo "refused: $kind"
done

# a WAL left behind by a killed writer: commit into the WAL and exit without a checkpoint
leave_wal() {
	python3 - "$1" <<'PY'
import os, sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("PRAGMA wal_autocheckpoint = 0")
con.execute("UPDATE runs SET wall_s = 4242.5 WHERE id = 1")
os._exit(0)
PY
	[ -s "$1-wal" ] || fail "no WAL was left behind in $1"
}
# damage under the WAL: a middle page the WAL does not hold a copy of
cp "$T/base.db" "$T/walbad.db"
leave_wal "$T/walbad.db"
damage middle "$T/walbad.db" "$T/walbad.tmp" && cat "$T/walbad.tmp" >"$T/walbad.db"
really_damaged "$T/walbad.db"
refused "$T/walbad.db"
[ -s "$T/walbad.db-wal" ] || fail "the refusal lost the WAL"
echo "refused: damage under a WAL left behind"
# and the same with its -shm gone too (a copy of the two files only)
rm -f "$T/walbad.db-shm"
refused "$T/walbad.db"
echo "refused: damage under a WAL, no -shm"

# a healthy file with a WAL left behind is no damage: the search writes, the WAL's row survives
cp "$T/base.db" "$T/walok.db"
leave_wal "$T/walok.db"
run search --arch sm_89 --shape 1x8x512x64 --budget 2 --db "$T/walok.db" -q
expect_rc 0 "search into a healthy file with a WAL left behind"
[ "$(sql "$T/walok.db" "SELECT wall_s FROM runs WHERE id = 1")" = "4242.5" ] || fail "the WAL's committed row was lost"
[ "$(sql "$T/walok.db" "PRAGMA integrity_check")" = "ok" ] || fail "integrity lost"
echo "ok"
