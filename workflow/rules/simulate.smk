# Simulation jobs. With runs_per_job: 1 (the default), one job per (benchmark, algorithm, seed,
# speed[, evaluators, overlap]): `tvbo run` writes the run file atomically, so an interrupted job
# never leaves a partial result for Snakemake to trust. With runs_per_job: n > 1, the seeds of
# each (benchmark, algorithm, speed[, evaluators, overlap]) are grouped n at a time (seed_groups
# in common.smk) and one job per group runs `tvbo run-many`, which writes each run file
# atomically as soon as its run ends, the same file a single-run job writes; rule k
# (simulate_runs_<k>) owns the k-th group of seeds, so the run files, their names and the merge
# are unchanged. An interrupted group job reruns its group. A benchmark's shared oracle table
# (oracle.smk), if any, is an input and passed as --oracle-table by simulate_options. {par} is
# the parallel-evaluators suffix of a run file ('' for the sequential loop; parallel_options).


if config["runs_per_job"] == 1:

    rule simulate_run:
        input:
            data=benchmark_data_file,
            oracle=oracle_table_file,
        output:
            run="results/{campaign}/runs/{benchmark}/{algorithm}/seed{seed}_speed{speed}{par}.nc",
        log:
            "results/{campaign}/logs/simulate/{benchmark}/{algorithm}/"
            "seed{seed}_speed{speed}{par}.log",
        benchmark:
            "results/{campaign}/benchmarks/simulate/{benchmark}/{algorithm}/"
            "seed{seed}_speed{speed}{par}.tsv"
        conda:
            "../envs/tvbo.yaml"
        threads: 1
        resources:
            runtime=60,
            mem_mb=2000,
        params:
            options=simulate_options,
            parallel=parallel_options,
        shell:
            # BLAS threads pinned to the job's threads: the cores a scheduler grants are the
            # cores the linear algebra uses (and `measured` compute times stay comparable).
            "OMP_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads} MKL_NUM_THREADS={threads} "
            "tvbo run --benchmark {wildcards.benchmark:q} --algorithm {wildcards.algorithm:q} "
            "--seed {wildcards.seed} --speed {wildcards.speed} {params.options} "
            "{params.parallel} --out {output.run:q} 2> {log:q}"

else:
    for _index, _seeds in enumerate(seed_groups()):

        rule:
            name:
                f"simulate_runs_{_index}"
            input:
                data=benchmark_data_file,
                oracle=oracle_table_file,
            output:
                group_run_files(_seeds),
            log:
                f"results/{{campaign}}/logs/simulate/{{benchmark}}/{{algorithm}}/"
                f"{group_label(_seeds)}_speed{{speed}}{{par}}.log",
            benchmark:
                f"results/{{campaign}}/benchmarks/simulate/{{benchmark}}/{{algorithm}}/"
                f"{group_label(_seeds)}_speed{{speed}}{{par}}.tsv"
            conda:
                "../envs/tvbo.yaml"
            threads: 1
            resources:
                runtime=60 * len(_seeds),
                mem_mb=2000,
            params:
                options=simulate_options,
                parallel=parallel_options,
                seeds=" ".join(str(s) for s in _seeds),
            shell:
                "OMP_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads} "
                "MKL_NUM_THREADS={threads} "
                "tvbo run-many --benchmark {wildcards.benchmark:q} "
                "--algorithm {wildcards.algorithm:q} --seeds {params.seeds} "
                "--speed {wildcards.speed} {params.options} {params.parallel} "
                "--out {output:q} 2> {log:q}"
