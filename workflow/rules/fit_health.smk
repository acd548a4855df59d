# Fit health of the campaign: shares of hyperparameter fits at a bound per algorithm and
# benchmark, runs whose temporal lengthscale ends above the horizon, runs stuck at a bound
# (degenerate_runs.csv) and the fitted l_T over virtual time per run. In the report under the
# campaign's name, subcategory "Fit health".


rule fit_health:
    input:
        campaign=rules.merge_runs.output.campaign,
    output:
        table=report(
            "results/{campaign}/fit_health/fit_health.csv",
            caption="../report/fit_health.rst",
            category=CAMPAIGN,
            subcategory="Fit health",
            labels={"content": "table (csv)"},
        ),
        markdown=report(
            "results/{campaign}/fit_health/fit_health.md",
            caption="../report/fit_health.rst",
            category=CAMPAIGN,
            subcategory="Fit health",
            labels={"content": "table (markdown)"},
        ),
        degenerate=report(
            "results/{campaign}/fit_health/degenerate_runs.csv",
            caption="../report/fit_health_degenerate.rst",
            category=CAMPAIGN,
            subcategory="Fit health",
            labels={"content": "degenerate runs (csv)"},
        ),
        figure=report(
            f"results/{{campaign}}/fit_health/lengthscale_time.{FIGURE_EXT}",
            caption="../report/fit_health_lengthscale_time.rst",
            category=CAMPAIGN,
            subcategory="Fit health",
            labels={"content": "fitted l_T over time"},
        ),
    log:
        "results/{campaign}/logs/fit_health.log",
    conda:
        "../envs/tvbo.yaml"
    threads: 1
    resources:
        runtime=10,
        mem_mb=2000,
    params:
        figure_args=FIGURE_ARGS,
    shell:
        'MPLBACKEND=Agg tvbo fit-health {input.campaign:q} --outdir "$(dirname {output.table:q})" '
        "{params.figure_args} > {log:q} 2>&1"
