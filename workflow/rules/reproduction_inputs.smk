# Inputs of the reproduction report (reproduction.smk): the spec, every campaign it names and the
# command that builds each one. Functions live apart from the rules (Snakemake's linter flags
# functions mixed with rules), as in common.smk.


import functools
import time

#: the reproduction spec (not a workflow config: tvbo/analysis/reproduction/spec.py), relative to
#: the repository's root (config key reproduction_spec). In a clone it is read in place, because the
#: spec names other files beside it (campaign configs, the overlay) that Snakemake's source cache
#: does not copy; in a snakedeploy-ed module (no clone: workflow.basedir is then the deploying
#: folder's) it is found through workflow.source_path.
_SPEC_IN_CLONE = Path(workflow.basedir).parent / config["reproduction_spec"]
REPRODUCTION_SPEC = (
    config["reproduction_spec"]
    if Path(config["reproduction_spec"]).is_absolute()
    else (
        str(_SPEC_IN_CLONE)
        if _SPEC_IN_CLONE.is_file()
        else str(workflow.source_path(f"../../{config['reproduction_spec']}"))
    )
)
#: the committed record of the last full regeneration (command, commit, wall time, machine) beside
#: the spec (<spec>_provenance.yaml), printed in the report's header as given so that the report's
#: bytes do not depend on this run
REPRODUCTION_PROVENANCE = str(
    Path(REPRODUCTION_SPEC).with_name(f"{Path(REPRODUCTION_SPEC).stem}_provenance.yaml")
)
#: when this Snakemake invocation parsed the workflow: the wall time it measures starts here
REPRODUCTION_STARTED = int(time.time())


#: the spec's error (one line naming the entry), when it is bad
_SPEC_ERRORS = []


@functools.cache
def _reproduction_spec():
    """The spec, read once per parse (None when it is bad: the error is in _SPEC_ERRORS)."""
    from tvbo.analysis.reproduction.spec_yaml import load_spec

    try:
        return load_spec(REPRODUCTION_SPEC)
    except ValueError as err:
        # a bad spec must not stop the other targets: the reproduction target stops on it
        _SPEC_ERRORS.append(str(err))
        print(f"warning: {err}; the reproduction target will fail", file=sys.stderr)
        return None


def reproduction_others():
    """The spec's campaigns other than this workflow's own (key -> campaign spec)."""
    spec = _reproduction_spec()
    if spec is None:
        return {}
    return {c.name: c for c in spec.campaigns.values() if c.name != CAMPAIGN}


def reproduction_campaigns(wildcards=None):
    """Every campaign file the report reads besides this campaign's: each is built by
    `reproduction_campaign` (a Snakemake run of its own config) when it is missing.

    An input function of the `reproduction` rule, so it runs only when that target is built:
    a bad spec then stops Snakemake while it builds the DAG, before any job, with the spec's
    one line (naming the entry) and no traceback; the other targets are not held up by it."""
    if _reproduction_spec() is None:
        print(_SPEC_ERRORS[0], file=sys.stderr)
        raise SystemExit(1)
    return [f"results/{name}/campaign.nc" for name in sorted(reproduction_others())]


def reproduction_published_files(wildcards=None):
    """The files of the spec's published_code section (the committed runs table of the published
    code and the explanations file): a change to either rebuilds the report."""
    spec = _reproduction_spec()
    if spec is None or spec.published_code is None:
        return []
    return [str(spec.published_code.runs), str(spec.published_code.explanations)]


def reproduction_campaign_configs(wildcards):
    """The config files of one spec campaign (absolute), its overrides file last."""
    campaign = reproduction_others()[wildcards.other]
    return [str(p.resolve()) for p in campaign.configs]


def reproduction_overrides(wildcards):
    """The spec campaign's overrides (its name included), written to a config file: Snakemake's
    --config reads list items as text, which the config schema rejects."""
    return dict(reproduction_others()[wildcards.other].overrides)
