# The papers' regret tables (mean +- standard error over seeds, bold/underline, normalised Overall
# row) in CSV, Markdown and LaTeX, the figures of the campaign, and the comparison with the
# published tables. Every output is in the report under the campaign's name (category) and one
# of the subcategories Tables / Figures / Paper comparison.


import shlex

from tvbo.analysis.settings_caveat import config_caveat  # noqa: E402

#: every figure rule writes this format, at this dpi and style (config `figures:`), and the
#: tables, curves and what-if summaries aggregate seeds as config `aggregate:` says
FIGURES = {"format": "png", "dpi": 150, "style": "paper", **config.get("figures", {})}
FIGURE_EXT = FIGURES["format"]
FIGURE_ARGS = shlex.join(
    ["--format", FIGURES["format"], "--dpi", str(FIGURES["dpi"]), "--style", FIGURES["style"]]
)
AGGREGATE_ARGS = shlex.join(["--aggregate", config.get("aggregate", "mean_se")])


rule regret_tables:
    input:
        campaign=rules.merge_runs.output.campaign,
    output:
        average_regret_csv=report(
            "results/{campaign}/tables/average_regret.csv",
            caption="../report/average_regret.rst",
            category=CAMPAIGN,
            subcategory="Tables",
            labels={"metric": "average regret", "format": "csv"},
        ),
        average_regret_md=report(
            "results/{campaign}/tables/average_regret.md",
            caption="../report/average_regret.rst",
            category=CAMPAIGN,
            subcategory="Tables",
            labels={"metric": "average regret", "format": "markdown"},
        ),
        average_regret_tex=report(
            "results/{campaign}/tables/average_regret.tex",
            caption="../report/average_regret.rst",
            category=CAMPAIGN,
            subcategory="Tables",
            labels={"metric": "average regret", "format": "latex"},
        ),
        average_regret_normalised=report(
            "results/{campaign}/tables/average_regret_normalised.csv",
            caption="../report/normalised_regret_table.rst",
            category=CAMPAIGN,
            subcategory="Tables",
            labels={"metric": "average regret", "format": "normalised csv"},
        ),
        time_integrated_regret_csv=report(
            "results/{campaign}/tables/time_integrated_regret.csv",
            caption="../report/time_integrated_regret.rst",
            category=CAMPAIGN,
            subcategory="Tables",
            labels={"metric": "time-integrated regret", "format": "csv"},
        ),
        time_integrated_regret_md=report(
            "results/{campaign}/tables/time_integrated_regret.md",
            caption="../report/time_integrated_regret.rst",
            category=CAMPAIGN,
            subcategory="Tables",
            labels={"metric": "time-integrated regret", "format": "markdown"},
        ),
        time_integrated_regret_tex=report(
            "results/{campaign}/tables/time_integrated_regret.tex",
            caption="../report/time_integrated_regret.rst",
            category=CAMPAIGN,
            subcategory="Tables",
            labels={"metric": "time-integrated regret", "format": "latex"},
        ),
        time_integrated_regret_normalised=report(
            "results/{campaign}/tables/time_integrated_regret_normalised.csv",
            caption="../report/normalised_regret_table.rst",
            category=CAMPAIGN,
            subcategory="Tables",
            labels={"metric": "time-integrated regret", "format": "normalised csv"},
        ),
    log:
        "results/{campaign}/logs/regret_tables.log",
    conda:
        "../envs/tvbo.yaml"
    threads: 1
    resources:
        runtime=10,
        mem_mb=2000,
    params:
        aggregate=AGGREGATE_ARGS,
        labels=label_options,
    shell:
        'tvbo table {input.campaign:q} --outdir "$(dirname {output.average_regret_csv:q})" '
        "{params.labels} {params.aggregate} > {log:q} 2>&1"


