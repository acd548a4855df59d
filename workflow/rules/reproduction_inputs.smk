# Inputs of the reproduction report (reproduction.smk): the spec and every campaign file it names
# that exists now. Functions live apart from the rules (Snakemake's linter flags functions mixed
# with rules), as in common.smk.


#: the reproduction spec beside the workflow (not a workflow config: tvbo/analysis/reproduction_spec.py)
#: (source_path: relative to this file, so a snakedeploy-ed module finds it in the workflow's source)
REPRODUCTION_SPEC = str(workflow.source_path("../../config/reproduction.yaml"))


def reproduction_campaigns():
    """The campaign files the report reads besides this campaign's: those that exist now.

    A campaign of the spec that has not been run is not an input (the report lists it as 'not yet
    run' with its command); this campaign's file is always an input, so `snakemake reproduction`
    runs the configured campaign first.
    """
    from tvbo.analysis.reproduction_spec import load_spec

    try:
        spec = load_spec(REPRODUCTION_SPEC)
    except ValueError as err:
        # a bad spec must not stop the other targets: the report's rule reports it when it runs
        print(f"warning: {err}; the reproduction target will fail", file=sys.stderr)
        return []
    names = sorted({c.name for c in spec.campaigns.values()} - {CAMPAIGN})
    paths = [f"results/{name}/campaign.nc" for name in names]
    return [p for p in paths if Path(p).is_file()]
