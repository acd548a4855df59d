# Cluster execution (profiles/slurm, profiles/slurm-local; see profiles/README.md).
#
# Downloads run on the submit host: compute nodes of many clusters have no route to the internet,
# and a download is network-bound, not worth a queue slot.


localrules:
    data_download_intel,
    data_download_intel_locs,
    data_download_ozone,


# Fail fast when the SLURM executor is requested where SLURM is not installed. Without this
# check the local jobs run first and each submission then fails with a FileNotFoundError about
# `sacct` or `sbatch`, tens of seconds later and far from the real cause.
#
# Why `onstart`: Snakemake 9 parses this file BEFORE it chooses the executor, so only a handler
# that runs after the DAG is built and before the first job is scheduled can see
# `workflow.executor_plugin`. A dry run (-n) swaps in the `dryrun` executor and skips `onstart`,
# so `snakemake -n --profile profiles/slurm` cannot detect a missing SLURM; the real run fails
# before any job starts. (Only one `onstart` handler exists per workflow: the Snakefile's calls
# check_slurm_available() first.)
def check_slurm_available():
    """Called first by the Snakefile's only `onstart` handler (see above)."""
    import shutil

    from snakemake.exceptions import WorkflowError

    executor = workflow.executor_plugin
    if executor is not None and executor.name == "slurm":
        missing = [c for c in ("sbatch", "squeue", "scancel") if shutil.which(c) is None]
        if missing:
            raise WorkflowError(
                "the slurm executor was requested but "
                + ", ".join(f"`{c}`" for c in missing)
                + (" is" if len(missing) == 1 else " are")
                + " not on PATH: install SLURM or run locally with --cores N"
            )
