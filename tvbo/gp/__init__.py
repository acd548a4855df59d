"""Gaussian-process core: separable kernels, exact GP with O(n^2) updates, hyperparameter fits."""

from tvbo.gp.exact import ExactGP, Prediction
from tvbo.gp.fit import fit_hyperparameters
from tvbo.gp.kernels import (
    CORRELATIONS,
    Correlation,
    HyperparameterBounds,
    Hyperparameters,
    SeparableKernel,
    correlation,
)
from tvbo.gp.linalg import JitterError
from tvbo.gp.lml import FitResult, LMLObjective, log_marginal_likelihood_and_grad, parameter_names

__all__ = [
    "CORRELATIONS",
    "Correlation",
    "ExactGP",
    "FitResult",
    "HyperparameterBounds",
    "Hyperparameters",
    "JitterError",
    "LMLObjective",
    "Prediction",
    "SeparableKernel",
    "correlation",
    "fit_hyperparameters",
    "log_marginal_likelihood_and_grad",
    "parameter_names",
]
