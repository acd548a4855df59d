# tvbo: time-varying Bayesian optimisation on a virtual clock -- the campaign workflow.
#
# Design card
#   what     one SimPy virtual-clock simulation per (benchmark, algorithm, seed, speed), merged
#            into results/<campaign>/campaign.nc, summarised as regret tables, figures and a
#            Snakemake report.
#   config   config/config.yaml (the offline QUICKSTART campaign), or --configfile another study;
#            every key is documented in config/README.md and validated against
#            workflow/schemas/config.schema.yaml before any job runs.
#   software the tvbo package, installed with `pip install -e .`; every rule calls its CLI.
#   run      snakemake --cores 2                         (laptop)
#            snakemake --profile profiles/slurm          (cluster; see profiles/README.md)
#            snakemake --report results/report.html      (after a run)
#   stages   data (data.smk: download + prepare real data, on demand) ->
#            oracle (oracle.smk: one f*(t) table per benchmark) ->
#            simulate (simulate.smk) -> aggregate (aggregate.smk) -> analyze (analyze.smk)
#            -> report (report.smk); fit health of every campaign (fit_health.smk); helper
#            functions live in workflow/rules/common.smk (targets: *_targets.smk).

from snakemake.utils import min_version

min_version("8.10")


try:  # a YAML error in config/config.yaml: name its file, line and column (Snakemake does not)
    from tvbo.config_check import exit_on_yaml_error
except ImportError:
    pass  # workflow/rules/common.smk says how to install tvbo
else:
    exit_on_yaml_error("config/config.yaml")


# config/config.yaml is the default campaign. A --configfile REPLACES it (with or without
# --replace-workflow-config): Snakemake re-reads the workflow in the jobs it spawns for `run:`
# rules without forwarding --replace-workflow-config, so merging would give those jobs a config
# the main process never saw (config.yaml's paper_aliases, benchmark_options, ...).
if not workflow.config_settings.configfiles:

    configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/oracle.smk"
include: "workflow/rules/simulate.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/analyze.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/temperature_day.smk"
include: "workflow/rules/paper_figures.smk"
include: "workflow/rules/paper_figures_targets.smk"
include: "workflow/rules/theory.smk"
include: "workflow/rules/whatif.smk"
include: "workflow/rules/theory_whatif_targets.smk"
include: "workflow/rules/parallel.smk"
include: "workflow/rules/parallel_targets.smk"
include: "workflow/rules/reproduction_inputs.smk"
include: "workflow/rules/reproduction.smk"
include: "workflow/rules/cluster.smk"
include: "workflow/rules/fit_health.smk"
include: "workflow/rules/fit_health_targets.smk"


# What the user sees at the start (runs to do, estimated wall time) and at the end (best
# algorithm per benchmark on both metrics, where the tables/figures are, the report command):
# tvbo/workflow_messages.py documents the throughput model of the estimate.
from tvbo.workflow_messages import on_start, on_success


onstart:
    check_slurm_available()  # cluster.smk: fail fast without SLURM, before any job
    on_start(config, workflow)


onsuccess:
    on_success(config, workflow)


rule all:
    input:
        final_outputs(),
        paper_figure_outputs(),
        theory_targets(),
        whatif_targets(),
        fit_health_outputs(),
        parallel_whatif_targets(),
    default_target: True
