"""ABO, adaptive Bayesian optimisation (Nyikosa et al. 2018).

Its names (presets, labels, citations) are declared in :mod:`.declare`; the catalogue is
generated from them (scripts/write_catalogue.py). Importing the package imports nothing.
"""
