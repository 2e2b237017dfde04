"""cachelab: experiment specs, runners, analysis and reports for the caching middleware testbed."""

__version__ = "0.1.0"
