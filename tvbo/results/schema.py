"""The layout of a run's result Dataset: one place that names every dimension and variable.

A run file is an :class:`xarray.Dataset` with

* run keys as length-1 dimension coordinates (:data:`RUN_KEYS`), so that
  ``xarray.combine_by_coords`` merges runs into a campaign;
* dimension ``iteration`` (one entry per query, warm-up included), ``dim`` (spatial coordinate
  index) and ``time`` (a regular grid over [0, H] for time-integrated quantities);
* the variables of :data:`ITERATION_VARIABLES` and :data:`TIME_VARIABLES` (plus per-phase compute
  times ``compute_<phase>`` and algorithm state ``state_<name>``, see below);
* attributes :data:`REQUIRED_ATTRIBUTES`.

Algorithm state (hyperparameters, n*, resets, ...) is stored as ``state_<name>`` along
``iteration``; per-phase compute time as ``compute_<phase>`` along ``iteration``.

Fit health: dimension ``fit`` has one entry per hyperparameter fit of the run, in the order the
fits ran (length 0 for an algorithm that fits nothing, e.g. BOKE or PE-GP-UCB); its variables
are :data:`FIT_VARIABLES` plus algorithm-specific ``fit_<name>`` (``fit_epsilon``, ``fit_kept``,
...). Run files written before fit recording have no ``fit`` dimension; campaign merging pads it.
"""

from __future__ import annotations

RUN_KEYS: tuple[str, ...] = ("benchmark", "algorithm", "seed", "speed")

#: name -> (dims, units, long name)
ITERATION_VARIABLES: dict[str, tuple[tuple[str, ...], str, str]] = {
    "t_decide": (("iteration",), "s", "virtual time at which the algorithm read the clock"),
    "t_query": (("iteration",), "s", "time at which the acquisition was optimised"),
    "t_sample": (("iteration",), "s", "virtual time at which the objective was sampled"),
    "t_available": (("iteration",), "s", "virtual time at which the observation was available"),
    "t_ingested": (("iteration",), "s", "virtual time at which the algorithm finished ingesting"),
    "response_time": (("iteration",), "s", "t_decide of the next iteration minus this one's"),
    "x": (("iteration", "dim"), "1", "query in the normalised spatial domain [0,1]^d"),
    "y": (("iteration",), "1", "noisy observation"),
    "f": (("iteration",), "1", "noiseless objective at the query and its sample time"),
    "f_star": (("iteration",), "1", "maximum of the objective at the sample time"),
    "regret": (("iteration",), "1", "query regret f_star - f (noiseless)"),
    "is_warmup": (("iteration",), "1", "1 for the random warm-up queries, else 0"),
    "dataset_size": (("iteration",), "1", "observations held by the algorithm after ingesting"),
    "compute_total": (("iteration",), "s", "virtual compute time charged in this iteration"),
}

TIME_VARIABLES: dict[str, tuple[tuple[str, ...], str, str]] = {
    "f_star_grid": (("time",), "1", "maximum of the objective on the time grid"),
    "f_held": (("time",), "1", "objective at the configuration in force (last sampled query)"),
    "regret_held": (("time",), "1", "f_star_grid - f_held: regret of the configuration in force"),
    "dataset_size_held": (("time",), "1", "dataset size in force on the time grid"),
}

FIT_DIMENSION = "fit"
FIT_PREFIX = "fit_"

#: the fitted hyperparameters every fit record carries (value, ``_at_lower``, ``_at_upper``)
FIT_HYPERPARAMETERS: tuple[str, ...] = (
    "signal_var", "lengthscale_space", "lengthscale_time", "noise_var",
)

