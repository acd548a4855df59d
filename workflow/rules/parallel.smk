# What-if figures of k asynchronous evaluators (tvbo/analysis/parallel_whatif.py): average query
# regret and time-integrated regret of the current recommendation vs k, one panel per
# (benchmark, speed), with and without overlap, plus the table behind them. In the report under
# the campaign's name, subcategory Parallel evaluators.


rule parallel_whatif_figures:
    input:
        campaign=rules.merge_runs.output.campaign,
    output:
        average=report(
            f"results/{{campaign}}/parallel/parallel_average_regret_vs_k.{FIGURE_EXT}",
            caption="../report/parallel_average_regret.rst",
            category=CAMPAIGN,
            subcategory="Parallel evaluators",
            labels={"figure": "average query regret vs k"},
        ),
        integrated=report(
            f"results/{{campaign}}/parallel/parallel_time_integrated_regret_vs_k.{FIGURE_EXT}",
            caption="../report/parallel_time_integrated_regret.rst",
            category=CAMPAIGN,
            subcategory="Parallel evaluators",
            labels={"figure": "time-integrated regret vs k"},
        ),
        summary=report(
            "results/{campaign}/parallel/parallel_whatif_summary.csv",
            caption="../report/parallel_summary.rst",
            category=CAMPAIGN,
            subcategory="Parallel evaluators",
            labels={"figure": "numbers (CSV)"},
        ),
    log:
        "results/{campaign}/logs/parallel_whatif_figures.log",
    conda:
        "../envs/tvbo.yaml"
    threads: 1
    resources:
        runtime=10,
        mem_mb=2000,
    params:
        figure_args=FIGURE_ARGS,
        aggregate=AGGREGATE_ARGS,
    shell:
        "MPLBACKEND=Agg tvbo parallel-whatif {input.campaign:q} "
        '--outdir "$(dirname {output.summary:q})" {params.figure_args} '
        "{params.aggregate} > {log:q} 2>&1"
