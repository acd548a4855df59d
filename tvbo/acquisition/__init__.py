"""Acquisition functions and their optimisation over the spatial domain at a fixed time."""

from tvbo.acquisition.beta import BETA_SCHEDULES, BetaSchedule, make_beta
from tvbo.acquisition.optimize import AcquisitionOptimizer
from tvbo.acquisition.ucb import ucb

__all__ = ["BETA_SCHEDULES", "AcquisitionOptimizer", "BetaSchedule", "make_beta", "ucb"]
