"""PyPI: the JSON API and the PEP 691 Simple API (JSON or HTML by Accept) (registries.md §2)."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping
from datetime import datetime, timedelta
from html import escape
from itertools import count
from typing import Any

from packaging.version import InvalidVersion, Version

from .base import Reply, Request, digest, iso, json_reply, reasons, redirect, text_reply

SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
_NOT_FOUND = {"message": "Not Found"}


def normalize(name: str) -> str:
    """PEP 503 normalisation: lower-case, each run of ``-``, ``_``, ``.`` becomes one ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


class PyPI:
    """Projects stored as JSON API documents; the Simple API is derived from their ``releases``."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self._documents: dict[str, dict[str, Any]] = {}
        self._status: dict[str, dict[str, str]] = {}
        # Per project and release, the ``info.requires_dist`` of its release document.
        self._requires_dist: dict[str, Mapping[str, list[str]]] = {}
        self._serials = count(31_000_000)

    def add(
        self,
        name: str,
        releases: Mapping[str, datetime | None],
        *,
        yanked: Mapping[str, str | None] | Collection[str] | None = None,
        no_files: Collection[str] = (),
        requires_python: str | Mapping[str, str | None] | None = None,
        status: str | None = None,
        status_reason: str = "",
        requires_dist: Mapping[str, list[str]] | None = None,
    ) -> dict[str, Any]:
        """Register a project and return its JSON API document.

        Each release gets an sdist at its time and a wheel 30 s later; a release whose time is
        None, or listed in ``no_files``, has no files. ``yanked`` maps version → reason (None for
        none). ``status`` is the PEP 792 project status (``archived``, ``deprecated`` …).
        ``requires_dist`` maps version → the PEP 508 strings its release document lists.
        ``requires_python`` is every file's Requires-Python, or maps version → its files' one.
        """
        yank = reasons(yanked)

        def python(version: str) -> str | None:
            if requires_python is None or isinstance(requires_python, str):
                return requires_python
            return requires_python.get(version)

        files = {
            v: [] if t is None or v in no_files else list(self._files(name, v, t, yank, python(v)))
            for v, t in releases.items()
        }
        current = _current(list(releases), set(yank))
        document = {
            "info": {
                "name": name,
                "version": current,
                "summary": f"The {name} project.",
                "requires_python": python(current),
                "yanked": current in yank,
                "yanked_reason": yank.get(current),
                "package_url": f"{self.base_url}/project/{name}/",
                "release_url": f"{self.base_url}/project/{name}/{current}/",
            },
            "last_serial": next(self._serials),
            "releases": files,
            "urls": files.get(current, []),
            "vulnerabilities": [],
        }
        self.add_document(document)
        if status is not None:
            self._status[normalize(name)] = {"status": status, "reason": status_reason}
        if requires_dist:
            self._requires_dist[normalize(name)] = dict(requires_dist)
        return document

    def add_document(self, document: Mapping[str, Any]) -> None:
        """Serve a JSON API document (``info``, ``releases``, ``urls``, ``last_serial``)."""
        self._documents[normalize(document["info"]["name"])] = dict(document)

    def _files(
        self,
        name: str,
        version: str,
        moment: datetime,
        yank: Mapping[str, str | None],
        rp: str | None,
    ) -> Iterator[dict[str, Any]]:
        stem = re.sub(r"[-_.]+", "_", name).lower()
        for kind, filename, delay in (
            ("sdist", f"{stem}-{version}.tar.gz", 0),
            ("bdist_wheel", f"{stem}-{version}-py3-none-any.whl", 30),
        ):
            sha = digest(filename)
            uploaded = moment + timedelta(seconds=delay)
            yield {
                "digests": {"md5": digest(filename, "md5"), "sha256": sha},
                "filename": filename,
                "packagetype": kind,
                "python_version": "source" if kind == "sdist" else "py3",
                "requires_python": rp,
                "size": 10_000 + len(filename),
                "upload_time": iso(uploaded).removesuffix("Z"),
                "upload_time_iso_8601": iso(uploaded, "microseconds"),
                "url": f"{self.base_url}/packages/{sha[:2]}/{sha[2:4]}/{sha[4:]}/{filename}",
                "yanked": version in yank,
                "yanked_reason": yank.get(version),
            }

    def handle(self, request: Request) -> Reply:
        """``/pypi/<name>[/<version>]/json`` and ``/simple/<normalized>/``; else 301 or 404."""
        if match := re.fullmatch(r"/pypi/([^/]+)/(?:([^/]+)/)?json/?", request.path):
            return self._json_api(match[1], match[2])
        if match := re.fullmatch(r"/simple/([^/]+)(/?)", request.path):
            return self._simple(request, match[1], slash=bool(match[2]))
        return json_reply(_NOT_FOUND, 404)

    def _json_api(self, name: str, version: str | None) -> Reply:
        document = self._documents.get(normalize(name))
        if document is None or (version is not None and version not in document["releases"]):
            return json_reply(_NOT_FOUND, 404)
        canonical = document["info"]["name"]  # Warehouse redirects to the project's own spelling
        if name != canonical:
            tail = f"{version}/json" if version else "json"
            return redirect(f"{self.base_url}/pypi/{canonical}/{tail}")
        if version is not None:
            files = document["releases"][version]
            info = document["info"] | {
                "version": version,
                "yanked": any(f["yanked"] for f in files),
                "requires_dist": self._requires_dist.get(normalize(name), {}).get(version),
            }
            document = {k: v for k, v in document.items() if k != "releases"}
            document |= {"info": info, "urls": files}
        reply = json_reply(document)
        reply.headers["X-PyPI-Last-Serial"] = str(document.get("last_serial", 0))
        return reply

    def _simple(self, request: Request, name: str, *, slash: bool) -> Reply:
        canonical = normalize(name)
        document = self._documents.get(canonical)
        if document is None:
            return text_reply("404 Not Found", 404)
        if name != canonical or not slash:
            return redirect(f"{self.base_url}/simple/{canonical}/")
        files = [_simple_file(f) for fs in document["releases"].values() for f in fs]
        accept = request.headers.get("accept", "")
        if SIMPLE_JSON in accept or "application/vnd.pypi.simple.latest+json" in accept:
            page: dict[str, Any] = {
                "meta": {"api-version": "1.4", "_last-serial": document.get("last_serial", 0)},
                "name": canonical,
                "versions": list(document["releases"]),
                "files": files,
            }
            if canonical in self._status:
                page["project-status"] = self._status[canonical]
            reply = json_reply(page, content_type=SIMPLE_JSON)
        else:
            reply = text_reply(_html(canonical, files), content_type="text/html; charset=utf-8")
        reply.headers |= {
            "Vary": "Accept",
            "X-PyPI-Last-Serial": str(document.get("last_serial", 0)),
        }
        return reply


def _current(versions: list[str], yanked: set[str]) -> str:
    """Warehouse's ``info.version``: non-yanked first, then final releases, then highest PEP 440."""

    def key(version: str) -> tuple[bool, bool, bool, Version]:
        try:
            parsed = Version(version)
        except (InvalidVersion, ValueError):  # ValueError: over int()'s 4,300 digits
            return version not in yanked, False, False, Version("0")
        return version not in yanked, not parsed.is_prerelease, True, parsed

    return max(versions, key=key) if versions else ""


