"""``nox -s bench`` / ``python -m benchmarks``: every benchmark, each printing its ratios."""

from __future__ import annotations

import sys

from benchmarks import cache, network, offline


def main() -> None:
    """Run the network benchmark, then the offline corpus benchmark."""
    print("== network: cold lookups against the loopback fake registry")
    network.main([])
    print()
    print("== cache: repeated runs against the loopback fake registry")
    cache.main([])
    print()
    print("== offline: extraction and evaluation over the shared corpus")
    offline.main(sys.argv[1:])


if __name__ == "__main__":
    main()
