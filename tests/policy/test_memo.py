"""Evaluating many rows of one catalog: versions parsed once, each distinct verdict given once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import zstandard
from msgspec.structs import replace

from patchula.datasource import npm as npm_datasource
from patchula.models import Catalog, Dependency, Release
from patchula.policy import ReleaseAgePolicy, evaluate
from patchula.policy.evaluate import MEMO
from patchula.policy.memo import DEFAULT_MAX_CATALOGS, DEFAULT_MAX_RELEASES, EvaluationMemo
from patchula.versioning import cargo, npm

NOW = datetime(2026, 12, 1, tzinfo=UTC)
POLICY = ReleaseAgePolicy(major=timedelta(days=30), minor=timedelta(days=7))
DATA = Path(__file__).parent.parent.parent / "benchmarks" / "data"


class Counting:
    """A versioning that counts calls into the one it wraps (a distinct object per test)."""

    def __init__(self, scheme: ModuleType) -> None:
        self._scheme = scheme
        self.ID: str = scheme.ID
        self.calls: dict[str, int] = {}

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._scheme, name)

        def counted(*args: Any) -> Any:
            self.calls[name] = self.calls.get(name, 0) + 1
            return target(*args)

        return counted


def _dep(constraint: str | None, file: str = "package.json", versioning: str = "npm") -> Dependency:
    return Dependency(
        manager="package_json",
        file=file,
        line=3,
        name="pkg",
        package_name="pkg",
        datasource="npm" if versioning == "npm" else "crates",
        versioning=versioning,
        dep_type="dependencies",
        declared=constraint,
        constraint=constraint,
    )


@pytest.fixture(scope="module")
def typescript() -> Catalog:
    """The real typescript catalog (3,478 versions) from the benchmark data."""
    raw = zstandard.ZstdDecompressor().decompress(
        (DATA / "npm-typescript.json.zst").read_bytes(), max_output_size=64 << 20
    )
    return npm_datasource.parse(raw, package_name="typescript", fetched_at=NOW)


def test_300_rows_of_typescript_parse_its_versions_once_and_each_range_once(
    typescript: Catalog,
) -> None:
    """100 repositories by 3 ranges: one view of 3,478 versions, one pick per distinct range."""
    scheme = Counting(npm)
    memo = EvaluationMemo()
    ranges = ["^4.1.0", "~3.8.0", ">=2.0.0 <3"]
    rows = [_dep(r, f"repo{i}/package.json") for i in range(100) for r in ranges]
    findings = [evaluate(d, typescript, scheme, POLICY, NOW, memo=memo) for d in rows]
    assert len(typescript.releases) == 3478
    assert memo.views_built == 1
    assert scheme.calls["max_satisfying"] == 3
    # Every version is validated once for the view, not once per row (300 x 3,478 before).
    assert scheme.calls["is_valid"] < 2 * len(typescript.releases)
    assert [(f.current, f.eligible, f.versions_behind) for f in findings[:3]] == [
        ("4.9.5", "7.0.2", 27),
        ("3.8.3", "7.0.2", 73),
        ("2.9.2", "7.0.2", 110),
    ]
    assert all(f is findings[i % 3] for i, f in enumerate(findings))


def test_memoised_verdicts_equal_fresh_ones(typescript: Catalog) -> None:
    """A verdict from the memo equals the one a fresh memo gives, for ranges, pins and locks."""
    memo = EvaluationMemo()
    cases: list[tuple[str | None, str | None]] = [
        ("^4.1.0", None),
        ("^4.1.0", "4.2.3"),
        ("~5.0.0", None),
        ("5.3.2", None),
        (None, None),
        ("next", None),
        ("^9.0.0", None),
        (">=5.0.0-beta <5.0.0", None),
        ("*", "3.9.10"),
    ]
    for constraint, locked in cases * 2:
        ours = evaluate(_dep(constraint), typescript, npm, POLICY, NOW, locked, memo=memo)
        fresh = evaluate(_dep(constraint), typescript, npm, POLICY, NOW, locked, EvaluationMemo())
        assert ours == fresh, (constraint, locked)


def test_verdicts_are_keyed_by_lock_policy_and_now() -> None:
    """Another lock, policy or instant is another verdict; the same one is the same object."""
    cat = Catalog(
        datasource="npm",
        package_name="pkg",
        releases=(
            Release("1.0.0", NOW - timedelta(days=100)),
            Release("1.1.0", NOW - timedelta(days=2)),
        ),
        latest="1.1.0",
        fetched_at=NOW,
    )
    memo = EvaluationMemo()
    dep = _dep("^1.0.0")
    wait = ReleaseAgePolicy(minor=timedelta(days=7))
    first = evaluate(dep, cat, npm, wait, NOW, "1.0.0", memo=memo)
    assert (
        evaluate(_dep("^1.0.0", "other/package.json"), cat, npm, wait, NOW, "1.0.0", memo=memo)
        is first
    )
    assert first.status == "held-back"
    assert evaluate(dep, cat, npm, wait, NOW, "1.1.0", memo=memo).status == "up-to-date"
    assert evaluate(dep, cat, npm, ReleaseAgePolicy(), NOW, "1.0.0", memo=memo).status == "outdated"
    later = NOW + timedelta(days=6)
    assert evaluate(dep, cat, npm, wait, later, "1.0.0", memo=memo).status == "outdated"


def test_copies_with_more_publish_times_share_one_view_and_report_their_own_dates() -> None:
    """Lazy-time datasources hand each row a dated copy: one view, each copy's own dates."""
    bare = Catalog(
        datasource="crates",
        package_name="pkg",
        releases=(Release("1.0.0", None), Release("1.2.0", None), Release("2.0.0", None)),
        latest="2.0.0",
        fetched_at=NOW,
    )
    dated = replace(
        bare,
        releases=tuple(
            r._replace(released_at=NOW - timedelta(days=10 * (i + 1)))
            for i, r in enumerate(bare.releases)
        ),
    )
    memo = EvaluationMemo()
    dep = _dep("^1.0.0", versioning="cargo")
    unknown = evaluate(dep, bare, cargo, POLICY, NOW, memo=memo)
    known = evaluate(dep, dated, cargo, POLICY, NOW, memo=memo)
    assert memo.views_built == 1
    assert unknown.current_released_at is None
    assert (known.current, known.current_released_at) == ("1.2.0", NOW - timedelta(days=20))
    assert known.latest_released_at == NOW - timedelta(days=30)


