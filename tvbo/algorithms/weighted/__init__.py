"""Forgetting by weight or window: SW-GP-UCB (Zhou & Shroff 2021), W-GP-UCB (Deng et al. 2022).

Its names (presets, labels, citations) are declared in :mod:`.declare`; the catalogue is
generated from them (scripts/write_catalogue.py). Importing the package imports nothing.
"""
