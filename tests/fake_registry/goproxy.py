"""Go module proxy: ``@v/list``, ``@latest``, ``.info``, ``.mod`` with case-encoded paths (§4)."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime

from .base import (
    Reply,
    Request,
    is_prerelease,
    iso,
    json_reply,
    reasons,
    semver_key,
    text_reply,
)

_PSEUDO = re.compile(r"[-.]\d{14}-[0-9a-f]{12}(?:\+incompatible)?$")
_ROUTE = re.compile(
    r"/(?P<module>.+?)/(?:@latest|@v/list|@v/(?P<version>[^/]+)\.(?P<ext>info|mod|zip))"
)


def encode_path(path: str) -> str:
    """Case-encode a module path or version: each upper-case letter becomes ``!`` + lower-case."""
    return re.sub(r"[A-Z]", lambda m: "!" + m[0].lower(), path)


def decode_path(escaped: str) -> str | None:
    """Undo :func:`encode_path`; None when the text has a bare upper-case letter (invalid)."""
    if re.search(r"[A-Z]", escaped):
        return None
    return re.sub(r"!([a-z])", lambda m: m[1].upper(), escaped)


@dataclass(frozen=True)
class _Module:
    versions: dict[str, datetime | None]
    latest: str | None
    go_mod: str


def _latest(versions: Collection[str]) -> str | None:
    """``@latest`` before retractions: highest release, else highest prerelease, else pseudo."""
    tagged = [v for v in versions if not _PSEUDO.search(v)]
    for pool in ([v for v in tagged if not is_prerelease(v)], tagged, list(versions)):
        if pool:
            return max(pool, key=semver_key)
    return None


class GoProxy:
    """Modules by path; ``missing_status`` (404, or 410 like the old proxy) answers unknowns."""

    def __init__(self) -> None:
        self.missing_status = 404
        self._modules: dict[str, _Module] = {}

    def add(
        self,
        module: str,
        versions: Mapping[str, datetime | None],
        *,
        retracted: Mapping[str, str | None] | Collection[str] | None = None,
        latest: str | None = None,
        deprecated: str | None = None,
        go_mod_extra: str = "",
        go_version: str = "1.21",
        go_mod: str | None = None,
    ) -> None:
        """Register a module; ``versions`` maps version → commit time (None omits ``Time``).

        Every version's ``.mod`` carries the same text: an optional ``// Deprecated:`` comment,
        the ``module`` and ``go`` lines, ``go_mod_extra`` verbatim, and one ``retract`` line per
        ``retracted`` version (with its rationale comment); ``go_mod`` replaces all of it (a
        proxy's ``module <path>`` stand-in for a version without a go.mod). Pseudo-versions stay
        out of ``list``.
        """
        lines = [f"// Deprecated: {deprecated}"] if deprecated else []
        lines += [f"module {module}", "", f"go {go_version}", ""]
        if go_mod_extra:
            lines.append(go_mod_extra.rstrip("\n"))
        for version, why in reasons(retracted).items():
            lines.append(f"retract {version}" + (f" // {why}" if why else ""))
        text = go_mod if go_mod is not None else "\n".join(lines).rstrip("\n") + "\n"
        self._modules[module] = _Module(dict(versions), latest, text)

    def handle(self, request: Request) -> Reply:
        """Serve the GOPROXY protocol; an un-encoded upper-case letter is a 400."""
        match = _ROUTE.fullmatch(request.path)
        if match is None:
            return text_reply("not found", self.missing_status)
        module = decode_path(match["module"])
        version = decode_path(match["version"] or "")
        if module is None or version is None:
            return text_reply(f"bad request: invalid escaped path {request.path}", 400)
        found = self._modules.get(module)
        if found is None:
            return text_reply(
                f"not found: module {module}: no matching versions", self.missing_status
            )
        if request.path.endswith("/@v/list"):
            listed = [v for v in found.versions if not _PSEUDO.search(v)]
            return text_reply("".join(f"{v}\n" for v in listed))
        if request.path.endswith("/@latest"):
            version = found.latest or _latest(found.versions) or ""
        if version not in found.versions or match["ext"] == "zip":
            return text_reply(
                f"not found: {module}@{version}: unknown revision", self.missing_status
            )
        if match["ext"] == "mod":
            return text_reply(found.go_mod)
        moment = found.versions[version]
        info = {"Version": version} | ({"Time": iso(moment)} if moment else {})
        return json_reply(info)
