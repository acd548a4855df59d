# Provenance for the report: one row per run, and the configuration as validated (defaults filled),
# both under the campaign's name in the report (subcategories Runs and Configuration).


rule runs_table:
    input:
        campaign=rules.merge_runs.output.campaign,
    output:
        runs=report(
            "results/{campaign}/tables/runs.csv",
            caption="../report/runs.rst",
            category=CAMPAIGN,
            subcategory="Runs",
        ),
    log:
        "results/{campaign}/logs/runs_table.log",
    conda:
        "../envs/tvbo.yaml"
    threads: 1
    resources:
        runtime=10,
        mem_mb=2000,
    shell:
        "tvbo runs {input.campaign:q} --out {output.runs:q} > {log:q} 2>&1"


rule campaign_config:
    output:
        config=report(
            "results/{campaign}/config.yaml",
            caption="../report/config.rst",
            category=CAMPAIGN,
            subcategory="Configuration",
        ),
    log:
        "results/{campaign}/logs/campaign_config.log",
    localrule: True
    params:
        text=campaign_config_yaml,
    run:
        with open(output.config, "w") as out:
            out.write(params.text)
