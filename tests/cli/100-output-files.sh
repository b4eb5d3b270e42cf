# 100-output-files: every file export and report write goes through one writer (base/outfile.h):
# a link planted at the temporary name is never followed, a symbolic link, a device node or a
# read-only file at the target is refused (exit 2, one line, left as it was), and so is the
# database itself (issue 18, items 3 and 4). '-o -' writes to standard output.
. "$FT_TEST_LIB"
run search --arch sm_89 --shape 1x2x64x64 --space "$TESTSPACES/fault.yaml" --quiet; expect_rc 0
put_best
E="export --arch sm_89 --shape 1x8x512x64"
md5() { md5sum "$1" | cut -d" " -f1; }
mdb=$(md5 "$FATUNE_DB")
echo "precious" >"$T/victim"

# a link planted at the name the old writer used (OUT.<pid>.tmp): the pid is known before fatune
# starts, because the shell that execs it has it
mkdir "$T/o"
(sleep 1; exec "$FATUNE" $E -o "$T/o/h.h") >/dev/null 2>"$T/err" &
ln -s "$T/victim" "$T/o/h.h.$!.tmp"
wait $! || fail "export with a planted link failed: $(cat "$T/err")"
[ "$(cat "$T/victim")" = precious ] || fail "export wrote through a link planted at its temporary name"
grep -q "config  *NUM_WARPS_PER_BLOCK=4,TILE_M=64" "$T/o/h.h" || fail "export did not write its header"
(sleep 1; exec "$FATUNE" report -o "$T/o/r.html") >/dev/null 2>"$T/err" &
ln -s "$T/victim" "$T/o/r.html.$!.tmp"
wait $! || fail "report with a planted link failed: $(cat "$T/err")"
[ "$(cat "$T/victim")" = precious ] || fail "report wrote through a link planted at its temporary name"
[ "$(ls "$T/o" | grep -vc '\.tmp$')" -eq 2 ] || { ls -la "$T/o"; fail "a temporary file was left behind"; }

# a symbolic link at the target: refused, the link and what it points to left as they were
ln -s "$T/victim" "$T/link.h"
for cmd in "$E" "report"; do
	run $cmd -o "$T/link.h"; expect_bad_input "output '.*link.h' is a symbolic link"
	[ -L "$T/link.h" ] && [ "$(cat "$T/victim")" = precious ] || fail "$cmd replaced a symbolic link"
done
# a read-only file: refused (even for root), unchanged
echo "keep" >"$T/ro.h"; chmod 0444 "$T/ro.h"
run $E -o "$T/ro.h"; expect_bad_input "output '.*ro.h' is read-only \(mode 0444\)"
[ "$(cat "$T/ro.h")" = keep ] || fail "export replaced a read-only file"
# a fifo and a directory
mkfifo "$T/fifo"
run $E -o "$T/fifo"; expect_bad_input "output '.*fifo' is a fifo, not a regular file"
[ -p "$T/fifo" ] || fail "export replaced a fifo"
run report -o "$T/o"; expect_bad_input "output '.*/o' is a directory"
# the database itself, its WAL, or a hard link to it: refused, every trial kept
for out in "$FATUNE_DB" "$FATUNE_DB-wal" "$FATUNE_DB-shm"; do
	run $E -o "$out"; expect_bad_input "is the tuning database"
	run report -o "$out"; expect_bad_input "is the tuning database"
done
run export --dispatch --arch sm_89 -o "$FATUNE_DB"; expect_bad_input "is the tuning database"
ln "$FATUNE_DB" "$T/hard.db"
run report -o "$T/hard.db"; expect_bad_input "is the tuning database"
[ "$(md5 "$FATUNE_DB")" = "$mdb" ] || fail "the database was changed"
[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM best")" -eq 1 ] || fail "the database lost its rows"
# device nodes (root only: mknod): refused and left a device
if [ "$(id -u)" -eq 0 ]; then
	mknod "$T/full" c 1 7
	run $E -o "$T/full"; expect_bad_input "output '.*full' is a character device"
	run report -o "$T/full"; expect_bad_input "is a character device"
	[ -c "$T/full" ] || fail "a device node was replaced by a regular file"
else
	echo "(not root: the device-node part is skipped)"
fi
# '-o -': standard output; an existing writable file keeps its mode
run $E -o -; expect_rc 0; expect_out "config  *NUM_WARPS_PER_BLOCK=4,TILE_M=64"
run report -o -; expect_rc 0; expect_out "<html"
echo old >"$T/mode.h"; chmod 0640 "$T/mode.h"
run $E -o "$T/mode.h"; expect_rc 0
[ "$(stat -c %a "$T/mode.h")" = 640 ] || fail "the replaced file lost its mode"
echo ok
