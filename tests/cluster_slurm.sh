#!/usr/bin/env bash
# `make check-cluster`: a real single-node Slurm cluster (munged, slurmctld, slurmd as root,
# no systemd) runs the job array of `bucketsim sweep --emit slurm`, and the CSV merged by
# `--collect` must equal the one of `sweep -j` byte for byte.  The daemons are stopped by their
# pid files when the script ends, whatever happens.
. "$(dirname "$0")/e2e_lib.sh"
T=$E2E_TMP
B=$(realpath "$BUCKETSIM")
for p in munged slurmctld slurmd sbatch squeue; do
	command -v "$p" >/dev/null || { fail cluster-tools "$p not installed (make deps-cluster)"; e2e_done; exit; }
done
[ "$(id -u)" = 0 ] || { fail cluster-root "the single-node cluster runs its daemons as root"; e2e_done; exit; }

host=$(hostname -s)
mkdir -p "$T/state" "$T/spool" "$T/munge"
chmod 700 "$T/munge"
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$T/munge/munge.key"
# Ports away from Slurm's defaults, so a real cluster on the machine is not disturbed.
cat > "$T/slurm.conf" <<EOF
ClusterName=bucketsim
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
AuthInfo=socket=$T/munge/munge.socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$T/slurm.conf
stop_daemons() {
	for f in "$T/slurmd.pid" "$T/slurmctld.pid" "$T/munge/munged.pid"; do
		[ -s "$f" ] || continue
		pid=$(cat "$f")
		kill "$pid" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	done
	rm -rf "$T"
}
trap stop_daemons EXIT

t0=$(date +%s)
munged --force --socket="$T/munge/munge.socket" --key-file="$T/munge/munge.key" \
	--pid-file="$T/munge/munged.pid" --log-file="$T/munge/munged.log" \
	--seed-file="$T/munge/munged.seed" && ok munged-started || fail munged-started "$(tail -3 "$T/munge/munged.log")"
slurmctld -f "$SLURM_CONF" && ok slurmctld-started || fail slurmctld-started "$(tail -3 "$T/slurmctld.log")"
slurmd -f "$SLURM_CONF" && ok slurmd-started || fail slurmd-started "$(tail -3 "$T/slurmd.log")"
for _ in $(seq 100); do
	sinfo -h -o %T 2>/dev/null | grep -q idle && break
	sleep 0.2
done
sinfo -h -o %T | grep -q idle && ok node-idle || fail node-idle "$(sinfo 2>&1 | tail -2)"

A=(--trace alpaca --set workload.num_requests=200 --axis preset=vllm,distserve --axis workload.rate=4,16 --seed 3)
expect_exit 0 sweep-local "$B" sweep "${A[@]}" -j 2 -o "$T/local"
# two points a task (0.0202 s estimated a point, 0.05 s a task), an sbatch option passed through
expect_exit 0 sweep-emit-slurm "$B" sweep "${A[@]}" -o "$T/slurm" --emit slurm --task-seconds 0.05 --sbatch --time=10
[ "$(cat "$T/stdout")" = "$T/slurm/sweep.sbatch" ] && ok emit-path || fail emit-path "$(cat "$T/stdout")"
grep -q '^#SBATCH --array=1-2$' "$T/slurm/sweep.sbatch" && grep -q '^per=2$' "$T/slurm/sweep.sbatch" && ok emit-array || fail emit-array "$(grep -E 'array|^per' "$T/slurm/sweep.sbatch")"
job=$(sbatch --parsable "$T/slurm/sweep.sbatch")
[ -n "$job" ] && ok sbatch || fail sbatch "no job id"
for _ in $(seq 600); do
	[ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break
	sleep 0.2
done
[ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && ok array-finished || fail array-finished "$(squeue)"
n=$(ls "$T"/slurm/points/*/summary.json 2>/dev/null | wc -l)
[ "$n" -eq 4 ] && ok array-points || fail array-points "$n of 4 summaries; $(cat "$T"/slurm/points/slurm-*.out 2>/dev/null | head -5)"
# one log per task, named by the job's id and the task's (slurm-%A_%a.out); the job's time
# limit is the one given (10 minutes)
[ "$(cd "$T/slurm/points" && ls slurm-*.out | tr '\n' ' ')" = "slurm-${job}_1.out slurm-${job}_2.out " ] && ok array-logs || fail array-logs "$(ls "$T/slurm/points")"
[ -z "$(find "$T/slurm/points" -name '*.err' -empty)" ] && ok array-no-empty-err || fail array-no-empty-err "$(ls "$T/slurm/points")"
tl=$(scontrol show job "$job" 2>/dev/null | grep -o 'TimeLimit=[^ ]*' | head -1)
[ -z "$tl" ] || [ "$tl" = TimeLimit=00:10:00 ] && ok array-time-limit || fail array-time-limit "$tl"
expect_exit 0 collect "$B" sweep --collect "$T/slurm"
cmp -s "$T/local/sweep.csv" "$T/slurm/sweep.csv" && ok slurm-equals-local || fail slurm-equals-local "$(diff "$T/local/sweep.csv" "$T/slurm/sweep.csv" | head -5)"
[ "$(wc -l < "$T/slurm/sweep.csv")" -eq 5 ] && ok slurm-rows || fail slurm-rows "$(wc -l < "$T/slurm/sweep.csv")"
echo "cluster: daemons up, array run and collected in $(( $(date +%s) - t0 )) s"
e2e_done