def _simple_file(file: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON API file dict in PEP 691/700 shape (``yanked`` is a reason string when given)."""
    out: dict[str, Any] = {
        "filename": file["filename"],
        "url": file["url"],
        "hashes": {"sha256": file.get("digests", {}).get("sha256", "")},
        "size": file.get("size", 0),
        "yanked": (file.get("yanked_reason") or True) if file.get("yanked") else False,
        "core-metadata": False,
    }
    if file.get("requires_python"):
        out["requires-python"] = file["requires_python"]
    if file.get("upload_time_iso_8601"):
        out["upload-time"] = file["upload_time_iso_8601"]
    return out


def _html(name: str, files: list[dict[str, Any]]) -> str:
    """The PEP 503 page with PEP 592 ``data-yanked`` and ``data-requires-python``."""
    links = []
    for file in files:
        attributes = f' href="{escape(file["url"])}#sha256={file["hashes"]["sha256"]}"'
        if "requires-python" in file:
            attributes += f' data-requires-python="{escape(file["requires-python"])}"'
        if file["yanked"] is not False:
            reason = "" if file["yanked"] is True else file["yanked"]
            attributes += f' data-yanked="{escape(reason)}"'
        links.append(f"    <a{attributes}>{escape(file['filename'])}</a><br />")
    body = "\n".join(links)
    return (
        "<!DOCTYPE html>\n<html>\n  <head>\n"
        '    <meta name="pypi:repository-version" content="1.4">\n'
        f"    <title>Links for {name}</title>\n  </head>\n  <body>\n    <h1>Links for {name}</h1>\n"
        f"{body}\n  </body>\n</html>\n"
    )
