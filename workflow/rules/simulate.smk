# One simulation job per (benchmark, algorithm, seed, speed[, evaluators, overlap]): `tvbo run`
# writes the run file atomically, so an interrupted job never leaves a partial result.


rule simulate_run:
    input:
        data=benchmark_data_file,
    output:
        run="results/{campaign}/runs/{benchmark}/{algorithm}/seed{seed}_speed{speed}{par}.nc",
    log:
        "results/{campaign}/logs/simulate/{benchmark}/{algorithm}/seed{seed}_speed{speed}{par}.log",
    benchmark:
        "results/{campaign}/benchmarks/simulate/{benchmark}/{algorithm}/seed{seed}_speed{speed}{par}.tsv"
    params:
        options=simulate_options,
        parallel=parallel_options,
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
        "--seed {wildcards.seed} --speed {wildcards.speed} {params.options} {params.parallel} "
        "--out {output.run:q} 2> {log:q}"