rule figures:
    input:
        campaign=rules.merge_runs.output.campaign,
    output:
        regret=report(
            f"results/{{campaign}}/figures/regret_vs_time.{FIGURE_EXT}",
            caption="../report/regret_vs_time.rst",
            category=CAMPAIGN,
            subcategory="Figures",
            labels={"figure": "regret vs time"},
        ),
        dataset_size=report(
            f"results/{{campaign}}/figures/dataset_size_vs_time.{FIGURE_EXT}",
            caption="../report/dataset_size_vs_time.rst",
            category=CAMPAIGN,
            subcategory="Figures",
            labels={"figure": "dataset size vs time"},
        ),
        response_time=report(
            f"results/{{campaign}}/figures/response_time_vs_dataset_size.{FIGURE_EXT}",
            caption="../report/response_time_vs_dataset_size.rst",
            category=CAMPAIGN,
            subcategory="Figures",
            labels={"figure": "response time vs dataset size"},
        ),
        ecdf=report(
            f"results/{{campaign}}/figures/regret_target_ecdf.{FIGURE_EXT}",
            caption="../report/regret_target_ecdf.rst",
            category=CAMPAIGN,
            subcategory="Figures",
            labels={"figure": "performance profile (ECDF of regret targets)"},
        ),
    log:
        "results/{campaign}/logs/figures.log",
    conda:
        "../envs/tvbo.yaml"
    threads: 1
    resources:
        runtime=10,
        mem_mb=2000,
    params:
        figure_args=FIGURE_ARGS,
        aggregate=AGGREGATE_ARGS,
        labels=label_options,
    shell:
        'MPLBACKEND=Agg tvbo figures {input.campaign:q} --outdir "$(dirname {output.regret:q})" '
        "{params.labels} {params.figure_args} {params.aggregate} > {log:q} 2>&1"


rule normalised_regret_figure:
    input:
        campaign=rules.merge_runs.output.campaign,
    output:
        figure=report(
            f"results/{{campaign}}/figures/normalised_regret.{FIGURE_EXT}",
            caption="../report/normalised_regret.rst",
            category=CAMPAIGN,
            subcategory="Figures",
            labels={"figure": "normalised average regret"},
        ),
    log:
        "results/{campaign}/logs/normalised_regret_figure.log",
    conda:
        "../envs/tvbo.yaml"
    threads: 1
    resources:
        runtime=10,
        mem_mb=2000,
    params:
        figure_args=FIGURE_ARGS,
        labels=label_options,
    shell:
        "MPLBACKEND=Agg tvbo compare {input.campaign:q} --paper none "
        '--outdir "$(dirname {output.figure:q})" {params.labels} {params.figure_args} > {log:q} 2>&1'


rule paper_comparison:
    input:
        campaign=rules.merge_runs.output.campaign,
    output:
        csv=report(
            "results/{campaign}/comparison/{paper}/paper_vs_tvbo.csv",
            caption="../report/paper_vs_tvbo.rst",
            category=CAMPAIGN,
            subcategory="Paper comparison",
            labels={"paper": "{paper}", "content": "table (csv)"},
        ),
        md=report(
            "results/{campaign}/comparison/{paper}/paper_vs_tvbo.md",
            caption="../report/paper_vs_tvbo.rst",
            category=CAMPAIGN,
            subcategory="Paper comparison",
            labels={"paper": "{paper}", "content": "table (markdown)"},
        ),
        tex=report(
            "results/{campaign}/comparison/{paper}/paper_vs_tvbo.tex",
            caption="../report/paper_vs_tvbo.rst",
            category=CAMPAIGN,
            subcategory="Paper comparison",
            labels={"paper": "{paper}", "content": "table (latex)"},
        ),
        figure=report(
            f"results/{{campaign}}/comparison/{{paper}}/normalised_regret.{FIGURE_EXT}",
            caption="../report/normalised_regret_vs_paper.rst",
            category=CAMPAIGN,
            subcategory="Paper comparison",
            labels={"paper": "{paper}", "content": "normalised regret figure"},
        ),
    log:
        "results/{campaign}/logs/paper_comparison_{paper}.log",
    conda:
        "../envs/tvbo.yaml"
    threads: 1
    resources:
        runtime=10,
        mem_mb=2000,
    params:
        figure_args=FIGURE_ARGS,
        aliases=paper_alias_options,
        labels=label_options,
        # the report caption's "settings differ: ..." line (tvbo.analysis.settings_caveat)
        settings_caveat=lambda wildcards: config_caveat(config, wildcards.paper),
    shell:
        "MPLBACKEND=Agg tvbo compare {input.campaign:q} --paper {wildcards.paper} "
        '{params.aliases} --outdir "$(dirname {output.csv:q})" {params.labels} {params.figure_args} > {log:q} 2>&1'
