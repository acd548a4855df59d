"""The model layer: one protocol (:mod:`tvbo.models.protocol`) and the surrogates that implement it.

Every algorithm's surrogate is a :class:`Model`: the exact GP (:class:`tvbo.gp.exact.ExactGP`,
the only GP posterior in the package) or BOKE's kernel regression. See the protocol module for the
capability protocols and the layering rules.
"""

from tvbo.models.protocol import (
    HasHyperparameters,
    HasKernelDensity,
    HasPointNoise,
    HasPriorMean,
    HasSpaceTimeGradient,
    HasTemporalKernel,
    Model,
    Prediction,
)

__all__ = [
    "HasHyperparameters",
    "HasKernelDensity",
    "HasPointNoise",
    "HasPriorMean",
    "HasSpaceTimeGradient",
    "HasTemporalKernel",
    "Model",
    "Prediction",
]
