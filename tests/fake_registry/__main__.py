"""Run the fake registry standalone: ``python -m tests.fake_registry --port 8080 [--latency S]``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .registry import HOST_NAMES, FakeRegistry


def main(argv: list[str] | None = None) -> None:
    """Serve until Ctrl-C, after printing one ``<host> <base URL>`` line per virtual host."""
    parser = argparse.ArgumentParser(prog="python -m tests.fake_registry", description=__doc__)
    parser.add_argument(
        "--port", type=int, default=0, help=f"first port; hosts: {', '.join(HOST_NAMES)}"
    )
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every request")
    parser.add_argument(
        "--fixtures", type=Path, default=None, help="fixture directory (default: bundled)"
    )
    args = parser.parse_args(argv)
    with FakeRegistry(args.fixtures, port=args.port, latency=args.latency) as registry:
        for name, url in registry.urls().items():
            sys.stdout.write(f"{name:<13} {url}\n")
        sys.stdout.flush()
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
