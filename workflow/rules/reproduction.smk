# The reproduction report (tvbo reproduce): every published table and seed-paper claim of the
# spec (config/reproduction.yaml) against the campaigns under results/, written to
# docs/reproduction.md (committed in the repository) and shown in the report. Not part of `all`:
# run `snakemake reproduction --configfile <study>` after (or to run) a study's campaign. The
# committed file may be newer than campaigns run before it was checked out: add
# `--forcerun reproduction` to regenerate it regardless.


rule reproduction:
    input:
        campaign=expand("results/{campaign}/campaign.nc", campaign=CAMPAIGN),
        others=reproduction_campaigns(),
        spec=REPRODUCTION_SPEC,
    output:
        report(
            "docs/reproduction.md",
            caption="../report/reproduction.rst",
            category="Reproduction",
            labels={"content": "reproduction report (markdown)"},
        ),
    log:
        "results/logs/reproduction.log",
    conda:
        "../envs/tvbo.yaml"
    threads: 1
    resources:
        runtime=10,
        mem_mb=4000,
    shell:
        "tvbo reproduce --spec {input.spec:q} --results results --out {output:q} > {log:q} 2>&1"
