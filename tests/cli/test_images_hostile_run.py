"""``patchula run`` against hostile image registries: every one an error row, never a crash or hang.

The fake registry's OCI host stands for Docker Hub (``--registry docker=…``) and misbehaves on
one route at a time (its fault knobs answer that route's next requests as told, before any
token check): a 50 MB tag page, a ``Link`` loop, a token service that never answers, a
``file://`` token realm, malformed digest headers, a page of 1,000,000 tags.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from patchula.cli import app
from patchula.datasource import docker
from patchula.errors import RegistryError
from tests.fake_registry import FakeRegistry
from tests.hang import fail_if_blocked

runner = CliRunner()
TAGS = "GET /v2/library/python/tags/list"
HEAD_LATEST = "HEAD /v2/library/python/manifests/latest"
GET_LATEST = "GET /v2/library/python/manifests/latest"
PAGE = json.dumps({"name": "library/python", "tags": ["3.12", "3.13"]}).encode()
WHAT = "image 'docker.io/library/python'"


@pytest.fixture
def no_hang() -> Iterator[None]:
    """Fail a run that blocks instead of hanging the suite."""
    with fail_if_blocked(60):
        yield


def _run(registry: FakeRegistry, tmp_path: Path, ref: str, *more: str) -> dict[str, Any]:
    registry.oci.add("library/python", dict.fromkeys(("3.12", "3.13", "latest")))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "Dockerfile").write_text(f"FROM {ref}\n")
    args = ["run", str(repo), "--format", "json", "--no-cache"]
    args += ["--registry", f"docker={registry.url('oci')}"]
    args += ["--registry", f"docker-hub={registry.url('docker-hub')}", *more]
    result = runner.invoke(app, args, catch_exceptions=False)
    [row] = json.loads(result.stdout)["repositories"][0]["dependencies"]
    row["exit"] = result.exit_code
    return dict(row)


Setup = Callable[[FakeRegistry], None]


def _huge(announce: bool) -> Setup:  # noqa: FBT001 - a parametrize helper
    return lambda r: r.host("oci").huge_next(1, 50 * 1024 * 1024, announce=announce, route=TAGS)


def _fail(route: str, status: int, headers: dict[str, str], body: bytes = b"") -> Setup:
    return lambda r: r.host("oci").fail_next(300, status, headers, body, route=route)


def _million(registry: FakeRegistry) -> None:
    tags = [f"1.{n}" for n in range(1_000_000)]
    body = json.dumps({"name": "library/python", "tags": tags}).encode()
    registry.host("oci").fail_next(1, 200, {}, body, route=TAGS)


def _silent_token(registry: FakeRegistry) -> None:
    registry.host("oci").silent_next(1, route="GET /token")


SELF_LINK = '</v2/library/python/tags/list?n=1000>; rel="next"'
NEXT_LINK = '</v2/library/python/tags/list?n=1000&last=3.13>; rel="next"'
FILE_REALM = 'Bearer realm="file:///etc/passwd",service="x",scope="repository:library/python:pull"'


@pytest.mark.parametrize(
    ("setup", "more", "reason"),
    [
        pytest.param(
            _huge(announce=True),
            (),
            f"{WHAT}: unusable tag list page (Invalid JSON",
            id="50MB-tag-page",
        ),
        pytest.param(
            _huge(announce=True),
            ("--max-body-bytes", "1MiB"),
            "sent a response Content-Length 52428800 over the 1 MiB limit; not retried",
            id="50MB-tag-page-over-the-body-bound",
        ),
        pytest.param(
            _huge(announce=False),
            ("--max-body-bytes", "1MiB"),
            "sent a response body on the wire over the 1 MiB limit; not retried",
            id="50MB-unannounced-tag-page-over-the-body-bound",
        ),
        pytest.param(
            _fail(TAGS, 200, {"Link": SELF_LINK}, PAGE),
            (),
            f"{WHAT}: the tag list's next-page links loop (http://",
            id="link-to-itself",
        ),
        pytest.param(
            _fail(TAGS, 200, {"Link": NEXT_LINK}, PAGE),
            (),
            f"{WHAT}: the tag list's next-page links loop (http://",
            id="link-loop-over-two-pages",
        ),
        pytest.param(
            _silent_token,
            ("--request-deadline", "0.5"),
            "within 0.5 s (deadline)",
            id="token-service-hangs",
        ),
        pytest.param(
            _fail(TAGS, 401, {"WWW-Authenticate": FILE_REALM}),
            (),
            "its Bearer challenge names no http(s) token realm (a file: URL); no token was asked",
            id="file-realm",
        ),
        pytest.param(
            _million,
            (),
            f"{WHAT}: the tag list is too long (more than 100000 tags); not read",
            id="a-million-tags",
        ),
    ],
)
def test_a_hostile_tag_list_is_an_error_row(
    fake_registry: FakeRegistry,
    tmp_path: Path,
    no_hang: None,
    setup: Setup,
    more: tuple[str, ...],
    reason: str,
) -> None:
    """Each ends as an ``error`` row whose reason says what was wrong; the run completes."""
    setup(fake_registry)
    row = _run(fake_registry, tmp_path, "python:3.12", *more)
    assert (row["exit"], row["status"], row["current"]) == (3, "error", "3.12")
    assert reason in row["reason"]
    assert "/etc/passwd" not in row["reason"]


@pytest.mark.parametrize(
    "header",
    [
        "sha256:not-hex",
        "sha256:" + "A" * 64,  # upper-case hex
        "sha256:" + "a" * 63,
        "x" * 4000,
        f"sha256:{'a' * 64}, sha256:{'b' * 64}",
    ],
)
def test_a_malformed_digest_header_is_never_taken(
    fake_registry: FakeRegistry, tmp_path: Path, no_hang: None, header: str
) -> None:
    """A HEAD with a malformed ``Docker-Content-Digest``: the digest comes from the GET."""
    fake_registry.host("oci").fail_next(
        1, 200, {"Docker-Content-Digest": header}, route=HEAD_LATEST
    )
    row = _run(fake_registry, tmp_path, "python")
    digest = row["currentDigest"]
    assert (row["exit"], row["status"]) == (0, "up-to-date")
    assert docker.valid_digest(digest) == digest
    assert digest.startswith("sha256:")
    assert row["reason"] == f"tracks the mutable tag latest (now {digest})"
    assert fake_registry.host("oci").requests_by_route[GET_LATEST] >= 1


def test_malformed_digest_headers_without_a_body_leave_the_digest_unknown(
    fake_registry: FakeRegistry, tmp_path: Path, no_hang: None
) -> None:
    """HEAD and GET both malformed, no body to hash: ``unknown``, never "unchanged"."""
    bad = {"Docker-Content-Digest": "sha256:zz"}
    fake_registry.host("oci").fail_next(1, 200, bad, route=HEAD_LATEST)
    fake_registry.host("oci").fail_next(1, 200, bad, route=GET_LATEST)
    row = _run(fake_registry, tmp_path, "python")
    assert (row["status"], row["currentDigest"]) == ("unknown", None)
    assert row["reason"] == "the digest of tag latest could not be read: the registry gave none"


def test_a_page_of_too_many_tags_is_refused_before_it_is_encoded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``derive_tags`` counts the page's tags first: a page over ``MAX_TAGS`` is never encoded."""
    monkeypatch.setattr(docker, "MAX_TAGS", 3)
    page = json.dumps({"name": "a/b", "tags": ["1", "2", "3", "4"]}).encode()
    with pytest.raises(RegistryError, match=r"^image 'x/a/b': the tag list is too long \(more"):
        docker.derive_tags(page, repository="a/b", what="image 'x/a/b'")
    three = json.dumps({"name": "a/b", "tags": ["1", "2", "3"]}).encode()
    assert docker.derive_tags(three, repository="a/b") == b"0 1\n0 2\n0 3"
