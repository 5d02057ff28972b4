"""Image rows in the report: the full reference, tags with digests, ``digest`` updates."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime

from rich.console import Console

from patchula.models import Dependency, Finding
from patchula.report.dashboard import render_markdown
from patchula.report.model import ScanReport, build_report
from patchula.report.render import (
    render_json,
    render_plain,
    render_table,
    short_digest,
    shorten_digests,
)
from patchula.scan import RepoResult, Row, ScanResult
from patchula.settings import Settings

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
A = "sha256:" + "a" * 64
B = "sha256:" + "b" * 64
C = "sha256:" + "c" * 64


def _image(line: int, declared: str, tag: str | None, digest: str | None) -> Dependency:
    return Dependency(
        manager="dockerfile",
        file="Dockerfile",
        line=line,
        name="python",
        package_name="docker.io/library/python",
        datasource="docker",
        versioning="docker",
        dep_type="final",
        declared=declared,
        constraint=tag,
        digest=digest,
    )


def _report() -> ScanReport:
    repo = RepoResult(target="app", root="/src/app", commit=None)
    repo.rows = [
        Row(
            _image(1, f"python:3.12@{A}", "3.12", A),
            Finding(
                status="outdated",
                current="3.12",
                current_source="pin",
                latest="3.13",
                eligible="3.13",
                update_type="minor",
                digest=A,
                current_digest=B,
                new_digest=C,
                reason=f"the digest of tag 3.12 moved: pinned {A}, now {B}",
            ),
        ),
        Row(
            _image(2, f"python:3.13@{A}", "3.13", A),
            Finding(
                status="outdated",
                current="3.13",
                current_source="pin",
                latest="3.13",
                update_type="digest",
                digest=A,
                current_digest=B,
            ),
        ),
        Row(
            _image(3, "python", "latest", None),
            Finding(
                status="up-to-date",
                current="latest",
                current_source="dist-tag",
                current_digest=B,
                reason=f"tracks the mutable tag latest (now {B})",
            ),
        ),
    ]
    return build_report(ScanResult(NOW, [repo], {}), Settings(), {})


def test_short_digest_keeps_the_algorithm_and_eight_hex_digits() -> None:
    """``sha256:abcd1234…`` in tables; what is not a digest is left alone."""
    assert short_digest("sha256:abcd1234" + "0" * 56) == "sha256:abcd1234…"
    assert short_digest("latest") == "latest"
    assert shorten_digests(f"python:3.12@{A} moved to {B}") == (
        "python:3.12@sha256:aaaaaaaa… moved to sha256:bbbbbbbb…"
    )


def test_json_has_the_full_reference_and_every_digest_in_full() -> None:
    """The row says docker, the reference as written, every digest in full, update type digest."""
    rows = json.loads(render_json(_report()))["repositories"][0]["dependencies"]
    first, second, third = rows
    assert (first["ecosystem"], first["declared"], first["current"], first["eligible"]) == (
        "docker",
        f"python:3.12@{A}",
        "3.12",
        "3.13",
    )
    assert (first["digest"], first["currentDigest"], first["newDigest"]) == (A, B, C)
    assert (second["updateType"], second["currentDigest"], second["newDigest"]) == (
        "digest",
        B,
        None,
    )
    assert (third["digest"], third["currentDigest"], third["currentSource"]) == (
        None,
        B,
        "dist-tag",
    )


def test_tables_show_tags_with_short_digests() -> None:
    """Plain, rich and Markdown: ``3.12@sha256:aaaaaaaa…``, never a 64-digit digest."""
    report = _report()
    plain = render_plain(report, show_all=True)
    out = io.StringIO()
    render_table(report, Console(file=out, width=250), show_all=True)
    markdown = render_markdown(report)
    for text in (plain, out.getvalue(), markdown):
        assert "a" * 64 not in text
        assert "b" * 64 not in text
        assert "3.12@sha256:aaaaaaaa…" in text  # current, with the pinned digest
        assert "3.13@sha256:cccccccc…" in text  # eligible, with its digest
        assert "now sha256:bbbbbbbb…" in text
    digest_row = next(line for line in plain.splitlines() if "3.13@sha256:aaaaaaaa…" in line)
    assert [cell.strip() for cell in digest_row.split(" | ")][3:8] == [
        "3.13@sha256:aaaaaaaa…",
        "pin",
        "3.13",
        "",
        "digest",
    ]


def test_the_schema_names_the_digest_fields_and_update_type() -> None:
    """``patchula schema``: digest, currentDigest, newDigest; updateType admits ``digest``."""
    schema = ScanReport.model_json_schema(by_alias=True)
    properties = schema["$defs"]["DependencyReport"]["properties"]
    assert {"digest", "currentDigest", "newDigest"} <= set(properties)
    assert "digest" in json.dumps(properties["updateType"])


def test_the_schema_describes_date_sources() -> None:
    """``patchula schema``: ``dateSources`` maps versions to words such as release or commit."""
    schema = ScanReport.model_json_schema(by_alias=True)
    prop = schema["$defs"]["DependencyReport"]["properties"]["dateSources"]
    assert prop["anyOf"] == [
        {"additionalProperties": {"type": "string"}, "type": "object"},
        {"type": "null"},
    ]
    for word in ("'release'", "'commit'", "'last-push'", "'web-api'", "'index'", "timeSource"):
        assert word in prop["description"]
    assert "dateSources" not in schema["$defs"]["DependencyReport"].get("required", [])
