# One simulation job per (benchmark, algorithm, seed, speed): `tvbo run` writes the run file
# atomically, so an interrupted job never leaves a partial result for Snakemake to trust. Its
# benchmark's shared oracle table (oracle.smk), if any, is an input and passed as --oracle-table
# by simulate_options.


rule simulate_run:
    input:
        data=benchmark_data_file,
        oracle=oracle_table_file,
    output:
        run="results/{campaign}/runs/{benchmark}/{algorithm}/seed{seed}_speed{speed}.nc",
    log:
        "results/{campaign}/logs/simulate/{benchmark}/{algorithm}/seed{seed}_speed{speed}.log",
    benchmark:
        "results/{campaign}/benchmarks/simulate/{benchmark}/{algorithm}/seed{seed}_speed{speed}.tsv"
    params:
        options=simulate_options,
    threads: 1
    resources:
        runtime=60,
        mem_mb=2000,
    conda:
        "../envs/tvbo.yaml"
    shell:
        # BLAS threads pinned to the job's threads: the cores a scheduler grants are the cores
        # the linear algebra uses (and `measured` compute times stay comparable).
        "OMP_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads} MKL_NUM_THREADS={threads} "
        "tvbo run --benchmark {wildcards.benchmark:q} --algorithm {wildcards.algorithm:q} "
        "--seed {wildcards.seed} --speed {wildcards.speed} {params.options} "
        "--out {output.run:q} 2> {log:q}"
