# Shared by rgpu's SLURM scripts (sourced, never run). SLURM starts them with
# an almost empty environment, so everything they need comes from rgpu.conf
# in the directory they are installed in (tests/slurm/rgpu.conf shows it).
set -euo pipefail
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
rgpu_slurm_dir=$(dirname "$0")
# shellcheck source=/dev/null
. "$rgpu_slurm_dir/rgpu.conf"
[ -n "${SLURM_CONF:-}" ] && export SLURM_CONF

# SLURM keeps what a script prints on stderr in its daemon's log.
rgpu_log() { echo "rgpu-slurm ${SLURM_SCRIPT_CONTEXT:-}: job ${SLURM_JOB_ID:-?}: $*" >&2; }

# The GPUs a job was given, as PrologSlurmctld wrote them into its
# AdminComment ("rgpu=host:port:gpu[=MiB],..."): one per line.
rgpu_job_gpus() {
  scontrol -o show job "$1" | tr ' ' '\n' | sed -n 's/^AdminComment=rgpu=//p' | tr ',' '\n'
}

# Where a job's devices and credential wait for its tasks on a node.
rgpu_job_env_file() { echo "$RGPU_RUN_DIR/job-$1.env"; }
