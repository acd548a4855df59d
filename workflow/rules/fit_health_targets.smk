# Targets of the fit-health rule (fit_health.smk) for `rule all` in the Snakefile. The function
# lives apart from the rule (Snakemake's linter flags functions mixed with rules) and is called
# only once the rule exists.


def fit_health_outputs():
    """Every output of the fit-health rule, for every campaign."""
    return [
        path for pattern in rules.fit_health.output for path in expand(pattern, campaign=CAMPAIGN)
    ]
