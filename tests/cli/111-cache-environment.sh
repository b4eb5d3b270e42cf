# 111-cache-environment: a CUBIN cache that cannot take an entry is the environment's failure, not
# the candidates': the search ends with one line naming the directory and FATUNE_CACHE_DIR, exit 1,
# and stores no compile_failed row (before the fix every candidate was stored compile_failed for good,
# exit 0). Cases: a regular file, a /proc path, a read-only directory, a full file system (a 64 KiB
# tmpfs, where root may mount one), and a cache directory that breaks in the middle of a run. After
# each, a search with a good cache compiles everything.
. "$FT_TEST_LIB"
MNT="$T/mnt"
cleanup() { mountpoint -q "$MNT" 2>/dev/null && umount "$MNT"; rm -rf "$T"; }
trap cleanup EXIT
# two candidates, each a real NVRTC compile (~1-2 s)
S="--arch sm_89 --shape 1x8x512x64 --space $TESTSPACES/static_smem_two.yaml --jobs 1 --quiet"
can_mount() { [ "$(id -u)" -eq 0 ] && mkdir -p "$MNT" && mount -t tmpfs -o size=64k tmpfs "$MNT" 2>/dev/null && umount "$MNT"; }

# bad_cache WHAT: the search with FATUNE_CACHE_DIR as set fails with the one line, stores no verdict
bad_cache() {
	run search $S
	expect_rc 1 "$1"
	[ "$(grep -c '^fatune: error:' "$T/err")" -eq 1 ] || { cat "$T/err"; fail "$1: not one error line"; }
	expect_err "^fatune: error: .*(cache|CUBIN).*FATUNE_CACHE_DIR"
	[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM trials WHERE status = 'compile_failed'")" -eq 0 ] ||
		fail "$1: a candidate was stored compile_failed: $(sql "$FATUNE_DB" "SELECT reason FROM trials WHERE status = 'compile_failed' LIMIT 1")"
}

touch "$T/afile"
FATUNE_CACHE_DIR="$T/afile" bad_cache "cache dir is a regular file"
FATUNE_CACHE_DIR="$T/afile/sub" bad_cache "cache dir under a regular file"
FATUNE_CACHE_DIR=/proc/self/fatune-cache bad_cache "cache dir under /proc"
if can_mount; then
	mount -t tmpfs -o size=64k,ro tmpfs "$MNT"
	FATUNE_CACHE_DIR="$MNT" bad_cache "read-only mount"
	umount "$MNT"
	mount -t tmpfs -o size=64k tmpfs "$MNT"
	mkdir "$MNT/cubin"
	dd if=/dev/zero of="$MNT/fill" bs=4k 2>/dev/null || true	# until the file system is full
	FATUNE_CACHE_DIR="$MNT" bad_cache "full file system"
	umount "$MNT"
	echo "note: read-only and full cases on a tmpfs"
elif [ "$(id -u)" -ne 0 ]; then
	mkdir -p "$T/ro/cubin" && chmod 555 "$T/ro/cubin"
	FATUNE_CACHE_DIR="$T/ro" bad_cache "read-only directory"
	chmod 755 "$T/ro/cubin"
	echo "note: no full-disk case (needs root to mount a tiny tmpfs)"
else
	echo "note: no read-only or full-disk case (cannot mount a tmpfs here)"
fi
[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM trials")" -eq 0 ] || fail "a trial was stored though the cache was unusable from the start"

# the cache breaks in the middle: the first candidate is compiled and stored, then the directory is
# replaced by a file; the second candidate's CUBIN cannot be stored
export FATUNE_CACHE_DIR="$T/cache"
"$FATUNE" search $S >"$T/out" 2>"$T/err" &
pid=$!
wait_rows "$FATUNE_DB" "SELECT count(*) FROM trials WHERE status = 'compiled'" 1
rm -rf "$T/cache" && touch "$T/cache"
set +e; wait $pid; rc=$?; set -e
[ "$rc" -eq 1 ] || { cat "$T/err"; fail "a run whose cache broke exited $rc, not 1"; }
expect_err "^fatune: error: the CUBIN cache failed, not the candidate"
[ "$(sql "$FATUNE_DB" "SELECT count(*) FROM trials WHERE status = 'compile_failed'")" -eq 0 ] ||
	fail "the candidate whose CUBIN could not be stored was stored compile_failed"
[ "$(sql "$FATUNE_DB" "SELECT outcome FROM runs ORDER BY id DESC LIMIT 1")" = failed ] || fail "the run is not marked failed"

# with a good cache, the same search compiles both (nothing was recorded against them)
rm -f "$T/cache"
run search $S
expect_rc 0 "search with a good cache"
[ "$(sql "$FATUNE_DB" "SELECT count(DISTINCT config) FROM trials WHERE status = 'compiled'")" -eq 2 ] ||
	fail "the search with a good cache did not compile both candidates"
echo "ok"
