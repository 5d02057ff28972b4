"""Offline scan benchmark over the shared corpus.

Scans every repository of ``../shared/corpus`` (or the paths given) with an in-memory registry
that answers every npm and PyPI lookup with a synthetic 200-release catalog, and prints:

* extraction time alone (discover + read + parse every manifest),
* the whole scan (extraction + lookups through the fetch seam + policy evaluation),
* their ratio (how much lookup and evaluation add on top of parsing; no target), and peak RSS.

It reads scan internals (``_discover``, ``_extract_repo``) to time extraction alone.
"""

from __future__ import annotations

import json
import resource
import tempfile
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio

from benchmarks.harness import Figure, emit, note
from patchula.clock import FixedClock
from patchula.models import Derive, FetchResponse
from patchula.scan import RepoResult, _discover, _extract_repo, scan
from patchula.settings import Settings

NOW = datetime(2026, 11, 30, tzinfo=UTC)
RELEASES = 200


class SyntheticRegistry:
    """Answers any npm packument or PEP 691 page with ``RELEASES`` releases, one a week."""

    def __init__(self) -> None:
        self.requests = 0
        versions = [f"{i // 100}.{(i // 10) % 10}.{i % 10}" for i in range(RELEASES)]
        times = {
            v: (NOW - timedelta(weeks=RELEASES - i)).isoformat() for i, v in enumerate(versions)
        }
        self._npm = json.dumps(
            {
                "dist-tags": {"latest": versions[-1]},
                "versions": {v: {} for v in versions},
                "time": times,
            }
        ).encode()
        files = [
            {"filename": f"pkg-{v}.tar.gz", "url": "x", "hashes": {}, "upload-time": times[v]}
            for v in versions
        ]
        self._pypi = json.dumps(
            {"meta": {"api-version": "1.1"}, "name": "pkg", "versions": versions, "files": files}
        ).encode()

    async def __call__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,  # noqa: ARG002 - the Fetch protocol
        representation: str = "raw",  # noqa: ARG002 - no cache here
        derive: Derive | None = None,
    ) -> FetchResponse:
        """Serve the synthetic document for the registry the URL points at."""
        self.requests += 1
        if "/simple/" in url:
            body = self._pypi.replace(
                b'"pkg"', json.dumps(url.rstrip("/").rsplit("/", 1)[1]).encode()
            )
            if derive is not None:
                body = derive(body)
            return FetchResponse(
                200, url, (("content-type", "application/vnd.pypi.simple.v1+json"),), body, NOW
            )
        body = derive(self._npm) if derive is not None else self._npm
        return FetchResponse(200, url, (("content-type", "application/json"),), body, NOW)


def main(argv: list[str] | None = None, *, quick: bool = False) -> None:
    """Run the benchmark over ``argv`` (checkout paths; default: the shared corpus)."""
    if quick:  # the smoke test's configuration: one tiny checkout
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "package.json").write_text('{"dependencies": {"left-pad": "^1.0.0"}}')
            (Path(tmp) / "requirements.txt").write_text("requests>=2\n")
            _measure([Path(tmp)])
        return
    corpus = Path(__file__).resolve().parents[2] / "shared" / "corpus"
    if not argv and not corpus.is_dir():
        note(f"offline: corpus not found at {corpus}: pass checkout paths to benchmark (skipped)")
        return
    _measure([Path(a) for a in argv or ()] or sorted(p for p in corpus.iterdir() if p.is_dir()))


def _measure(targets: list[Path]) -> None:
    settings = Settings.model_validate(
        {
            "registries": {"npm": "http://npm.bench", "pypi": "http://pypi.bench"},
            "min_release_age": "3d",
        }
    )
    start = time.perf_counter()
    deps = 0
    for target in targets:
        repo = RepoResult(target=str(target), root=str(target), commit=None)
        found, _ = _discover(target.resolve(), settings)
        deps += len(_extract_repo(target.resolve(), settings, repo, found))
    extract_s = time.perf_counter() - start

    registry = SyntheticRegistry()
    start = time.perf_counter()
    result = anyio.run(scan, [str(t) for t in targets], settings, registry, FixedClock(NOW))
    scan_s = time.perf_counter() - start
    rows = sum(len(r.rows) for r in result.repos)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    note(f"offline: peak RSS {peak_mib:.1f} MiB")
    emit(
        Figure(
            "offline.scan-extraction",
            f"{len(targets)} repositories, {deps} dependencies, {rows} rows, "
            f"{registry.requests} lookups: full scan {scan_s:.3f} s / extraction only "
            f"{extract_s:.3f} s (in-process, synthetic in-memory registry)",
            scan_s / extract_s,
        )
    )
