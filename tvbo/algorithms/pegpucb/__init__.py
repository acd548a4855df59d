"""PE-GP-UCB (Ziomek, Adachi & Osborne): TV-GP bandits with an unknown prior, and competitors.

Its names (presets, labels, citations) are declared in :mod:`.declare`; the catalogue is
generated from them (scripts/write_catalogue.py). Importing the package imports nothing.
"""
