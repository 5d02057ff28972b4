"""``patchula run`` against hostile GitHub servers: every one an error row, never a crash or hang.

The fake registry's GitHub host (``--registry github=…``) misbehaves on one route at a time:
a 50 MB tag page, a ``Link`` loop, a page of 1,000,000 tags, a server that never answers,
malformed JSON, a GraphQL answer of the wrong shape or huge, a ``git/matching-refs`` answer
of 100,000 refs, an annotated tag that points at itself. Each case runs under a 60 s alarm.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from patchula.cli import app
from tests.fake_registry import FakeRegistry
from tests.fake_registry.github import GitHub
from tests.hang import fail_if_blocked

runner = CliRunner()
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
# A test stand-in for a GitHub token, never a real secret.
TOKEN = "STANDIN-gh-token-hostile"  # noqa: S105 - a test stand-in
REPO = "/repos/actions/checkout"
TAGS = f"GET {REPO}/tags"
RELEASES = f"GET {REPO}/releases"
MATCHING = f"GET {REPO}/git/matching-refs/tags/v4.2.2"
GRAPHQL = "POST /graphql"
SHA = GitHub.commit_of("actions", "checkout", "v4.2.2")
TAG_OBJECT = "d" * 40
WHAT = "GitHub repository 'actions/checkout'"


@pytest.fixture
def no_hang() -> Iterator[None]:
    """Fail a run that blocks instead of hanging the suite."""
    with fail_if_blocked(60):
        yield


def _run(
    registry: FakeRegistry, tmp_path: Path, uses: str, *more: str, token: str = ""
) -> dict[str, Any]:
    """The one row of a workflow with the step ``uses: <uses>``, and the run's exit code."""
    releases = {"v4.2.1": NOW - timedelta(days=120), "v4.2.2": NOW - timedelta(days=100)}
    registry.github.add_repo("actions", "checkout", releases)
    repo = tmp_path / "repo"
    (repo / ".github/workflows").mkdir(parents=True)
    workflow = f"on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - uses: {uses}\n"
    (repo / ".github/workflows/ci.yml").write_text(workflow)
    args = ["run", str(repo), "--format", "json", "--no-cache", "--now", NOW.isoformat()]
    args += ["--registry", f"github={registry.url('github')}", *more]
    env = {"GH_TOKEN": token, "GITHUB_TOKEN": "", "GITHUB_API_URL": ""}
    result = runner.invoke(app, args, env=env, catch_exceptions=False)
    [row] = json.loads(result.stdout)["repositories"][0]["dependencies"]
    row["exit"] = result.exit_code
    return dict(row)


Setup = Callable[[FakeRegistry], None]


def _fail(route: str, body: bytes, headers: dict[str, str] | None = None) -> Setup:
    return lambda r: r.host("github").fail_next(300, 200, headers or {}, body, route=route)


def _huge(route: str, *, announce: bool = True) -> Setup:
    size = 50 * 1024 * 1024
    return lambda r: r.host("github").huge_next(300, size, announce=announce, route=route)


def _silent(route: str) -> Setup:
    return lambda r: r.host("github").silent_next(300, route=route)


def _graphql(answer: dict[str, Any]) -> Setup:
    return lambda r: r.github.graphql_replies.extend([answer] * 20)


def _million_tags(registry: FakeRegistry) -> None:
    tags = [{"name": f"v1.{n}", "commit": {"sha": SHA}} for n in range(1_000_000)]
    _fail(TAGS, json.dumps(tags).encode())(registry)


def _million_refs() -> dict[str, Any]:
    nodes = [{"name": f"v1.{n}"} for n in range(1_000_000)]
    page = {"nodes": nodes, "pageInfo": {"hasNextPage": False, "endCursor": None}}
    return {"data": {"repository": {"refs": page}}}


def _link_loop(registry: FakeRegistry) -> None:
    page = json.dumps([{"name": "v4.2.2", "commit": {"sha": SHA}}]).encode()
    link = f'<{registry.url("github")}{REPO}/tags?per_page=100>; rel="next"'
    _fail(TAGS, page, {"Link": link})(registry)


def _many_refs(registry: FakeRegistry) -> None:
    refs = [
        {"ref": f"refs/tags/v4.2.2-{n}", "object": {"sha": SHA, "type": "commit"}}
        for n in range(100_000)
    ]
    refs.append({"ref": "refs/tags/v4.2.2", "object": {"sha": SHA, "type": "commit"}})
    _fail(MATCHING, json.dumps(refs).encode())(registry)


def _tag_loop(registry: FakeRegistry) -> None:
    """``v4.2.2`` names an annotated tag object whose target is that tag object itself."""
    ref = {"ref": "refs/tags/v4.2.2", "object": {"sha": TAG_OBJECT, "type": "tag"}}
    _fail(MATCHING, json.dumps([ref]).encode())(registry)
    itself = {"sha": TAG_OBJECT, "tag": "v4.2.2", "object": {"sha": TAG_OBJECT, "type": "tag"}}
    _fail(f"GET {REPO}/git/tags/{TAG_OBJECT}", json.dumps(itself).encode())(registry)


