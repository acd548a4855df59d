# Merge every run of the campaign into one netCDF file (runs of different lengths NaN-padded).


rule merge_runs:
    input:
        run_files,
    output:
        campaign="results/{campaign}/campaign.nc",
    log:
        "results/{campaign}/logs/merge_runs.log",
    threads: 1
    resources:
        runtime=15,
        mem_mb=4000,
    conda:
        "../envs/tvbo.yaml"
    shell:
        "tvbo merge {input:q} --out {output.campaign:q} > {log:q} 2>&1"
