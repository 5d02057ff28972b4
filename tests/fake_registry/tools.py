"""Tool release indexes: Node's dist ``index.json``, python.org's release API, go.dev's list.

Each serves one document built from what was registered (``add``), in the real wire shape
(trimmed to the fields patchula reads plus one ignored field each, as the real ones have more):
``nodejs`` ``GET /index.json`` (newest first; ``lts`` a code name or false), ``python-org``
``GET /api/v2/downloads/release/`` (``name`` ``Python X``, ``release_date``, ``pre_release``,
``is_published``), ``go-dev`` ``GET /dl/?mode=json&include=all`` (``go`` + version, ``stable``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from .base import Reply, Request, iso, json_reply, semver_key


@dataclass(frozen=True)
class _Node:
    version: str
    date: datetime
    lts: str | None


def _newest_first(versions: list[str]) -> list[str]:
    return sorted(versions, key=semver_key, reverse=True)


class NodeDist:
    """Node.js releases: ``add("22.12.0", when, lts="Jod")``."""

    def __init__(self) -> None:
        self._releases: dict[str, _Node] = {}

    def add(self, version: str, date: datetime, *, lts: str | None = None) -> None:
        """Register one release (``version`` without the ``v``)."""
        self._releases[version] = _Node(version, date, lts)

    def handle(self, request: Request) -> Reply:
        """``/index.json``: every release, newest first."""
        if request.path != "/index.json":
            return json_reply({"error": "not found"}, 404)
        body = [
            {
                "version": f"v{self._releases[v].version}",
                "date": self._releases[v].date.strftime("%Y-%m-%d"),
                "files": ["linux-x64", "osx-arm64-tar"],
                "lts": self._releases[v].lts or False,
            }
            for v in _newest_first(list(self._releases))
        ]
        return json_reply(body)


class PythonOrg:
    """CPython releases: ``add("3.13.1", when)``; ``pre_release`` follows the version."""

    def __init__(self) -> None:
        self._releases: dict[str, datetime] = {}

    def add(self, version: str, date: datetime) -> None:
        """Register one published release."""
        self._releases[version] = date

    def handle(self, request: Request) -> Reply:
        """``/api/v2/downloads/release/``: every release (the real API's order is its ids')."""
        if request.path != "/api/v2/downloads/release/":
            return json_reply({"error": "not found"}, 404)
        body = [
            {
                "name": f"Python {version}",
                "slug": "python-" + version.replace(".", ""),
                "is_published": True,
                "release_date": iso(when),
                "pre_release": any(mark in version for mark in ("a", "b", "rc")),
            }
            for version, when in self._releases.items()
        ]
        return json_reply(body)


class GoDev:
    """Go releases: ``add("1.23.4")`` (``stable`` false for a beta or release candidate)."""

    def __init__(self) -> None:
        self._versions: list[str] = []

    def add(self, version: str) -> None:
        """Register one release (without the ``go`` prefix)."""
        self._versions.append(version)

    def handle(self, request: Request) -> Reply:
        """``/dl/?mode=json&include=all``: every release, newest first (go.dev dates none)."""
        if request.path != "/dl/" or request.arg("mode") != "json":
            return json_reply({"error": "not found"}, 404)
        body = [
            {
                "version": f"go{version}",
                "stable": "rc" not in version and "beta" not in version,
                "files": [],
            }
            for version in sorted(self._versions, key=_go_key, reverse=True)
        ]
        return json_reply(body)


def _go_key(version: str) -> tuple[int, ...]:
    head = version.split("rc", maxsplit=1)[0].split("beta", maxsplit=1)[0]
    return tuple(int(part) for part in head.split(".") if part.isdigit())
