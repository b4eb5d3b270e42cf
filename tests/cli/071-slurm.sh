# 071-slurm: a campaign over a real SLURM scheduler: munged, slurmctld and slurmd started on
# localhost with a generated slurm.conf, arrays of shards submitted with tools/slurm/fatune-array.sbatch,
# the merge as a dependent job, and the merged file compared with the same campaign run in one process.
# Skips (77) where the daemons are missing or cannot start (not root, no munge, ...).
. "$FT_TEST_LIB"
skip() { echo "SKIP: $*"; exit 77; }
export PATH="$PATH:/usr/sbin:/sbin"	# the daemons live in sbin, which a non-login PATH may lack
for c in munged slurmctld slurmd sbatch squeue sinfo; do
	command -v "$c" >/dev/null 2>&1 || skip "'$c' is missing (tools/deps.sh installs munge, slurmctld and slurmd)"
done
[ "$(id -u)" -eq 0 ] || skip "slurmd runs jobs as their user: needs root"
S="$T/slurm"
mkdir -p "$S/state" "$S/spool" "$S/log" "$T/results" "$T/replayed"
chmod 755 "$T" "$S"	# munged's socket must be reachable by the job's user
cleanup() {
	for f in slurmd slurmctld munged; do
		[ -s "$S/$f.pid" ] && kill "$(cat "$S/$f.pid")" 2>/dev/null
	done
	sleep 1
	rm -rf "$T"
}
trap cleanup EXIT
head -c 1024 /dev/urandom >"$S/munge.key"; chmod 400 "$S/munge.key"
munged --key-file="$S/munge.key" --socket="$S/munge.sock" --pid-file="$S/munged.pid" \
	--log-file="$S/log/munged.log" --seed-file="$S/munge.seed" --force >/dev/null 2>&1 ||
	skip "munged cannot start: $(tail -1 "$S/log/munged.log" 2>/dev/null)"
host=$(hostname -s)
port=$((20000 + RANDOM % 20000))	# two test runs on one host must not share ports
cat >"$S/slurm.conf" <<CONF
ClusterName=fatunetest
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$S/munge.sock
CredType=cred/munge
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SwitchType=switch/none
NodeName=$host CPUs=$(nproc) RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=10 State=UP OverSubscribe=YES
CONF
export SLURM_CONF="$S/slurm.conf"
slurmctld -c -i >/dev/null 2>&1 || skip "slurmctld cannot start: $(tail -1 "$S/log/slurmctld.log" 2>/dev/null)"
slurmd >/dev/null 2>&1 || skip "slurmd cannot start: $(tail -1 "$S/log/slurmd.log" 2>/dev/null)"
for i in $(seq 30); do
	sinfo -h -o %T 2>/dev/null | grep -qx idle && break
	[ "$i" -lt 30 ] || skip "no idle node after 30 s: $(tail -1 "$S/log/slurmd.log" 2>/dev/null)"
	sleep 1
done

REC="$T/recorded.db"
sql_load "$REC" "$FATUNE_SOURCE_DIR/tests/data/recorded_h200.sql"
SB="$FATUNE_SOURCE_DIR/tools/slurm/fatune-array.sbatch"
CAMP="$FATUNE_SOURCE_DIR/tests/campaigns"
export FATUNE FATUNE_LOCAL_DIR="$T/local"
cd "$T"
# no-GPU shards: the small campaign (7 units, feasibility) and the recorded one (2 units, timed from
# the H200 records: best rows), each an array whose merge waits for it
a=$(sbatch --parsable --array=0-2 -c 1 -o "$S/small-%a.out" "$SB" "$CAMP/small.yaml" "$T/results" --arch sm_89 --quiet)
b=$(sbatch --parsable --array=0-1 -c 1 -o "$S/rep-%a.out" "$SB" "$CAMP/replayed.yaml" "$T/replayed" --arch sm_90 --replay "$REC" --quiet)
ma=$(sbatch --parsable -c 1 --dependency=afterany:$a -o "$S/merge-small.out" "$SB" --merge "$T/results" 3)
mb=$(sbatch --parsable -c 1 --dependency=afterany:$b -o "$S/merge-rep.out" "$SB" --merge "$T/replayed" 2)
for i in $(seq 180); do
	[ -z "$(squeue -h -j "$a,$b,$ma,$mb" 2>/dev/null)" ] && break
	[ "$i" -lt 180 ] || { squeue; cat "$S"/*.out; fail "the jobs did not end within 180 s"; }
	sleep 1
done
for f in "$S"/*.out; do grep -q "fatune: error" "$f" && { cat "$f"; fail "a job failed: $f"; }; done
[ -s "$T/results/campaign.db" ] || { cat "$S"/*.out; fail "the merge job wrote no campaign.db"; }
grep -q "merged 3 files" "$S/merge-small.out" || { cat "$S/merge-small.out"; fail "the small merge did not take 3 shards"; }
grep -q "merged 2 files.*2 best rows" "$S/merge-rep.out" || { cat "$S/merge-rep.out"; fail "the recorded merge lacks its best rows"; }

# the same campaigns in one process
run search --arch sm_89 --campaign "$CAMP/small.yaml" --quiet --db "$T/one-small.db"; expect_rc 0
run search --arch sm_90 --campaign "$CAMP/replayed.yaml" --replay "$REC" --quiet --db "$T/one-rep.db"; expect_rc 0
trials() { sql "$1" "SELECT r.search_key || ' ' || t.config || ' ' || t.status || ' ' || coalesce(t.t_median_us, '-') FROM trials t JOIN runs r ON r.id = t.run_id ORDER BY 1"; }
best() { sql "$1" "SELECT arch || ' ' || b || 'x' || h || 'x' || s || 'x' || d || ' ' || causal || ' ' || config || ' ' || t_median_us FROM best ORDER BY 1"; }
[ "$(trials "$T/results/campaign.db")" = "$(trials "$T/one-small.db")" ] || fail "small: the shards' trials differ from one process's"
[ "$(sql "$T/results/campaign.db" "SELECT count(DISTINCT search_key) FROM runs")" -eq 3 ] || fail "small: not 3 searches"
[ "$(trials "$T/replayed/campaign.db")" = "$(trials "$T/one-rep.db")" ] || fail "recorded: the shards' trials differ"
[ -n "$(best "$T/one-rep.db")" ] && [ "$(best "$T/replayed/campaign.db")" = "$(best "$T/one-rep.db")" ] ||
	fail "recorded: best rows differ: $(best "$T/replayed/campaign.db") vs $(best "$T/one-rep.db")"
echo "ok (jobs $a, $b, $ma, $mb)"