#: name -> (dims, kind, units, long name); kind is int | float | flag (int8 0/1) | str
FIT_VARIABLES: dict[str, tuple[tuple[str, ...], str, str, str]] = {
    "fit_iteration": (("fit",), "int", "1", "iteration whose algorithm call ran the fit"),
    "fit_time": (("fit",), "float", "s", "virtual time at which that call began"),
    "fit_call": (("fit",), "str", "1", "call that ran the fit: setup|side|propose|ingest"),
    "fit_source": (("fit",), "str", "1", "component that fitted, e.g. surrogate:gp"),
    "fit_mode": (("fit",), "str", "1", "fit mode (optimiser / objective)"),
    "fit_n_data": (("fit",), "int", "1", "observations the fit saw"),
    "fit_n_evals": (("fit",), "int", "1", "objective evaluations of the fit"),
    "fit_success": (("fit",), "flag", "1", "1 if an optimiser run reported convergence"),
    "fit_jitter_events": (("fit",), "int", "1", "jitter escalations during the fit"),
    "fit_lml": (("fit",), "float", "1", "log marginal likelihood of the fit (standardised y)"),
    "fit_log_posterior": (("fit",), "float", "1", "LML + log prior (NaN: no prior)"),
    "fit_fitted": (("fit",), "str", "1", "comma-separated names of the fitted hyperparameters"),
    "fit_time_unit": (("fit",), "str", "1", "unit of fit_lengthscale_time: s, step or '' (none)"),
    **{
        f"fit_{name}{suffix}": (("fit",), kind, "1", f"{what} {name}")
        for name in FIT_HYPERPARAMETERS
        for suffix, kind, what in (
            ("", "float", "fitted"),
            ("_at_lower", "flag", "1 if at its lower bound:"),
            ("_at_upper", "flag", "1 if at its upper bound:"),
        )
    },
}

#: global attributes of every run file
REQUIRED_ATTRIBUTES: tuple[str, ...] = (
    "tvbo_version",
    "config_json",  # the full run configuration, JSON
    "compute_model",  # counted | measured | polynomial
    "compute_model_json",  # parameters of the compute model (profile, coefficients)
    "versions_json",  # versions of python, numpy, scipy, simpy, xarray
    "horizon",
    "warmup",
    "cost",
    "noise_var",
    "dimension",
    "average_regret",  # mean query regret over post-warm-up queries (the papers' metric)
    "time_integrated_regret",  # (1/H) integral of regret_held over [0, H]
    "n_iterations",
    "jitter_events",  # number of jitter escalations in the GP (never silent)
)

COMPUTE_PREFIX = "compute_"
STATE_PREFIX = "state_"

# -- the campaign layout (tvbo.results.campaign.merge_runs) -------------------------------------
#: prefix of a per-run variable holding a global run attribute that differs between the merged
#: runs (``attr_config_json``); merging writes it, validation and analysis read it
ATTRIBUTE_PREFIX = "attr_"
#: int8 per-run variable of a campaign: 1 where the grid cell holds a run, 0 for a placeholder
PRESENT_VARIABLE = "run_present"
#: global attributes with a run's own cost on the machine that simulated it (CPU seconds, user +
#: system of the process, and wall seconds of the simulation and its f*). Machine-dependent, so
#: attributes of the run file only: never data variables, never in the digests, and dropped when
#: runs are merged, so that a campaign file comes back byte-identical from the same runs made
#: again. The campaign-time model (tvbo.campaign_time, scripts/fit_campaign_time.py) reads them
#: from the run files.
COST_ATTRIBUTES: dict[str, str] = {
    "run_cpu_seconds": "process CPU seconds (user + system) of the simulation and its f*",
    "run_wall_seconds": "wall seconds of the simulation and its f*",
}
#: the global attribute with the code a run executed (tvbo.results.code_record): the sha256 of
#: every module file of tvbo (and of the algorithm's and benchmark's own packages, for a plugin)
#: loaded in the process when the run ended, as JSON ``{module: digest}``. It says which runs a
#: code change makes stale (``tvbo stale``). It depends on what the process had loaded before
#: (a notebook may have imported more of tvbo), so, like the cost, it is an attribute of the run
#: file only: never in the digests, and dropped when runs are merged.
CODE_ATTRIBUTE = "code_sha256"
#: every attribute a run file holds that a campaign does not: the machine's cost and the code record
RUN_FILE_ONLY_ATTRIBUTES: tuple[str, ...] = (*COST_ATTRIBUTES, CODE_ATTRIBUTE)
