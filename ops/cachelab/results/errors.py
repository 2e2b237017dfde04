"""The one error type of the results readers."""

from __future__ import annotations


class ResultsError(ValueError):
    """A results file that cannot be read; the message names the file and what is wrong."""
