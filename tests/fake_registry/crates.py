"""crates.io: the sparse index and the ``/api/v1/crates`` web API (registries.md §3)."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .base import (
    Reply,
    Request,
    digest,
    is_prerelease,
    iso,
    json_reply,
    reasons,
    semver_key,
    text_reply,
)


@dataclass(frozen=True)
class _Version:
    num: str
    created_at: datetime
    yanked: bool
    yank_message: str | None
    rust_version: str | None


@dataclass(frozen=True)
class _Crate:
    name: str
    versions: tuple[_Version, ...]
    pubtime: bool


def index_path(name: str) -> str:
    """The sparse-index path of a crate: ``1/a``, ``2/ab``, ``3/a/abc``, ``ab/cd/abcd…``."""
    lower = name.lower()
    if len(lower) <= 2:
        return f"{len(lower)}/{lower}"
    if len(lower) == 3:
        return f"3/{lower[0]}/{lower}"
    return f"{lower[:2]}/{lower[2:4]}/{lower}"


class Crates:
    """Crates served on two virtual hosts: ``crates-index`` (sparse) and ``crates-api``."""

    def __init__(self, index_url: str, api_url: str) -> None:
        self.index_url = index_url
        self.api_url = api_url
        self._crates: dict[str, _Crate] = {}
        # Per (lower-case name, version), the ``deps`` of its index line.
        self._deps: dict[tuple[str, str], list[dict[str, Any]]] = {}

    def add(
        self,
        name: str,
        versions: Mapping[str, datetime],
        *,
        yanked: Mapping[str, str | None] | Collection[str] | None = None,
        pubtime: bool = True,
        rust_version: str | None = None,
        deps: Mapping[str, list[dict[str, Any]]] | None = None,
    ) -> None:
        """Register a crate; ``versions`` maps version → publish time, ``yanked`` → yank message.

        ``pubtime=False`` leaves ``pubtime`` out of the index lines (the API keeps ``created_at``).
        ``deps`` maps a version to its index line's ``deps`` entries (``name``, ``req``, ``kind``…).
        """
        for version, listed in (deps or {}).items():
            self._deps[(name.lower(), version)] = list(listed)
        yank = reasons(yanked)
        entries = tuple(
            _Version(v, t, v in yank, yank.get(v), rust_version) for v, t in versions.items()
        )
        self._crates[name.lower()] = _Crate(name, entries, pubtime)

    def handle_index(self, request: Request) -> Reply:
        """``/config.json`` and ``/<index path>``: one JSON line per version (including yanked)."""
        if request.path == "/config.json":
            return json_reply({"dl": f"{self.api_url}/api/v1/crates", "api": self.api_url})
        crate = self._crates.get(request.path.rsplit("/", 1)[-1])
        if crate is None or request.path[1:] != index_path(crate.name):
            return text_reply("not found", 404)
        lines = []
        for version in crate.versions:
            cksum = digest(f"{crate.name}@{version.num}")
            deps = self._deps.get((crate.name.lower(), version.num), [])
            line: dict[str, Any] = {"name": crate.name, "vers": version.num, "deps": deps}
            line |= {"cksum": cksum, "features": {}, "yanked": version.yanked, "v": 2}
            if version.rust_version:
                line["rust_version"] = version.rust_version
            if crate.pubtime:
                line["pubtime"] = iso(version.created_at)
            lines.append(json.dumps(line, separators=(",", ":")) + "\n")
        return text_reply("".join(lines))

    def handle_api(self, request: Request) -> Reply:
        """``/api/v1/crates/<name>`` and ``…/versions`` (seek pagination with ``per_page``)."""
        match = re.fullmatch(r"/api/v1/crates/([^/]+)(/versions)?/?", request.path)
        folded = match[1].lower().replace("_", "-") if match else ""
        crate = next((c for k, c in self._crates.items() if k.replace("_", "-") == folded), None)
        if match is None or crate is None:
            detail = f"crate `{match[1] if match else request.path}` does not exist"
            return json_reply({"errors": [{"detail": detail}]}, 404)
        by_semver = sorted(crate.versions, key=lambda v: semver_key(v.num), reverse=True)
        if match[2] is None:
            return self._crate(request, crate, by_semver)
        if request.arg("page") is not None:
            detail = "page-based pagination is not supported here; use the seek parameter"
            return json_reply({"errors": [{"detail": detail}]}, 400)
        ordered = by_semver
        if request.arg("sort") == "date":
            ordered = sorted(crate.versions, key=lambda v: v.created_at, reverse=True)
        per_page = request.arg("per_page")  # absent: every version, unpaginated (legacy)
        size = max(1, min(int(per_page), 100)) if per_page else len(ordered)
        seek = request.arg("seek")
        start = json.loads(base64.urlsafe_b64decode(seek))[0] if seek else 0
        page = ordered[start : start + size]
        next_page = None
        if start + size < len(ordered):
            token = base64.urlsafe_b64encode(json.dumps([start + size]).encode()).decode()
            sort = f"&sort={request.arg('sort')}" if request.arg("sort") else ""
            next_page = f"?per_page={size}{sort}&seek={token}"
        versions = [self._version(crate, v) for v in page]
        return json_reply(
            {"versions": versions, "meta": {"total": len(ordered), "next_page": next_page}}
        )

    def _crate(self, request: Request, crate: _Crate, by_semver: list[_Version]) -> Reply:
        live = [v for v in by_semver if not v.yanked] or by_semver
        stable = [v.num for v in live if not is_prerelease(v.num)]
        newest = max(crate.versions, key=lambda v: v.created_at)
        summary = {
            "id": crate.name,
            "name": crate.name,
            "max_version": live[0].num,
            "max_stable_version": stable[0] if stable else None,
            "newest_version": newest.num,
            "default_version": stable[0] if stable else live[0].num,
            "yanked": all(v.yanked for v in crate.versions),
            "num_versions": len(crate.versions),
            "created_at": iso(min(v.created_at for v in crate.versions), "microseconds"),
            "updated_at": iso(newest.created_at, "microseconds"),
        }
        include = request.arg("include")
        versions = None
        if include is None or "versions" in include:
            versions = [self._version(crate, v) for v in by_semver]
        return json_reply(
            {"crate": summary, "versions": versions, "keywords": [], "categories": []}
        )

    def _version(self, crate: _Crate, version: _Version) -> dict[str, Any]:
        created = iso(version.created_at, "microseconds")
        return {
            "id": int(digest(f"{crate.name}@{version.num}")[:8], 16),
            "crate": crate.name,
            "num": version.num,
            "dl_path": f"/api/v1/crates/{crate.name}/{version.num}/download",
            "created_at": created,
            "updated_at": created,
            "yanked": version.yanked,
            "yank_message": version.yank_message,
            "rust_version": version.rust_version,
            "checksum": digest(f"{crate.name}@{version.num}"),
            "crate_size": 20_000 + len(version.num),
            "license": "MIT OR Apache-2.0",
        }
