# Figures that correspond to the seed papers' figures (tvbo/analysis/paper_figures.py), for the
# papers named in config["paper_figures"]: sparq (average regret over steps), pegpucb (regret
# over steps and the proportion of steps each prior was used), boke (simple regret vs iteration
# and vs CPU time). Each rule writes the PNG and the CSV of the plotted numbers.


rule paper_figures_sparq:
    input:
        campaign=rules.merge_runs.output.campaign,
    output:
        figure=report(
            f"results/{{campaign}}/paper_figures/sparq_average_regret.{FIGURE_EXT}",
            caption="../report/paper_sparq.rst",
            category=config["campaign"],
            subcategory="Paper figures",
            labels={"paper": "SparQ-GP-UCB", "content": "figure"},
        ),
        numbers=report(
            "results/{campaign}/paper_figures/sparq_average_regret.csv",
            caption="../report/paper_sparq.rst",
            category=config["campaign"],
            subcategory="Paper figures",
            labels={"paper": "SparQ-GP-UCB", "content": "numbers (CSV)"},
        ),
    log:
        "results/{campaign}/logs/paper_figures_sparq.log",
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
        "MPLBACKEND=Agg tvbo paper-figures {input.campaign:q} --paper sparq "
        '--outdir "$(dirname {output.figure:q})" {params.labels} {params.figure_args} > {log:q} 2>&1'


rule paper_figures_pegpucb:
    input:
        campaign=rules.merge_runs.output.campaign,
    output:
        regret=report(
            f"results/{{campaign}}/paper_figures/pegpucb_regret.{FIGURE_EXT}",
            caption="../report/paper_pegpucb_regret.rst",
            category=config["campaign"],
            subcategory="Paper figures",
            labels={"paper": "PE-GP-UCB", "content": "regret figure"},
        ),
        regret_numbers=report(
            "results/{campaign}/paper_figures/pegpucb_regret.csv",
            caption="../report/paper_pegpucb_regret.rst",
            category=config["campaign"],
            subcategory="Paper figures",
            labels={"paper": "PE-GP-UCB", "content": "regret numbers (CSV)"},
        ),
        priors=report(
            f"results/{{campaign}}/paper_figures/pegpucb_prior_selection.{FIGURE_EXT}",
            caption="../report/paper_pegpucb_priors.rst",
            category=config["campaign"],
            subcategory="Paper figures",
            labels={"paper": "PE-GP-UCB", "content": "prior selection figure"},
        ),
        prior_numbers=report(
            "results/{campaign}/paper_figures/pegpucb_prior_selection.csv",
            caption="../report/paper_pegpucb_priors.rst",
            category=config["campaign"],
            subcategory="Paper figures",
            labels={"paper": "PE-GP-UCB", "content": "prior selection numbers (CSV)"},
        ),
    log:
        "results/{campaign}/logs/paper_figures_pegpucb.log",
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
        "MPLBACKEND=Agg tvbo paper-figures {input.campaign:q} --paper pegpucb "
        '--outdir "$(dirname {output.regret:q})" {params.labels} {params.figure_args} > {log:q} 2>&1'


rule paper_figures_boke:
    input:
        campaign=rules.merge_runs.output.campaign,
    output:
        figure=report(
            f"results/{{campaign}}/paper_figures/boke_simple_regret.{FIGURE_EXT}",
            caption="../report/paper_boke.rst",
            category=config["campaign"],
            subcategory="Paper figures",
            labels={"paper": "BOKE", "content": "figure"},
        ),
        numbers=report(
            "results/{campaign}/paper_figures/boke_simple_regret.csv",
            caption="../report/paper_boke.rst",
            category=config["campaign"],
            subcategory="Paper figures",
            labels={"paper": "BOKE", "content": "numbers (CSV)"},
        ),
    log:
        "results/{campaign}/logs/paper_figures_boke.log",
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
        "MPLBACKEND=Agg tvbo paper-figures {input.campaign:q} --paper boke "
        '--outdir "$(dirname {output.figure:q})" {params.labels} {params.figure_args} > {log:q} 2>&1'
