# 106-slurm-kill-copy: tools/slurm/fatune-array.sbatch keeps what a killed shard committed (issue 18,
# item 7: `cp` of the node-local file without its WAL held 0 of 2,617 committed trials). The script
# runs as an array task would (SLURM_ARRAY_* set, no scheduler needed); its fatune is a wrapper that
# kills the search with SIGKILL once trials are committed, as a time limit or the OOM killer would.
. "$FT_TEST_LIB"
mkdir -p "$T/results" "$T/local"
cat >"$T/camp.yaml" <<YAML
fatune_campaign: 1
spaces: [$SPACES/attention.yaml]
shapes: [1x8x512x64]
YAML
cat >"$T/wrap" <<'SH'
#!/bin/bash
# the search: started, killed -9 once 300 trials are committed; the count then (read-only, so
# nothing checkpoints the WAL) goes to $T/at-kill
if [ "$1" = search ]; then
	db=; prev=
	for a in "$@"; do [ "$prev" = --db ] && db=$a; prev=$a; done
	"$REAL" "$@" & pid=$!
	count() { python3 -c 'import sqlite3, sys
try:
    c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
    print(c.execute("SELECT count(*) FROM trials").fetchone()[0])
except Exception:
    print(0)' "$db"; }
	for i in $(seq 600); do [ "$(count)" -ge 300 ] && break; sleep 0.05; done
	kill -9 $pid; wait $pid
	count >"$OUTDIR/at-kill"
	exit 137
fi
exec "$REAL" "$@"
SH
chmod +x "$T/wrap"
set +e
REAL="$FATUNE" OUTDIR="$T" FATUNE="$T/wrap" FATUNE_LOCAL_DIR="$T/local" SLURM_ARRAY_JOB_ID=7 SLURM_ARRAY_TASK_ID=0 \
	SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_COUNT=1 \
	bash "$FATUNE_SOURCE_DIR/tools/slurm/fatune-array.sbatch" "$T/camp.yaml" "$T/results" --arch sm_89 --quiet \
	>"$T/out" 2>"$T/err"
rc=$?
set -e
[ "$rc" -eq 137 ] || { cat "$T/err"; fail "the task should end as its killed search did (137), not $rc"; }
k=$(cat "$T/at-kill")
[ "$k" -ge 300 ] || fail "the search was killed before 300 trials were committed ($k)"
[ -s "$T/results/shard-0.db" ] || { cat "$T/err"; fail "no shard file copied"; }
[ ! -e "$T/results/shard-0.db-wal" ] || fail "the shard was copied with a WAL beside it (a network file system cannot share it)"
got=$(sql "$T/results/shard-0.db" "SELECT count(*) FROM trials")
[ "$got" -eq "$k" ] || fail "the copied shard holds $got of the $k committed trials"
[ -z "$(ls -A "$T/local")" ] || fail "the node-local directory was not removed"
echo "ok ($got of $k trials)"