DEADLINE = ("--request-deadline", "0.5")
BOUND = ("--max-body-bytes", "1MiB")
GRAPHQL_WHAT = f"{WHAT} (tags): "


@pytest.mark.parametrize(
    ("setup", "more", "token", "reason"),
    [
        pytest.param(
            _huge(TAGS), (), "", "GitHub tag list: unusable answer from GitHub", id="50MB-tag-page"
        ),
        pytest.param(
            _huge(TAGS, announce=False),
            BOUND,
            "",
            "sent a response body on the wire over the 1 MiB limit; not retried",
            id="50MB-unannounced-tag-page-over-the-body-bound",
        ),
        pytest.param(
            _huge(RELEASES),
            (*BOUND, "--min-release-age", "3d"),
            "",
            "publish times unavailable: ",
            id="50MB-release-page-over-the-body-bound",
        ),
        pytest.param(
            _link_loop,
            (),
            "",
            f"{WHAT} (tags): the tag list's next-page links loop",
            id="link-loop",
        ),
        pytest.param(
            _million_tags,
            (),
            "",
            "GitHub tag list: a page of 1000000 entries, more than the 100 asked; not read",
            id="a-million-tags",
        ),
        pytest.param(_silent(TAGS), DEADLINE, "", "within 0.5 s (deadline)", id="hangs"),
        pytest.param(
            _fail(TAGS, b'[{"name": '),
            (),
            "",
            "GitHub tag list: unusable answer from GitHub (Invalid JSON",
            id="malformed-json",
        ),
        pytest.param(
            _fail(TAGS, b'{"message": "hi"}'),
            (),
            "",
            "GitHub tag list: unusable answer from GitHub (Expected array, got object)",
            id="not-a-list",
        ),
        pytest.param(
            _graphql({"data": {"repository": []}}),
            (),
            TOKEN,
            f"{GRAPHQL_WHAT}GitHub GraphQL answered no repository",
            id="graphql-wrong-shape",
        ),
        pytest.param(
            _graphql({"data": {"repository": {"refs": {"nodes": 7}}}}),
            (),
            TOKEN,
            f"{GRAPHQL_WHAT}unusable GraphQL answer (",
            id="graphql-nodes-not-a-list",
        ),
        pytest.param(
            _graphql(_million_refs()),
            (),
            TOKEN,
            f"{GRAPHQL_WHAT}GraphQL refs: a page of 1000000 entries, more than the 100 asked",
            id="graphql-a-million-refs",
        ),
        pytest.param(
            _huge(GRAPHQL),
            (),
            TOKEN,
            f"{GRAPHQL_WHAT}GitHub GraphQL answer: unusable answer from GitHub (Invalid JSON",
            id="graphql-50MB",
        ),
        pytest.param(
            _silent(GRAPHQL), DEADLINE, TOKEN, "within 0.5 s (deadline)", id="graphql-hangs"
        ),
    ],
)
def test_a_hostile_tag_list_is_an_error_row(
    fake_registry: FakeRegistry,
    tmp_path: Path,
    no_hang: None,
    setup: Setup,
    more: tuple[str, ...],
    token: str,
    reason: str,
) -> None:
    """Each ends as an ``error`` (or, for dates alone, ``held-back``) row saying what was wrong.

    Either is a failed lookup (exit 3): a row held back for want of the dates the wait needs
    says so in ``failedLookup``.
    """
    setup(fake_registry)
    row = _run(fake_registry, tmp_path, "actions/checkout@v4.2.1", *more, token=token)
    expected = "held-back" if "publish times" in reason else "error"
    assert (row["exit"], row["status"], row["current"]) == (3, expected, "v4.2.1")
    if expected == "held-back":
        assert reason in row["failedLookup"]
    assert reason in row["reason"]
    assert TOKEN not in json.dumps(row)


@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        pytest.param(
            _many_refs,
            f"{WHAT} (ref 'v4.2.2'): GitHub answered more than 10000 matching refs; not read",
            id="100000-matching-refs",
        ),
        pytest.param(
            _tag_loop,
            f"{WHAT} (ref 'v4.2.2'): its annotated tag objects loop (at {TAG_OBJECT!r});"
            " not followed",
            id="annotated-tag-loop",
        ),
    ],
)
def test_a_hostile_ref_answer_is_an_error_row(
    fake_registry: FakeRegistry, tmp_path: Path, no_hang: None, setup: Setup, reason: str
) -> None:
    """A SHA pin's comment tag whose commit cannot be read: ``error``, never "no such tag"."""
    setup(fake_registry)
    row = _run(fake_registry, tmp_path, f"actions/checkout@{SHA} # v4.2.2")
    assert (row["exit"], row["status"], row["current"]) == (3, "error", "v4.2.2")
    assert row["reason"] == f"{reason}; the commit of tag v4.2.2 could not be read"
    assert row["currentDigest"] is None
