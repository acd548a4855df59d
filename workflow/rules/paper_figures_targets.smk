# Targets of the paper-figure rules (paper_figures.smk) for `rule all` in the Snakefile. The
# function lives apart from the rules (Snakemake's linter flags functions mixed with rules) and
# is called only once the rules exist.


def paper_figure_outputs():
    """Every output of the paper-figure rules of the papers listed in config["paper_figures"]."""
    by_paper = {
        "sparq": rules.paper_figures_sparq,
        "pegpucb": rules.paper_figures_pegpucb,
        "boke": rules.paper_figures_boke,
    }
    return [
        path
        for paper in config["paper_figures"]
        for pattern in by_paper[paper].output
        for path in expand(pattern, campaign=CAMPAIGN)
    ]
