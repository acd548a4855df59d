"""Helpers for tvbo's own tests: fixed result grids whose digests guard refactorings."""
