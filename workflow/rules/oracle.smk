# One oracle job per benchmark configuration: `tvbo oracle` builds the f*(t) grid (times, f*,
# argmax) that every run of the benchmark would otherwise rebuild, and writes it atomically; each
# simulate_run job of that benchmark reads it (--oracle-table) after checking it was built for
# its exact configuration. Benchmarks with closed-form or data maxima get no table (see
# oracle_table_file in common.smk).


rule oracle_table:
    input:
        data=benchmark_data_file,
    output:
        table="results/{campaign}/oracles/{benchmark}.npz",
    log:
        "results/{campaign}/logs/oracle/{benchmark}.log",
    benchmark:
        "results/{campaign}/benchmarks/oracle/{benchmark}.tsv"
    conda:
        "../envs/tvbo.yaml"
    threads: 1
    resources:
        runtime=30,
        mem_mb=2000,
    params:
        options=oracle_options,
    shell:
        "OMP_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads} MKL_NUM_THREADS={threads} "
        "tvbo oracle --benchmark {wildcards.benchmark:q} {params.options} "
        "--out {output.table:q} 2> {log:q}"
