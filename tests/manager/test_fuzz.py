"""Fuzzing every manager: hostile text never raises out of ``extract``; problems name the file.

A seeded generator (no dependency, the same cases on every run): for each manager in
``MANAGERS`` (so a new manager is covered as soon as it is registered) its real fixtures are
truncated, mangled (BOM, CRLF, NUL, lone surrogates, 5,000-digit numbers), replaced by random
bytes decoded the way the scan's reader decodes them, and by nesting 100,000 levels deep.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from patchula.cli import app
from patchula.errors import ManifestError
from patchula.manager import MANAGERS
from patchula.models import ExtractResult
from patchula.scan import _checked, _Reader
from tests.fake_registry import FakeRegistry
from tests.hang import fail_if_blocked

FIXTURES = Path(__file__).parents[1] / "fixtures" / "manifests"
SEED = 20261201
CUTS_PER_FIXTURE = 6
RANDOM_CASES = 12
HUGE = "9" * 5000
DEEP = 100_000


@pytest.fixture(autouse=True)
def _no_hang() -> Iterator[None]:
    """Fail a test that blocks (a FIFO opened by a regression) instead of hanging the suite."""
    with fail_if_blocked(30):
        yield


def _fixtures(manager_id: str) -> list[tuple[str, str]]:
    """``(repository-relative path, text)`` of every fixture file ``manager_id`` reads."""
    out = []
    for path in sorted((FIXTURES / manager_id).rglob("*")):
        rel = path.relative_to(FIXTURES / manager_id).as_posix().split("/", 1)[-1]
        if path.is_file() and MANAGERS[manager_id].matches(rel):
            out.append((rel, path.read_bytes().decode("utf-8", errors="replace")))
    return out


def _mangled(text: str, rng: random.Random) -> Iterator[str]:
    """Hostile variants of one real manifest text."""
    for _ in range(CUTS_PER_FIXTURE):
        yield text[: rng.randrange(len(text) + 1)]
    yield "\ufeff" + text
    yield text.replace("\n", "\r\n")
    yield text.replace("\n", "\r")
    middle = len(text) // 2
    yield text[:middle] + "\x00" + text[middle:]
    yield text.replace('"', '"\ud800', 3)
    yield text.replace("=", "=\udc00", 3)
    yield "".join(HUGE if char.isdigit() and rng.random() < 0.3 else char for char in text[:4000])
    yield text.replace("1", HUGE, 2)


def _nested() -> Iterator[str]:
    yield "[" * DEEP
    yield '{"a":' * DEEP
    yield "a = " + "[" * DEEP
    yield "[" + "a." * (DEEP // 10) + "b]\n"
    yield "x = {" * DEEP
    yield "require (\n" * (DEEP // 10)
    yield "-r " + "a" * DEEP + "\n"


def _random_texts(rng: random.Random, tmp_path: Path, rel: str) -> Iterator[str]:
    """Random bytes, through the scan's reader (invalid UTF-8 and NULs refused as it does)."""
    reader = _Reader(tmp_path.resolve(), 1 << 20)
    target = tmp_path / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    for index in range(RANDOM_CASES):
        size = rng.choice([1, 7, 64, 512, 4096])
        alphabet = b"{}[]\":,=.<>^~*@/ \n\t\r#-_0123456789abcvx'\\" if index % 2 else None
        data = (
            bytes(rng.choice(alphabet) for _ in range(size))
            if alphabet is not None
            else rng.randbytes(size)
        )
        target.write_bytes(data)
        refused: ManifestError | None = None
        try:
            text = reader(rel)
        except ManifestError as exc:
            refused = exc
        if refused is None:
            yield text
        else:  # refused as a problem naming the file (and a line within it)
            assert refused.file == rel
            assert refused.line is None or 1 <= refused.line <= data.count(b"\n") + 1
        yield data.decode("utf-8", errors="surrogateescape")  # what a lenient reader would give


