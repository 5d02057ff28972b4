"""npm registry: full and abbreviated packuments and version documents (registries.md §1)."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from datetime import datetime
from typing import Any
from urllib.parse import unquote

from .base import EPOCH, Reply, Request, digest, is_prerelease, iso, json_reply, semver_key

ABBREVIATED = "application/vnd.npm.install-v1+json"
_ABBREVIATED_KEYS = ("name", "version", "deprecated", "engines", "dependencies", "dist")


class Npm:
    """Packuments by name; ``GET /<name>`` accepts ``@scope%2fname``, ``%2F`` and a plain ``/``."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self._documents: dict[str, dict[str, Any]] = {}

    def add(
        self,
        name: str,
        versions: Mapping[str, datetime | None],
        *,
        latest: str | None = None,
        deprecated: Mapping[str, str] | None = None,
        dist_tags: Mapping[str, str] | None = None,
        engines: Mapping[str, str] | None = None,
        dependencies: Mapping[str, Mapping[str, str]] | None = None,
    ) -> dict[str, Any]:
        """Register a package and return its full packument.

        A version whose time is None is left out of ``time`` (npm has such documents).
        ``latest`` defaults to the highest stable version (else the highest). ``engines`` applies
        to every version. ``dependencies`` maps a version to its ``dependencies`` (name → range).
        """
        deprecated = deprecated or {}
        times = {v: t for v, t in versions.items() if t is not None}
        stamps = sorted(times.values()) or [EPOCH]
        manifests: dict[str, Any] = {}
        for version in versions:
            spec = f"{name}@{version}"
            integrity = base64.b64encode(hashlib.sha512(spec.encode()).digest()).decode()
            tarball = f"{self.base_url}/{name}/-/{name.rsplit('/', 1)[-1]}-{version}.tgz"
            manifest: dict[str, Any] = {"name": name, "version": version}
            if engines:
                manifest["engines"] = dict(engines)
            if version in deprecated:
                manifest["deprecated"] = deprecated[version]
            if dependencies and version in dependencies:
                manifest["dependencies"] = dict(dependencies[version])
            manifest["dist"] = {
                "tarball": tarball,
                "shasum": digest(spec, "sha1"),
                "integrity": f"sha512-{integrity}",
            }
            manifests[version] = manifest
        tags = dict(dist_tags or {})
        stable = [v for v in versions if not is_prerelease(v)] or list(versions)
        if latest or ("latest" not in tags and stable):
            tags["latest"] = latest or max(stable, key=semver_key)
        document = {
            "_id": name,
            "name": name,
            "dist-tags": tags,
            "versions": manifests,
            "time": {
                "created": iso(stamps[0], "milliseconds"),
                "modified": iso(stamps[-1], "milliseconds"),
            }
            | {v: iso(t, "milliseconds") for v, t in times.items()},
        }
        self.add_document(document)
        return document

    def add_document(self, document: Mapping[str, Any]) -> None:
        """Serve ``document`` (a full packument) under its ``name``."""
        self._documents[str(document["name"])] = dict(document)

    def handle(self, request: Request) -> Reply:
        """``GET /<name>`` (full or abbreviated by Accept) and ``GET /<name>/<version-or-tag>``."""
        parts = unquote(request.path).lstrip("/").split("/")
        split = 2 if parts[0].startswith("@") else 1
        document = self._documents.get("/".join(parts[:split]))
        rest = parts[split:]
        if document is None or len(rest) > 1:
            return json_reply({"error": "Not found"}, 404)
        if rest:
            versions = document.get("versions", {})
            wanted = document.get("dist-tags", {}).get(rest[0], rest[0])
            if wanted not in versions:
                return json_reply({"error": f"version not found: {rest[0]}"}, 404)
            return json_reply(versions[wanted])
        reply = json_reply(document)
        if ABBREVIATED in request.headers.get("accept", ""):
            reply = json_reply(_abbreviate(document), content_type=ABBREVIATED)
        reply.headers["Vary"] = "accept-encoding, accept"
        return reply


def _abbreviate(document: Mapping[str, Any]) -> dict[str, Any]:
    """The "corgi" document: no ``time`` map, a top-level ``modified``, trimmed manifests."""
    versions = {
        v: {k: m[k] for k in _ABBREVIATED_KEYS if k in m}
        for v, m in document.get("versions", {}).items()
    }
    return {
        "name": document["name"],
        "modified": document.get("time", {}).get("modified", iso(EPOCH, "milliseconds")),
        "dist-tags": document.get("dist-tags", {}),
        "versions": versions,
    }
