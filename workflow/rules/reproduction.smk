# The reproduction report (tvbo reproduce): every published table and seed-paper claim of the
# spec (config/reproduction.yaml) against its campaigns, written to docs/reproduction.md
# (committed in the repository). Not part of `all`: `snakemake --cores N reproduction` builds
# every campaign of the spec that is missing (each by a Snakemake run of its own config,
# `reproduction_campaign`: the campaigns are separate studies, each with its own config, so a
# driver rule is the one way to build them from one target), then the report. The report's
# header prints the committed record beside the spec (config/reproduction_provenance.yaml) (command, commit, wall
# time, machine), so the same run files give the same bytes; this run's own record is written
# to results/reproduction_provenance.yaml (copy it beside the spec to record a new full
# regeneration).


wildcard_constraints:
    other=_alternatives(list(reproduction_others()) or ["^$"]),


rule reproduction_campaign_config:
    output:
        "results/{other}/reproduction_overrides.yaml",
    log:
        "results/logs/reproduction_campaign_config_{other}.log",
    params:
        overrides=reproduction_overrides,
    run:
        import yaml

        Path(output[0]).write_text(yaml.safe_dump(dict(params.overrides), sort_keys=True))


rule reproduction_campaign:
    input:
        # the campaign's config files: an edited config rebuilds its campaign
        configs=reproduction_campaign_configs,
        overrides="results/{other}/reproduction_overrides.yaml",
    output:
        "results/{other}/campaign.nc",
    log:
        "results/logs/reproduction_campaign_{other}.log",
    conda:
        "../envs/tvbo.yaml"
    # two, as merge_runs: a job asking more CPUs than a node has never starts on a cluster
    threads: 2
    resources:
        runtime=600,
    params:
        snakefile=workflow.main_snakefile,
        python=sys.executable,
    shell:
        "{params.python:q} -m snakemake --cores {threads} --nolock -s {params.snakefile:q} "
        "--configfile {input.configs:q} {input.overrides:q} --replace-workflow-config "
        "-- {output:q} > {log:q} 2>&1"


rule reproduction:
    input:
        campaign=expand("results/{campaign}/campaign.nc", campaign=CAMPAIGN),
        others=reproduction_campaigns,
        spec=REPRODUCTION_SPEC,
        published=reproduction_published_files,
    output:
        md=report(
            "docs/reproduction.md",
            caption="../report/reproduction.rst",
            category="Reproduction",
            labels={"content": "reproduction report (markdown)"},
        ),
        provenance="results/reproduction_provenance.yaml",
    log:
        "results/logs/reproduction.log",
    conda:
        "../envs/tvbo.yaml"
    threads: 1
    resources:
        runtime=10,
        mem_mb=4000,
    params:
        recorded=REPRODUCTION_PROVENANCE,
        started=REPRODUCTION_STARTED,
        repo=lambda wildcards, input: str(Path(input.spec).resolve().parent.parent),
    shell:
        "tvbo reproduce --spec {input.spec:q} --results results --out {output.md:q} "
        "$( [ -f {params.recorded:q} ] && echo --provenance {params.recorded:q} ) > {log:q} 2>&1 "
        "&& printf 'command: snakemake --cores N reproduction\\ncommit: %s\\nwall_time_s: %s\\n"
        "machine: %s\\n' "
        '"$(git -C {params.repo:q} rev-parse --short HEAD 2>/dev/null || echo unknown)" '
        '"$(( $(date +%s) - {params.started} ))" "$(nproc) cores, $(uname -m)" '
        "> {output.provenance:q}"
