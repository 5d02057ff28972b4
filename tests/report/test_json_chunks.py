"""The JSON report in pieces, one per repository (``json_chunks``): the same text, less memory."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from patchula.cli.run import write_report
from patchula.models import Dependency, Finding, ManifestProblem
from patchula.report.model import ScanReport, build_report
from patchula.report.render import json_chunks, render_json
from patchula.scan import CatalogInfo, RepoResult, Row, ScanResult
from patchula.settings import Settings

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _row(repo: int, line: int) -> Row:
    dep = Dependency(
        manager="requirements_txt",
        file="requirements.txt",
        line=line,
        name=f"pkg-{repo}-{line}",
        package_name=f"pkg-{repo}-{line}",
        datasource="pypi",
        versioning="pep440",
        dep_type="requirements",
        declared="==1.0",
        constraint="==1.0",
    )
    finding = Finding(status="outdated", current="1.0", latest="1.2", update_type="minor")
    catalog = CatalogInfo(NOW, reused=False, source_url="https://pypi.test/x", time_source="t")
    return Row(dep, finding, catalog=catalog)


def _report(repositories: int, rows: int = 3) -> ScanReport:
    repos = []
    for r in range(repositories):
        repo = RepoResult(target=f"repo{r}", root=f"/src/repo{r}", commit=None)
        repo.rows = [_row(r, line) for line in range(1, rows + 1)]
        repos.append(repo)
    return build_report(ScanResult(evaluated_at=NOW, repos=repos, host_stats={}), Settings(), {})


def _with_odd_repositories() -> ScanReport:
    """A repository with a lone surrogate (scrubbed to U+FFFD) and one without any row."""
    result = ScanResult(evaluated_at=NOW, repos=[], host_stats={})
    odd = RepoResult(target="odd\udcff", root="/src/odd", commit="abc")
    odd.problems = [ManifestProblem("req\udcff.txt", 2, "bad byte \udcff")]
    odd.rows = [_row(0, 1)]
    result.repos = [odd, RepoResult(target="empty", root="/src/empty", commit=None)]
    return build_report(result, Settings(), {})


@pytest.mark.parametrize(
    "make",
    [lambda: _report(0), lambda: _report(1), lambda: _report(4), _with_odd_repositories],
    ids=["no-repository", "one", "four", "surrogate-and-empty"],
)
def test_the_pieces_join_to_the_json_report(make: Callable[[], ScanReport]) -> None:
    """The pieces are the report's JSON text exactly: one piece per repository and two more."""
    report = make()
    pieces = list(json_chunks(report))
    assert "".join(pieces) == render_json(report)
    assert len(pieces) == len(report.repositories) + 2


def test_the_surrogate_is_replaced_in_the_pieces_too() -> None:
    """A lone surrogate in one repository becomes U+FFFD; the others are serialised directly."""
    text = "".join(json_chunks(_with_odd_repositories()))
    assert '"target": "odd\ufffd"' in text
    assert "\udcff" not in text


def _peak(write: Callable[[], Iterable[str]]) -> int:
    """Peak traced bytes while the pieces ``write()`` yields are written (and dropped)."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        for piece in write():
            len(piece)  # written and dropped, as a stream
        return tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()


def test_writing_the_pieces_never_holds_the_whole_document() -> None:
    """Peak memory of writing 40 repositories piece by piece: under a quarter of the text.

    Serialising the report at once holds at least the whole text (its bytes, then the text).
    """
    report = _report(40, rows=40)
    size = len(render_json(report))
    whole = _peak(lambda: [render_json(report)])
    pieces = _peak(lambda: json_chunks(report))
    assert whole >= size
    assert pieces < size / 4


def test_a_report_file_written_from_the_pieces_is_the_json_report(tmp_path: Path) -> None:
    """``write_report`` writes the pieces in order: the file holds the JSON report's text."""
    report = _with_odd_repositories()
    path = tmp_path / "out" / "report.json"
    write_report(path, json_chunks(report))
    assert path.read_text(encoding="utf-8") == render_json(report)
    write_report(path, "plain text")  # a whole text is still written as one
    assert path.read_text(encoding="utf-8") == "plain text"
