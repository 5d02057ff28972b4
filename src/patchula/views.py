"""Catalog views: their identity, the ``catalog-view-v1`` document, and the reuse window.

Seed 003, "Catalog views and release-age policy (departure 50)": a successful catalog is kept
apart from HTTP bodies, one per (datasource, base URL, package, credential identity, mise
registry mapping), and reused without any request while younger than
``clamp(waitHours - 1, 1, 24)`` hours. ``lookup`` decides when; ``cache`` stores the bytes.
"""

from __future__ import annotations

import urllib.parse
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import orjson

from patchula.http.caching import credential_digest
from patchula.models import Catalog, Release

__all__ = [
    "REPRESENTATION",
    "ViewDocument",
    "decode",
    "encode",
    "reusable",
    "reuse_window",
    "view_key",
]

REPRESENTATION = "catalog-view-v1"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
# Every ``Release`` field, in order: a document written with other fields is a miss.
_RELEASE_FIELDS = list(Release._fields)
# Every ``Catalog`` field but the releases (their own list) and ``reused`` (a fact of the run
# that reads the view, never of the view itself).
_CATALOG_FIELDS = [n for n in Catalog.__struct_fields__ if n not in {"releases", "reused"}]


def view_key(
    datasource: str,
    base_url: str,
    package: str,
    credential_identity: str | None,
    mise_mapping: str = "",
) -> str:
    """The cache key of one view: a JSON array of its identity, never a secret.

    ``base_url`` is the source mode (registry or mirror; any userinfo is dropped: credentials
    count only through ``credential_identity``, the ``Credential.cache_identity`` of what the
    fetch facade would send, digested here; ``None`` for anonymous). ``mise_mapping`` names
    the mise registry mapping a tool was resolved through (``""`` for every datasource today).
    """
    parts = urllib.parse.urlsplit(base_url)
    if parts.username is not None or parts.password is not None:
        host = parts.netloc.rpartition("@")[2]
        base_url = urllib.parse.urlunsplit(parts._replace(netloc=host))
    identity = credential_digest(credential_identity)
    return orjson.dumps(
        [REPRESENTATION, datasource, base_url, package, identity, mise_mapping]
    ).decode()


def reuse_window(wait: timedelta) -> timedelta:
    """How long a view may be reused for a wait: ``clamp(wait_hours - 1, 1, 24)`` hours.

    24 h → 23 h, 3 days → 24 h, 2 h → 1 h, 30 minutes → 1 h. Only meaningful for a positive
    wait (zero keeps the HTTP freshness rules: no view is read).
    """
    hours = wait / timedelta(hours=1) - 1
    return timedelta(hours=min(max(hours, 1.0), 24.0))


def reusable(fetched_at: datetime, now: datetime, wait: timedelta, *, offline: bool) -> bool:
    """Whether a view fetched at ``fetched_at`` answers a lookup at ``now`` (the run's time).

    Strict: ``0 <= now - fetched_at < reuse_window(wait)``; a view stamped in the future is
    revalidated. ``offline`` uses a view of any age (there is nothing else to ask).
    """
    if offline:
        return True
    if wait <= timedelta(0):
        return False
    age = now - fetched_at
    return timedelta(0) <= age < reuse_window(wait)


class ViewDocument(msgspec.Struct, frozen=True):
    """A decoded view: the catalog and the publish times found lazily for it.

    ``times`` maps each version a lazy time lookup answered to its time (``None``: the
    registry gives none); ``sources`` names where each of those dates came from.
    """

    catalog: Catalog
    times: dict[str, datetime | None]
    sources: dict[str, str]


def _micros(moment: datetime | None) -> int | None:
    return None if moment is None else (moment - _EPOCH) // _MICROSECOND


def _moment(value: object) -> datetime | None:
    if value is None:
        return None
    if type(value) is not int:
        raise TypeError(value)
    return _EPOCH + value * _MICROSECOND


