"""patchula: a dependency freshness scanner."""

__version__ = "0.1.0"
