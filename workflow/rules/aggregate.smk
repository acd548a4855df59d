# Merge every run of the campaign into one netCDF file (runs of different lengths NaN-padded).
# Nothing else can run at this point (every later rule reads the campaign), so the merge takes
# every core it is given: `tvbo merge --jobs` reads the run files and combines the benchmarks'
# blocks in that many worker processes (the file does not depend on it). Two, not more: on a
# cluster a job asking for more CPUs than a node has never starts (the CI's single-node SLURM
# cluster has 2), and the measured gain is from the second worker (69 s -> 32 s on 700 runs).


rule merge_runs:
    input:
        run_files,
    output:
        campaign="results/{campaign}/campaign.nc",
    log:
        "results/{campaign}/logs/merge_runs.log",
    conda:
        "../envs/tvbo.yaml"
    threads: 2
    resources:
        runtime=15,
        mem_mb=6000,
    shell:
        "tvbo merge {input:q} --out {output.campaign:q} --jobs {threads} > {log:q} 2>&1"
