"""Checks of the repository's own text, run by `make lint` (not part of the experiment tools)."""
