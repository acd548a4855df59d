# Targets of the theory and what-if rules (theory.smk, whatif.smk) for `rule all` in the
# Snakefile: every output of those rules for this campaign. Functions live apart from the rules,
# as in common.smk (Snakemake's linter flags functions mixed with rules); they are called only
# once the rules exist.


def theory_targets():
    """The theory outputs, for every campaign (they need no run and take seconds)."""
    return expand(list(map(str, rules.theory_figures.output)), campaign=CAMPAIGN)


def whatif_targets():
    """The what-if outputs, only when the campaign has >= 2 speeds (else there is no what-if)."""
    if len(config["speeds"]) < 2:
        return []
    return expand(list(map(str, rules.whatif_figures.output)), campaign=CAMPAIGN)
