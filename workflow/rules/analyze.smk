# Regret tables (mean +- standard error over seeds) and figures of the campaign, for the report.


rule regret_tables:
    input:
        campaign=rules.merge_runs.output.campaign,
    output:
        average_regret_csv=report(
            "results/{campaign}/tables/average_regret.csv",
            caption="../report/average_regret.rst",
            category="Tables",
            labels={"metric": "average regret", "format": "csv"},
        ),
        average_regret_md=report(
            "results/{campaign}/tables/average_regret.md",
            caption="../report/average_regret.rst",
            category="Tables",
            labels={"metric": "average regret", "format": "markdown"},
        ),
        time_integrated_regret_csv=report(
            "results/{campaign}/tables/time_integrated_regret.csv",
            caption="../report/time_integrated_regret.rst",
            category="Tables",
            labels={"metric": "time-integrated regret", "format": "csv"},
        ),
        time_integrated_regret_md=report(
            "results/{campaign}/tables/time_integrated_regret.md",
            caption="../report/time_integrated_regret.rst",
            category="Tables",
            labels={"metric": "time-integrated regret", "format": "markdown"},
        ),
    log:
        "results/{campaign}/logs/regret_tables.log",
    threads: 1
    resources:
        runtime=10,
        mem_mb=2000,
    conda:
        "../envs/tvbo.yaml"
    shell:
        'tvbo table {input.campaign:q} --outdir "$(dirname {output.average_regret_csv:q})" '
        "> {log:q} 2>&1"


rule figures:
    input:
        campaign=rules.merge_runs.output.campaign,
    output:
        regret=report(
            "results/{campaign}/figures/regret_vs_time.png",
            caption="../report/regret_vs_time.rst",
            category="Figures",
            labels={"figure": "regret vs time"},
        ),
        dataset_size=report(
            "results/{campaign}/figures/dataset_size_vs_time.png",
            caption="../report/dataset_size_vs_time.rst",
            category="Figures",
            labels={"figure": "dataset size vs time"},
        ),
        response_time=report(
            "results/{campaign}/figures/response_time_vs_dataset_size.png",
            caption="../report/response_time_vs_dataset_size.rst",
            category="Figures",
            labels={"figure": "response time vs dataset size"},
        ),
    log:
        "results/{campaign}/logs/figures.log",
    threads: 1
    resources:
        runtime=10,
        mem_mb=2000,
    conda:
        "../envs/tvbo.yaml"
    shell:
        'MPLBACKEND=Agg tvbo figures {input.campaign:q} --outdir "$(dirname {output.regret:q})" '
        "> {log:q} 2>&1"
