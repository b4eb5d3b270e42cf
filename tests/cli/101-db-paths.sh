# 101-db-paths: one gate before SQLite sees a database path (ft_db_path_ok): a fifo, a directory or a
# device node given as --db, --replay, a merge input or a merge output is refused with one line and
# exit 2, nothing written to it or beside it (issue 18, item 2: a block device given as --db got
# 'SQLite format 3' written over its first 44,977 bytes). The device nodes need root (mknod).
. "$FT_TEST_LIB"
REC="$T/recorded.db"
sql_load "$REC" "$FATUNE_SOURCE_DIR/tests/data/recorded_h200.sql"
run search --replay "$REC" --arch sm_90 --shape 1x8x512x64 --quiet --db "$T/good.db"; expect_rc 0
S="search --arch sm_89 --shape 1x2x64x64 --space $TESTSPACES/fault.yaml --quiet"
mkdir "$T/d"
mkfifo "$T/d/fifo"
mkdir "$T/d/dir"
nodes="fifo dir"
if [ "$(id -u)" -eq 0 ]; then
	mknod "$T/d/null" c 1 3		# /dev/null's numbers: what reaches it is lost, nothing else
	mknod "$T/d/blk" b 7 250	# a loop device number nothing is attached to
	nodes="$nodes null blk"
else
	echo "(not root: the device-node part is skipped)"
fi
refused() { # WHAT: one line, exit 2, within the time limit (a fifo must not block)
	expect_bad_input "$1"
	[ "$(ls "$T/d" | sort | tr '\n' ' ')" = "$(echo $nodes | tr ' ' '\n' | sort | tr '\n' ' ')" ] ||
		{ ls -la "$T/d"; fail "something was written beside the refused path"; }
}
for n in $nodes; do
	p="$T/d/$n"
	kind="a fifo|a directory|a character device|a block device"
	set +e; timeout 20 "$FATUNE" query --runs --db "$p" >"$T/out" 2>"$T/err"; rc=$?; set -e
	refused "tuning database '.*$n' is ($kind), not a database file; nothing was written"
	set +e; timeout 20 "$FATUNE" $S --db "$p" >"$T/out" 2>"$T/err"; rc=$?; set -e
	refused "tuning database '.*$n' is ($kind)"
	set +e; timeout 20 "$FATUNE" search --replay "$p" --arch sm_90 --shape 1x8x512x64 --quiet --db "$T/r.db" >"$T/out" 2>"$T/err"; rc=$?; set -e
	refused "'.*$n' is ($kind)"
	set +e; timeout 20 "$FATUNE" db merge "$p" "$T/good.db" >"$T/out" 2>"$T/err"; rc=$?; set -e
	refused "tuning database '.*$n' is ($kind)"
	set +e; timeout 20 "$FATUNE" db merge "$T/m.db" "$p" >"$T/out" 2>"$T/err"; rc=$?; set -e
	refused "merge input '.*$n' is ($kind)"
	[ ! -e "$T/m.db" ] || fail "a refused merge input left an output"
done
# a fifo where SQLite keeps the WAL: refused before SQLite would open it
cp "$T/good.db" "$T/w.db"; mkfifo "$T/w.db-wal"
set +e; timeout 20 "$FATUNE" query --runs --db "$T/w.db" >"$T/out" 2>"$T/err"; rc=$?; set -e
expect_bad_input "w.db-wal' beside tuning database '.*w.db' is a fifo"
set +e; timeout 20 "$FATUNE" db merge "$T/m.db" "$T/w.db" >"$T/out" 2>"$T/err"; rc=$?; set -e
expect_bad_input "w.db-wal' beside merge input"
[ -p "$T/w.db-wal" ] || fail "the fifo was replaced"
echo ok