def _check(manager_id: str, rel: str, text: str, includes: dict[str, str]) -> None:
    def read(path: str) -> str:
        if path in includes:
            return includes[path]
        raise ManifestError("file not found", file=path)

    result = MANAGERS[manager_id].extract(rel, text, read)
    assert isinstance(result, ExtractResult)
    texts = {rel: text, **includes}
    # Counted once per file: a line-per-row manager (.tool-versions) gives 10,000 rows here.
    # A line count as Python sees it: \r, \r\n and \n all end lines in some parser.
    counts = {name: len(body.splitlines()) for name, body in texts.items()}
    checked = _checked(result)
    for problem in checked.problems:
        assert problem.file in texts or problem.file == rel, problem
        assert problem.message
        if problem.line is not None:
            assert 1 <= problem.line <= counts.get(problem.file, counts[rel]) + 1, problem
    for dep in checked.dependencies:
        assert dep.file in texts
        assert dep.line is None or 1 <= dep.line <= counts[dep.file] + 1


@pytest.mark.parametrize("manager_id", sorted(MANAGERS))
def test_extract_never_raises_on_hostile_text(manager_id: str, tmp_path: Path) -> None:
    """Truncations, BOM, CRLF, NUL, surrogates, huge numbers, random bytes, deep nesting."""
    rng = random.Random(f"{SEED}-{manager_id}")  # noqa: S311 - reproducible cases, not secrets
    fixtures = _fixtures(manager_id)
    assert fixtures, f"no fixture files for {manager_id} in {FIXTURES / manager_id}"
    rel = fixtures[0][0]
    cases = 0
    for fixture_rel, text in fixtures:
        for variant in _mangled(text, rng):
            _check(manager_id, fixture_rel, variant, {"requirements/base.txt": variant})
            cases += 1
    for variant in _nested():
        _check(manager_id, rel, variant, {})
        cases += 1
    for variant in _random_texts(rng, tmp_path, rel):
        _check(manager_id, rel, variant, {})
        cases += 1
    assert cases > 40


def test_cli_completes_on_a_directory_of_hostile_manifests(
    tmp_path: Path, fake_registry: FakeRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``patchula run`` over one mangled copy of every fixture exits 3 with a complete report.

    Image references name their own registry hosts (ghcr.io, quay.io …), which no
    ``--registry`` redirects: every request off the loopback goes to a proxy that refuses the
    connection, so the test never reaches the network and those rows fail at once.
    """
    for variable in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"):
        monkeypatch.setenv(variable, "http://127.0.0.1:9")  # discard port: connection refused
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.delenv("no_proxy", raising=False)
    rng = random.Random(SEED)  # noqa: S311 - reproducible cases, not secrets
    root = tmp_path / "hostile"
    written = 0
    for manager_id in sorted(MANAGERS):
        for index, (rel, text) in enumerate(_fixtures(manager_id)):
            variants = list(_mangled(text, rng))
            path = root / manager_id / str(index) / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(rng.choice(variants), encoding="utf-8", errors="surrogatepass")
            written += 1
    (root / "deep").mkdir()
    (root / "deep" / "package.json").write_text('{"a":' * DEEP)
    (root / "deep" / "Cargo.toml").write_text("a = " + "[" * DEEP)
    args = ["run", str(root), "--format", "json", "--no-cache"]
    for name in ("npm", "pypi", "goproxy", "crates-api", "docker-hub"):
        args += ["--registry", f"{name}={fake_registry.url(name)}"]
    args += ["--registry", f"crates={fake_registry.url('crates-index')}"]
    args += ["--registry", f"docker={fake_registry.url('oci')}"]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 3, result.stderr
    report = json.loads(result.stdout)
    [repo] = report["repositories"]
    files = {p["file"] for p in repo["problems"]}
    assert "deep/package.json" in files
    assert "deep/Cargo.toml" in files
    assert written > 50
    assert report["summary"]["dependencies"] == len(repo["dependencies"])
