"""W-DBO (Bardou, Thiran & Ranieri, NeurIPS 2024): stale data removed by W2 relevance.

Its names (presets, labels, citations) are declared in :mod:`.declare`; the catalogue is
generated from them (scripts/write_catalogue.py). Importing the package imports nothing.
"""