def test_a_release_turning_deprecated_is_another_view() -> None:
    """Same versions, other flags: the view is rebuilt and the verdict follows the new flags."""
    releases = (
        Release("1.0.0", NOW - timedelta(days=9)),
        Release("1.1.0", NOW - timedelta(days=8)),
    )
    cat = Catalog("npm", "pkg", releases, "1.0.0", NOW)
    deprecated = replace(cat, releases=(releases[0], releases[1]._replace(deprecated="broken")))
    memo = EvaluationMemo()
    assert evaluate(_dep("^1.0.0"), cat, npm, POLICY, NOW, "1.0.0", memo=memo).versions_behind == 0
    assert evaluate(_dep(">=1.0.1"), cat, npm, POLICY, NOW, memo=memo).current == "1.1.0"
    assert evaluate(_dep(">=1.0.1"), deprecated, npm, POLICY, NOW, memo=memo).current == "1.1.0"
    assert evaluate(_dep("^1.0.0"), deprecated, npm, POLICY, NOW, memo=memo).current == "1.0.0"
    assert memo.views_built == 2


def test_a_release_the_registry_flags_prerelease_is_another_view() -> None:
    """Same versions, one flagged a prerelease by the registry (GitHub): its own view, latest."""
    releases = (
        Release("1.0.0", NOW - timedelta(days=9)),
        Release("1.1.0", NOW - timedelta(days=8)),
    )
    cat = Catalog("github-releases", "o/r", releases, None, NOW)
    flagged = replace(cat, releases=(releases[0], releases[1]._replace(prerelease=True)))
    memo = EvaluationMemo()
    assert evaluate(_dep("1.0.0"), cat, npm, POLICY, NOW, memo=memo).latest == "1.1.0"
    assert evaluate(_dep("1.0.0"), flagged, npm, POLICY, NOW, memo=memo).latest == "1.0.0"
    assert memo.views_built == 2


def test_the_memo_is_bounded_in_catalogs_and_releases() -> None:
    """Old catalogs are forgotten first; a catalog above the release bound is never kept."""
    memo = EvaluationMemo(max_catalogs=2, max_releases=5)
    cats = [Catalog("npm", f"p{n}", (Release(f"1.0.{n}", NOW),), f"1.0.{n}", NOW) for n in range(3)]
    for cat in cats:
        evaluate(_dep("^1.0.0"), cat, npm, POLICY, NOW, memo=memo)
    assert len(memo._entries) == 2
    assert len(memo._views) == 2
    evaluate(_dep("^1.0.0"), cats[0], npm, POLICY, NOW, memo=memo)
    assert memo.views_built == 4  # cats[0] was forgotten and is parsed again
    big = Catalog("npm", "big", tuple(Release(f"2.0.{n}", NOW) for n in range(6)), "2.0.5", NOW)
    built = memo.views_built
    for _ in range(2):
        assert evaluate(_dep("^2.0.0"), big, npm, POLICY, NOW, memo=memo).current == "2.0.5"
    assert memo.views_built == built + 2  # too big to remember: parsed for each row
    assert memo._view_releases <= 5
    assert memo._entry_releases <= 5
    memo.clear()
    assert (len(memo._entries), len(memo._views), memo._entry_releases) == (0, 0, 0)


def test_the_default_memo_has_the_documented_bounds() -> None:
    """The process-wide memo keeps at most 512 catalogs and 400,000 releases in views."""
    assert (MEMO.max_catalogs, MEMO.max_releases) == (DEFAULT_MAX_CATALOGS, DEFAULT_MAX_RELEASES)
    assert (DEFAULT_MAX_CATALOGS, DEFAULT_MAX_RELEASES) == (512, 400_000)
