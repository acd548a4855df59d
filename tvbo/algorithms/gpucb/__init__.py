"""The GP-UCB family: GP-UCB, TV-GP-UCB and R-GP-UCB (Bogunovic et al. 2016), ET-GP-UCB.

Its names (presets, labels, citations) are declared in :mod:`.declare`; the catalogue is
generated from them (scripts/write_catalogue.py). Importing the package imports nothing.
"""
