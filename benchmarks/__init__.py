"""Benchmarks run by ``nox -s bench``; each prints ratios measured in one run."""
