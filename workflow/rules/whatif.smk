# Hardware what-if figures of a campaign with >= 2 speeds (tvbo/analysis/whatif.py): regret
# (query average and time-integrated), BOLT's n* and the dataset sizes, and the number of
# evaluations vs the speed factor, plus the table behind them. In the report under the
# campaign's name, subcategory What-if.


rule whatif_figures:
    input:
        campaign=rules.merge_runs.output.campaign,
    output:
        regret=report(
            f"results/{{campaign}}/whatif/regret_vs_speed.{FIGURE_EXT}",
            caption="../report/whatif_regret.rst",
            category=CAMPAIGN,
            subcategory="What-if",
            labels={"figure": "regret vs speed"},
        ),
        nstar=report(
            f"results/{{campaign}}/whatif/nstar_and_dataset_size_vs_speed.{FIGURE_EXT}",
            caption="../report/whatif_nstar.rst",
            category=CAMPAIGN,
            subcategory="What-if",
            labels={"figure": "n* and dataset size vs speed"},
        ),
        evaluations=report(
            f"results/{{campaign}}/whatif/evaluations_vs_speed.{FIGURE_EXT}",
            caption="../report/whatif_evaluations.rst",
            category=CAMPAIGN,
            subcategory="What-if",
            labels={"figure": "evaluations vs speed"},
        ),
        summary=report(
            "results/{campaign}/whatif/whatif_summary.csv",
            caption="../report/whatif_summary.rst",
            category=CAMPAIGN,
            subcategory="What-if",
            labels={"figure": "numbers (CSV)"},
        ),
    log:
        "results/{campaign}/logs/whatif_figures.log",
    conda:
        "../envs/tvbo.yaml"
    threads: 1
    resources:
        runtime=10,
        mem_mb=2000,
    params:
        figure_args=FIGURE_ARGS,
    shell:
        "MPLBACKEND=Agg tvbo whatif {input.campaign:q} "
        '--outdir "$(dirname {output.summary:q})" {params.figure_args} > {log:q} 2>&1'
