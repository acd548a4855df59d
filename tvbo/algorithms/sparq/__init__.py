"""SparQ-GP-UCB (Mauduit, Berthier & Simonetto): TV-GP bandits with an expert.

Its names (presets, labels, citations) are declared in :mod:`.declare`; the catalogue is
generated from them (scripts/write_catalogue.py). Importing the package imports nothing.
"""
