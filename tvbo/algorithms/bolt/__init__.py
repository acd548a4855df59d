"""BOLT (Bardou & Thiran): W-DBO's model with the optimal dataset size n*.

Its names (presets, labels, citations) are declared in :mod:`.declare`; the catalogue is
generated from them (scripts/write_catalogue.py). Importing the package imports nothing.
"""
