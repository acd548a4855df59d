# Targets of the parallel-evaluators what-if rule (parallel.smk) for `rule all`; functions live
# apart from the rules, as in common.smk.


def parallel_whatif_targets():
    """The k-evaluators what-if outputs, only when the grid has k > 1 or overlap."""
    if max(config["evaluators"]) == 1 and not any(config["overlap"]):
        return []
    return expand(list(map(str, rules.parallel_whatif_figures.output)), campaign=CAMPAIGN)