def encode(catalog: Catalog, times: dict[str, datetime | None], sources: dict[str, str]) -> bytes:
    """The ``catalog-view-v1`` document of ``catalog`` (orjson; times as epoch microseconds)."""
    head: dict[str, Any] = {}
    for name in _CATALOG_FIELDS:
        value = getattr(catalog, name)
        if name == "fetched_at":
            value = _micros(value)
        elif name == "dist_tags":
            value = [list(pair) for pair in value]
        head[name] = value
    releases = [
        [
            _micros(r.released_at) if name == "released_at" else getattr(r, name)
            for name in _RELEASE_FIELDS
        ]
        for r in catalog.releases
    ]
    return orjson.dumps(
        {
            "representation": REPRESENTATION,
            "catalog": head,
            "release_fields": _RELEASE_FIELDS,
            "releases": releases,
            "times": {version: _micros(at) for version, at in times.items()},
            "sources": sources,
        }
    )


_OPTIONAL_STR = (str, type(None))
_CATALOG_TYPES: dict[str, tuple[type, ...]] = {
    "datasource": (str,),
    "package_name": (str,),
    "latest": _OPTIONAL_STR,
    "time_source": (str,),
    "source_url": (str,),
    "lists_every_version": (bool,),
    "successor": _OPTIONAL_STR,
    "caveat": _OPTIONAL_STR,
    "note": _OPTIONAL_STR,
    "path_latest": _OPTIONAL_STR,
}
_RELEASE_TYPES: dict[str, tuple[type, ...]] = {
    "version": (str,),
    "yanked": (bool,),
    "deprecated": _OPTIONAL_STR,
    "installable": (bool,),
    "prerelease": (bool,),
    "digest": _OPTIONAL_STR,
    "yanked_reason": _OPTIONAL_STR,
    "requires_python": _OPTIONAL_STR,
}


def decode(body: bytes) -> ViewDocument | None:
    """Parse a ``catalog-view-v1`` document; ``None`` for anything else or anything damaged.

    Every value is type-checked: a view written by another version of patchula (other
    fields), a truncated or altered document is a miss, never an exception.
    """
    try:
        return _decode(orjson.loads(body))
    except (orjson.JSONDecodeError, TypeError, ValueError, KeyError, AttributeError, OverflowError):
        return None


def _checked(value: object, kinds: tuple[type, ...]) -> Any:  # noqa: ANN401 - a checked JSON value
    if type(value) not in kinds:
        raise TypeError(value)
    return value


def _decode(data: Any) -> ViewDocument | None:  # noqa: ANN401 - parsed JSON
    if (
        type(data) is not dict
        or data.get("representation") != REPRESENTATION
        or data.get("release_fields") != _RELEASE_FIELDS
        or type(data.get("catalog")) is not dict
        or sorted(data["catalog"]) != sorted(_CATALOG_FIELDS)
    ):
        return None
    head = data["catalog"]
    values: dict[str, Any] = {
        name: _checked(head[name], kinds) for name, kinds in _CATALOG_TYPES.items()
    }
    fetched_at = _moment(head["fetched_at"])
    if fetched_at is None:
        return None
    values["fetched_at"] = fetched_at
    values["dist_tags"] = tuple(
        (_checked(name, (str,)), _checked(version, (str,))) for name, version in head["dist_tags"]
    )
    releases = []
    for row in _checked(data["releases"], (list,)):
        if type(row) is not list or len(row) != len(_RELEASE_FIELDS):
            return None
        item = dict(zip(_RELEASE_FIELDS, row, strict=True))
        checked = {name: _checked(item[name], kinds) for name, kinds in _RELEASE_TYPES.items()}
        releases.append(Release(released_at=_moment(item["released_at"]), **checked))
    times = {
        _checked(version, (str,)): _moment(at)
        for version, at in _checked(data["times"], (dict,)).items()
    }
    sources = {
        _checked(version, (str,)): _checked(source, (str,))
        for version, source in _checked(data["sources"], (dict,)).items()
    }
    catalog = Catalog(releases=tuple(releases), **values)
    return ViewDocument(catalog, times, sources)
