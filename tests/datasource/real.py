"""The real registry documents in ``benchmarks/data/`` (issue 12), as the datasources receive them.

npm packuments are served as stored. The PyPI documents are JSON API project documents
(``/pypi/<name>/json``); ``simple_page`` rebuilds from one the PEP 691 JSON Simple page that
the PyPI datasource reads (same files, names, upload times, hashes, sizes, yanked flags and
``requires-python``), so the PyPI datasource is measured on real shapes too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import zstandard

DATA = Path(__file__).resolve().parent.parent.parent / "benchmarks" / "data"
NPM_DOCUMENTS = ("left-pad", "lodash", "react", "typescript")
PYPI_DOCUMENTS = ("requests", "django", "numpy")
_MAX_BYTES = 64 << 20


def npm_packument(name: str) -> bytes:
    """Return the stored full packument of npm package ``name`` (bytes, as served)."""
    return _load(f"npm-{name}.json.zst")


def pypi_page(name: str) -> bytes:
    """Return the PEP 691 JSON Simple page of PyPI project ``name`` (see ``simple_page``)."""
    return simple_page(_load(f"pypi-{name}.json.zst"))


def simple_page(json_api_document: bytes) -> bytes:
    """Rebuild the PEP 691 (api-version 1.1, PEP 700) page from a PyPI JSON API document.

    Files are sorted by filename as PyPI serves them; ``versions`` lists every release key.
    """
    document: dict[str, Any] = orjson.loads(json_api_document)
    files = [
        {
            "filename": file["filename"],
            "url": file["url"],
            "hashes": {"sha256": file["digests"]["sha256"]},
            "requires-python": file.get("requires_python"),
            "size": file["size"],
            "upload-time": file["upload_time_iso_8601"],
            "yanked": (file.get("yanked_reason") or True) if file["yanked"] else False,
            "core-metadata": file.get("core-metadata", False),
            "data-dist-info-metadata": file.get("core-metadata", False),
        }
        for release in document["releases"].values()
        for file in release
    ]
    files.sort(key=lambda file: str(file["filename"]))
    page = {
        "meta": {"api-version": "1.1", "_last-serial": document["last_serial"]},
        "name": str(document["info"]["name"]).lower(),
        "versions": list(document["releases"]),
        "files": files,
    }
    return orjson.dumps(page)


def _load(filename: str) -> bytes:
    blob = (DATA / filename).read_bytes()
    return zstandard.ZstdDecompressor().decompress(blob, max_output_size=_MAX_BYTES)
