"""Reference policies: floor rows (random search, centre, best static), not competitors.

Its names (presets, labels, citations) are declared in :mod:`.declare`; the catalogue is
generated from them (scripts/write_catalogue.py). Importing the package imports nothing.
"""
