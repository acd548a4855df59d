"""BOKE (Zhu et al.): Bayesian optimisation by kernel regression and density.

Its names (presets, labels, citations) are declared in :mod:`.declare`; the catalogue is
generated from them (scripts/write_catalogue.py). Importing the package imports nothing.
"""
