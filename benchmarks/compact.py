"""Compact documents on real registry documents: stored raw bytes / stored compact bytes.

Inputs are the real documents in ``benchmarks/data`` (fetched 2026-12-01): the npm packuments of
left-pad, lodash, react and typescript as the registry sent them, and for PyPI the PEP 691 JSON
page the datasource asks for, built by the fake registry from the real JSON API document of
requests, django and numpy (same files, names, URLs, sha256 hashes, sizes, upload times and
yanked flags; ``core-metadata`` is ``false`` where PyPI gives a hash). Each goes through the
datasource's own compact-document function (``derive``) and both are measured in the cache's
stored form (``patchula.cache.store.compress``, what the cache writes for a body). Figure per
document: stored raw / stored compact; target >= 20 (issue 12, on real-shaped documents).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable

from benchmarks.harness import Figure, emit, note, real_document
from patchula.cache.store import compress
from patchula.datasource import npm, pypi
from tests.fake_registry import PyPI, Request, normalize
from tests.fake_registry.pypi import SIMPLE_JSON

TARGET = 20.0
NPM = ("left-pad", "lodash", "react", "typescript")
PYPI = ("requests", "django", "numpy")


def pep691_page(json_api_document: bytes) -> bytes:
    """The PEP 691 JSON page of a PyPI JSON API document, as the fake registry serves it."""
    document = json.loads(json_api_document)
    registry = PyPI("https://pypi.org")
    registry.add_document(document)
    name = normalize(document["info"]["name"])
    request = Request("GET", f"/simple/{name}/", {}, {"accept": SIMPLE_JSON}, b"")
    return registry.handle(request).body


def _figure(label: str, raw: bytes, derive: Callable[[bytes], bytes]) -> Figure:
    compact = derive(raw)
    stored_raw, stored_compact = len(compress(raw)), len(compress(compact))
    return Figure(
        f"compact.{label}",
        f"raw {len(raw):,} B (stored {stored_raw:,} B), compact {len(compact):,} B (stored "
        f"{stored_compact:,} B); unstored ratio {len(raw) / len(compact):.1f}",
        stored_raw / stored_compact,
        TARGET,
        op=">=",
    )


def main(*, quick: bool = False) -> None:
    """Print one ``compact.*`` figure per real document."""
    npm_names, pypi_names = (NPM[:1], PYPI[:1]) if quick else (NPM, PYPI)
    note("compact: stored = patchula.cache.store.compress (the cache's body encoding)")
    for name in npm_names:
        raw = real_document(f"npm-{name}")
        emit(_figure(f"npm-{name}", raw, functools.partial(npm.derive, package_name=name)))
    for name in pypi_names:
        page = pep691_page(real_document(f"pypi-{name}"))
        emit(_figure(f"pypi-{name}", page, functools.partial(pypi.derive, package_name=name)))
