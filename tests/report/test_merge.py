"""``report.merge``: shard reports into one report of the same schema."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from patchula.cli.exit_codes import exit_code
from patchula.errors import ConfigError
from patchula.http.fetcher import HostStats, RateBudget
from patchula.models import Dependency, Finding, ManifestProblem
from patchula.report.dashboard import render_markdown
from patchula.report.merge import merge, merge_caches, merge_hosts, parse_report
from patchula.report.model import CacheReport, ScanReport, build_report
from patchula.report.render import render_json, summary_line
from patchula.scan import RepoResult, Row, ScanResult, TargetList
from patchula.settings import Settings
from patchula.targets import list_digest, select_shard

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _dep(file: str, line: int, name: str, datasource: str = "pypi") -> Dependency:
    return Dependency(
        manager="requirements_txt" if datasource == "pypi" else "package_json",
        file=file,
        line=line,
        name=name,
        package_name=name,
        datasource=datasource,
        versioning="pep440" if datasource == "pypi" else "npm",
        dep_type="requirements" if datasource == "pypi" else "dependencies",
        declared="==1.0",
        constraint="==1.0",
    )


def _repo(target: str, *, commit: str | None = None) -> RepoResult:
    """A repository with an outdated pin (twice: libyears once), an error row and a problem."""
    repo = RepoResult(target=target, root=f"/src/{target}", commit=commit)
    outdated = Finding(
        status="outdated", current="1.0", latest="2.0", eligible="2.0", libyears=1.25
    )
    repo.rows = [
        Row(_dep("requirements.txt", 1, "django"), outdated),
        Row(_dep("requirements/dev.txt", 1, "django"), outdated),
        Row(_dep("package.json", 3, "left-pad", "npm"), Finding(status="up-to-date", current="1")),
        Row(_dep("package.json", 4, "nope", "npm"), Finding(status="error", reason="HTTP 404")),
    ]
    repo.problems = [ManifestProblem("pyproject.toml", 2, "invalid TOML")]
    return repo


def _report(
    repos: list[RepoResult],
    *,
    at: datetime = NOW,
    hosts: dict[str, HostStats] | None = None,
    cache: CacheReport | None = None,
    targets: TargetList | None = None,
    **settings: object,
) -> ScanReport:
    return build_report(
        ScanResult(evaluated_at=at, repos=repos, host_stats={}, targets=targets),
        Settings.model_validate(settings),
        hosts or {},
        cache,
    )


def _json(report: ScanReport) -> object:
    return json.loads(render_json(report))


def test_merged_shards_equal_the_report_of_one_run_over_every_target() -> None:
    """Rows, repositories and totals of merged shards are those of the unsharded report."""
    names = ["api", "web", "docs", "cli", "infra"]
    whole = _report([_repo(n) for n in names])
    shards = [
        ("s1.json", _report([_repo(n) for n in names[:2]], shard="1/3")),
        ("s2.json", _report([_repo(n) for n in names[2:3]], shard="2/3")),
        ("s3.json", _report([_repo(n) for n in names[3:]], shard="3/3")),
    ]
    merged = merge(shards)
    assert merged.warnings == []
    got, want = _json(merged.report), _json(whole)
    assert isinstance(got, dict)
    assert isinstance(want, dict)
    assert got["summary"] == want["summary"]
    assert got["summary"]["libyears"] == 6.25  # 1.25 per repository, the repeated pin once
    assert got["summary"]["failedLookups"] == 5
    assert got["repositories"] == want["repositories"]
    assert got["options"] == want["options"]
    assert got["options"]["shard"] is None


def test_offline_rows_not_in_the_cache_are_counted_as_a_run_counts_them() -> None:
    """An --offline shard's 'not in cache (offline)' rows stay summary.notCached when merged."""
    repo = RepoResult(target="off", root="/src/off", commit=None)
    missing = Finding(status="unknown", reason="not in cache (offline)")
    repo.rows = [Row(_dep("requirements.txt", 1, "django"), missing)]
    offline = _report([repo], offline=True, shard="1/2")
    assert offline.summary.not_cached == 1
    merged = merge([("on.json", _report([_repo("on")], shard="2/2")), ("off.json", offline)])
    assert merged.report.summary.not_cached == 1
    assert merged.report.summary.by_status.unknown == 1


def test_unreadable_repositories_of_the_shards_add_up() -> None:
    """``summary.unreadable`` of merged shards, read back from their JSON, is the sum."""
    gone = RepoResult(target="github:acme/gone", root="github:acme/gone", commit=None)
    gone.unread("repository not found, or not visible without a token (HTTP 404)")
    shards = [("a.json", _report([_repo("on"), gone], shard="1/2")), ("b.json", _report([]))]
    parsed = [(name, parse_report(render_json(r).encode(), name)) for name, r in shards]
    merged = merge(parsed).report
    assert merged.summary.unreadable == 1
    assert merged.repositories[1].extraction.source == "none"


def test_repositories_keep_the_order_of_the_files() -> None:
    """The merged list is the first file's repositories, then the second's, as given."""
    merged = merge(
        [("b.json", _report([_repo("zeta"), _repo("alpha")])), ("a.json", _report([_repo("mu")]))]
    )
    assert [r.target for r in merged.report.repositories] == ["zeta", "alpha", "mu"]


def test_a_repository_in_two_reports_is_kept_from_the_later_evaluated_with_a_warning() -> None:
    """The later-evaluated copy wins, in the place the target first appeared; one warning."""
    old = _report([_repo("api", commit="aaa"), _repo("web")], at=NOW + timedelta(hours=1))
    new = _report([_repo("api", commit="bbb")], at=NOW + timedelta(hours=2))
    merged = merge([("old.json", old), ("new.json", new)])
    assert [(r.target, r.commit) for r in merged.report.repositories] == [
        ("api", "bbb"),
        ("web", None),
    ]
    assert merged.report.summary.repositories == 2
    assert merged.warnings == [
        "repository api is in old.json and new.json: kept from new.json (evaluated later)"
    ]
    # The other way round, the first file's copy is the later one and stays.
    merged = merge([("new.json", new), ("old.json", old)])
    assert [(r.target, r.commit) for r in merged.report.repositories] == [
        ("api", "bbb"),
        ("web", None),
    ]
    assert merged.warnings == [
        "repository api is in new.json and old.json: kept from new.json (evaluated later)"
    ]


def test_on_a_tie_the_later_file_wins() -> None:
    """Both evaluated at the same instant (--now): the copy of the later file is kept."""
    first = _report([_repo("api", commit="aaa")])
    second = _report([_repo("api", commit="bbb")])
    merged = merge([("1.json", first), ("2.json", second)])
    assert [r.commit for r in merged.report.repositories] == ["bbb"]
    assert merged.warnings == [
        (
            "repository api is in 1.json and 2.json: kept from 2.json (the later file, same "
            "evaluatedAt)"
        )
    ]


def test_a_report_given_twice_warns_once_for_all_its_repositories() -> None:
    """The same file twice: one warning counting the repeated repositories, counted once."""
    report = _report([_repo(n) for n in ("a", "b", "c", "d", "e", "f", "g")])
    merged = merge([("x.json", report), ("x.json", report)])
    assert merged.report.summary.repositories == 7
    assert merged.report.summary.dependencies == 28
    assert merged.warnings == [
        (
            "7 repositories a, b, c, d, e and 2 more are in x.json, given twice: kept from x.json "
            "(the later file, same evaluatedAt)"
        )
    ]


def test_evaluated_at_is_the_earliest_and_options_come_from_the_first() -> None:
    """The merged evaluatedAt is the earliest shard's; options the first's, with the shard null."""
    early = _report([_repo("a")], at=NOW, shard="2/2", min_release_age="3d")
    late = _report([_repo("b")], at=NOW + timedelta(minutes=5), shard="1/2", min_release_age="3d")
    merged = merge([("late.json", late), ("early.json", early)])
    assert merged.report.evaluated_at == NOW
    assert merged.report.options["shard"] is None
    assert merged.report.options["min-release-age"] == "P3D"
    assert merged.warnings == []


def test_missing_shards_and_mixed_splits_are_said() -> None:
    """Shares 1/4 and 3/4 alone: 2/4 and 4/4 are named missing; 1/2 with 2/3 are two splits."""
    one, three = _report([_repo("a")], shard="1/4"), _report([_repo("b")], shard="3/4")
    assert merge([("1.json", one), ("3.json", three)]).warnings == [
        "shards 2/4 and 4/4 not given: their targets are not in the report"
    ]
    two = _report([_repo("c")], shard="2/4")
    assert merge([("1.json", one), ("2.json", two), ("3.json", three)]).warnings == [
        "shard 4/4 not given: its targets are not in the report"
    ]
    mixed = merge(
        [("a.json", _report([], shard="1/2")), ("b.json", _report([], shard="2/3"))]
    ).warnings
    assert mixed == ["the reports are shares of different splits: 1/2, 2/3"]


def test_shards_run_with_other_options_are_said() -> None:
    """A shard with another --min-release-age is named; per-shard options are not."""
    first = _report([], shard="1/2", min_release_age="3d", report="s1.json")
    second = _report([], shard="2/2", min_release_age="1d", report="s2.json")
    assert merge([("s1.json", first), ("s2.json", second)]).warnings == [
        (
            "s2.json was run with other options than s1.json (min-release-age): the merged "
            "report shows s1.json's"
        )
    ]


def test_a_split_larger_than_any_run_makes_is_not_listed() -> None:
    """A hand-edited shard 1/10**12 is not expanded into a list of missing shares."""
    report = _report([_repo("a")])
    edited = report.model_copy(update={"options": {**report.options, "shard": [1, 10**12]}})
    assert merge([("a.json", edited)]).warnings == []


def test_reports_of_other_patchula_versions_are_said() -> None:
    """Shards written by two patchula versions: a warning names both."""
    report = _report([_repo("a")])
    tool = report.tool.model_copy(update={"version": "9.9.9"})
    other = report.model_copy(update={"tool": tool, "repositories": []})
    assert merge([("a.json", report), ("b.json", other)]).warnings == [
        f"b.json was written by patchula 9.9.9, a.json by {report.tool.version}"
    ]


def _stats(**values: object) -> HostStats:
    stats = HostStats()
    for name, value in values.items():
        setattr(stats, name, value)
    return stats


def test_host_statistics_add_up_and_peaks_take_the_highest() -> None:
    """Counts add, the peak is the highest shard's, protocols of both make 'mixed'."""
    reset = NOW.timestamp() + 3600
    first = _stats(
        requests=10,
        responses={"200": 8, "304": 2},
        not_modified=2,
        rate_limited=1,
        retries=1,
        cooldown_seconds=1.5,
        cooldown_refused_seconds=120.0,
        errors=0,
        max_concurrency=7,
        unvalidated=1,
        connections=2,
        tls_handshakes=2,
        protocols={"h2": 2},
        rate_limits={"core": RateBudget(5000, 4000, reset)},
    )
    second = _stats(
        requests=5,
        responses={"200": 4, "404": 1},
        errors=1,
        max_concurrency=12,
        cooldown_refused_seconds=3600.0,
        connections=1,
        tls_handshakes=1,
        protocols={"http/1.1": 1},
        rate_limits={"core": RateBudget(5000, 3500, reset), "graphql": RateBudget(None, 10, None)},
    )
    merged = merge_hosts(
        [
            _report([], hosts={"api.github.com": first, "npm.test": _stats(requests=1)}).hosts,
            _report([], hosts={"api.github.com": second}).hosts,
        ]
    )
    assert list(merged) == ["api.github.com", "npm.test"]
    host = merged["api.github.com"].model_dump(by_alias=True, mode="json")
    assert host == {
        "requests": 15,
        "responses": {"200": 12, "304": 2, "404": 1},
        "notModified": 2,
        "rateLimited": 1,
        "retries": 1,
        "cooldownSeconds": 1.5,
        "cooldownRefusedSeconds": 3600.0,  # the longest one asked for, not a sum
        "errors": 1,
        "maxConcurrency": 12,
        "unvalidated": 1,
        "unreachable": None,
        "connections": 3,
        "tlsHandshakes": 3,
        "protocol": "mixed",
        "connectionsByProtocol": {"h2": 2, "http/1.1": 1},
        "rateLimits": {
            # The same window read later: fewer left.
            "core": {"limit": 5000, "remaining": 3500, "resetAt": "2026-11-30T13:00:00Z"},
            "graphql": {"limit": None, "remaining": 10, "resetAt": None},
        },
    }
    assert merged["npm.test"].requests == 1


def test_a_later_rate_limit_window_replaces_an_earlier_one() -> None:
    """A budget of a later window wins even with more requests left."""
    now = NOW.timestamp()
    hosts = [
        _report([], hosts={"h": _stats(rate_limits={"": RateBudget(60, 59, now + 7200)})}).hosts,
        _report([], hosts={"h": _stats(rate_limits={"": RateBudget(60, 2, now + 60)})}).hosts,
    ]
    assert merge_hosts(hosts)["h"].rate_limits[""].remaining == 59


def test_an_unreachable_host_keeps_the_reason_and_one_protocol_stays_itself() -> None:
    """The first shard's 'unreachable' reason is kept; h2 everywhere stays 'h2'."""
    down = build_report(
        ScanResult(evaluated_at=NOW, repos=[], host_stats={}),
        Settings(),
        {"h": _stats(errors=3, protocols={"h2": 1}, connections=1)},
        unreachable={"h": "ConnectError"},
    )
    up = _report([], hosts={"h": _stats(requests=2, protocols={"h2": 2}, connections=2)})
    host = merge_hosts([up.hosts, down.hosts])["h"]
    assert (host.unreachable, host.protocol, host.connections) == ("ConnectError", "h2", 3)


def _cache(path: str | None, **values: object) -> CacheReport:
    fields: dict[str, object] = {
        "path": path,
        "hits": 1,
        "revalidated": 2,
        "misses": 3,
        "view_hits": 4,
        "bytes_stored": 1000,
        "corrupt_bodies": 0,
        "write_failures": 0,
        "fallback": None,
        "warnings": [],
    }
    return CacheReport.model_validate(fields | values)


def test_cache_statistics_add_up() -> None:
    """Hits, revalidations, misses, views and bytes add; one file is kept, two make null."""
    same = merge_caches([_cache("/c.db"), _cache("/c.db", warnings=["w1"], corrupt_bodies=1)])
    assert same is not None
    assert same.model_dump(by_alias=True) == {
        "path": "/c.db",
        "hits": 2,
        "revalidated": 4,
        "misses": 6,
        "viewHits": 8,
        "bytesStored": 2000,
        "corruptBodies": 1,
        "writeFailures": 0,
        "fallback": None,
        "warnings": ["w1"],
    }
    apart = merge_caches(
        [
            _cache("/a.db", warnings=["busy"]),
            None,
            _cache(None, fallback="locked", warnings=["busy"]),
        ]
    )
    assert apart is not None
    assert (apart.path, apart.hits, apart.fallback, apart.warnings) == (None, 2, "locked", ["busy"])
    assert merge_caches([None, None]) is None


def test_the_merged_report_is_valid_against_the_schema_and_round_trips() -> None:
    """The merged JSON parses back into the report model, as a run's does."""
    merged = merge(
        [
            ("a.json", _report([_repo("a")], cache=_cache("/a.db"))),
            ("b.json", _report([_repo("b")], cache=_cache("/b.db"))),
        ]
    ).report
    text = render_json(merged)
    again = parse_report(text.encode(), "merged.json")
    assert render_json(again) == text
    assert again.cache is not None
    assert again.cache.hits == 2


def test_a_run_report_round_trips_through_parse_report() -> None:
    """parse_report reads back exactly what render_json wrote."""
    report = _report([_repo("a", commit="abc")], hosts={"h": _stats(requests=3)}, shard="1/2")
    text = render_json(report)
    assert render_json(parse_report(text.encode(), "a.json")) == text


def test_a_report_of_this_version_is_validated_from_its_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No tree of Python objects is built first for a valid report (merge memory)."""
    report = _report([_repo("a", commit="abc")], hosts={"h": _stats(requests=3)}, shard="1/2")
    text = render_json(report)

    def no_tree(_: bytes) -> object:
        raise AssertionError("orjson.loads called for a valid report")

    monkeypatch.setattr("patchula.report.merge.orjson.loads", no_tree)
    assert render_json(parse_report(text.encode(), "a.json")) == text


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"{not json", "r.json: not JSON"),
        (b"[1, 2]", "r.json: not a patchula report (no schemaVersion)"),
        (b'{"summary": {}}', "r.json: not a patchula report (no schemaVersion)"),
        (
            b'{"schemaVersion": "2"}',
            "r.json: report schemaVersion '2', this patchula reads schemaVersion '1'",
        ),
        (b'{"schemaVersion": "1"}', "r.json: not a patchula report of schemaVersion 1: "),
        (
            b'{"schemaVersion": 1}',
            "r.json: report schemaVersion 1, this patchula reads schemaVersion '1'",
        ),
    ],
)
def test_what_is_not_a_report_of_this_schema_is_refused_naming_it(
    data: bytes, message: str
) -> None:
    """Not JSON, no schemaVersion, another version, missing fields: ConfigError naming the file."""
    with pytest.raises(ConfigError) as caught:
        parse_report(data, "r.json")
    assert str(caught.value).startswith(message)


def test_a_report_missing_a_field_names_where() -> None:
    """A report without its summary names 'summary' in the error."""
    document = _json(_report([_repo("a")]))
    assert isinstance(document, dict)
    del document["summary"]
    with pytest.raises(ConfigError, match="summary: Field required"):
        parse_report(json.dumps(document).encode(), "r.json")


def test_merging_nothing_is_a_value_error() -> None:
    """``merge([])`` raises: the CLI always gives at least one file."""
    with pytest.raises(ValueError, match="no report"):
        merge([])


# Five targets, as a run over ``NAMES`` (any order) lists them; and one owner not listed.
NAMES = ["api", "web", "docs", "cli", "infra"]
WHOLE = TargetList(5, list_digest(NAMES))
PARTIAL = TargetList(4, list_digest(["api", "web", "docs", "github:corp/*"]), ("github:corp/*",))


def _placed(*names: str) -> list[RepoResult]:
    """Repositories of ``names`` at their place in ``NAMES`` (``targetIndex``)."""
    repos = []
    for name in names:
        repo = _repo(name)
        repo.index = NAMES.index(name) if name in NAMES else 3
        repos.append(repo)
    return repos


def test_shards_of_one_list_merge_in_the_order_of_the_whole_list() -> None:
    """Shards whose lists agree: repositories by their place in the list, not by file."""
    merged = merge(
        [
            ("s2.json", _report(_placed("infra", "web"), targets=WHOLE, shard="2/2")),
            ("s1.json", _report(_placed("docs", "api", "cli"), targets=WHOLE, shard="1/2")),
        ]
    )
    assert merged.warnings == []
    assert [r.target for r in merged.report.repositories] == NAMES
    assert [r.target_index for r in merged.report.repositories] == [0, 1, 2, 3, 4]
    assert merged.report.targets is not None
    assert (merged.report.targets.count, merged.report.targets.digest) == (5, WHOLE.digest)
    assert (merged.report.targets.unlisted, merged.report.targets.mismatched) == ([], [])


def test_reports_without_a_target_list_keep_the_order_of_the_files() -> None:
    """Older reports (no ``targets``): file order, no check, no warning; mixed: a warning."""
    old = [("b.json", _report(_placed("web"))), ("a.json", _report(_placed("api")))]
    merged = merge(old)
    assert [r.target for r in merged.report.repositories] == ["web", "api"]
    assert (merged.warnings, merged.report.targets) == ([], None)
    mixed = merge([*old, ("c.json", _report(_placed("docs"), targets=WHOLE))])
    assert [r.target for r in mixed.report.repositories] == ["web", "api", "docs"]
    assert mixed.warnings == [
        (
            "b.json and a.json carry no target list (written by an older patchula): the merge "
            "cannot check that every shard cut its share from one list"
        )
    ]


def test_shards_that_cut_different_lists_are_said_with_the_count_that_may_be_missing() -> None:
    """A shard of another list (rows all fine): named, 'up to N' missing, file order kept."""
    other = TargetList(6, list_digest([*NAMES, "extra"]))
    merged = merge(
        [
            ("s1.json", _report(_placed("api", "web"), targets=WHOLE, shard="1/3")),
            ("s2.json", _report(_placed("docs"), targets=other, shard="2/3")),
            ("s3.json", _report(_placed("infra"), targets=WHOLE, shard="3/3")),
        ]
    )
    targets = merged.report.targets
    assert targets is not None
    assert (targets.count, targets.digest, targets.mismatched) == (
        5,
        WHOLE.digest,
        ["s2.json (2/3)"],
    )
    assert [r.target for r in merged.report.repositories] == ["api", "web", "docs", "infra"]
    [warning] = merged.warnings
    assert warning.startswith(
        "the merged report is incomplete: the shards did not cut one target list (s1.json (1/3) "
        f"and s3.json (3/3): 5 targets ({WHOLE.digest[:15]}…); s2.json (2/3): 6 targets"
    )
    # 'cli' is in no report: one of the five may be missing.
    assert warning.endswith(
        "so up to 1 of its 5 targets may be missing; re-run s2.json (2/3) (exit 3)"
    )


def test_an_owner_not_listed_in_one_shard_is_said_and_its_row_counts_no_target() -> None:
    """Shard 2 listed no ``corp``: its list differs, its owner row is not one of the targets."""
    owner = RepoResult(target="github:corp/*", root="github:corp/*", commit=None)
    owner.index = 3
    merged = merge(
        [
            ("s1.json", _report(_placed("api", "web", "cli"), targets=WHOLE, shard="1/2")),
            ("s2.json", _report([*_placed("docs"), owner], targets=PARTIAL, shard="2/2")),
        ]
    )
    targets = merged.report.targets
    assert targets is not None
    assert (targets.unlisted, targets.mismatched) == (["github:corp/*"], ["s2.json (2/2)"])
    first, second = merged.warnings
    assert "up to 1 of its 5 targets may be missing" in first  # infra
    assert second == (
        "the merged report is incomplete: the repositories of github:corp/* could not be listed "
        "in s2.json (2/2), whose share was cut from a list without them: they (and targets of "
        "that share) may be missing; re-run it once the owner can be listed (exit 3)"
    )


def test_an_owner_no_shard_could_list_is_one_row_without_a_repeat_warning() -> None:
    """Every shard kept the owner's row (same list): one row, at its place, one warning."""

    def owner() -> RepoResult:
        repo = RepoResult(target="github:corp/*", root="github:corp/*", commit=None)
        repo.index = 3
        return repo

    merged = merge(
        [
            ("s2.json", _report([*_placed("docs"), owner()], targets=PARTIAL, shard="2/2")),
            ("s1.json", _report([*_placed("api", "web"), owner()], targets=PARTIAL, shard="1/2")),
        ]
    )
    assert [r.target for r in merged.report.repositories] == ["api", "web", "docs", "github:corp/*"]
    [warning] = merged.warnings
    assert "could not be listed in s2.json (2/2) and s1.json (1/2)" in warning
    targets = merged.report.targets
    assert targets is not None
    assert (targets.unlisted, targets.mismatched) == (["github:corp/*"], [])


def _shards_of(split: int, *shares: int) -> list[tuple[str, ScanReport]]:
    """Reports of ``shares`` of ``NAMES`` cut ``split`` ways, as ``run --shard I/N`` cuts."""
    return [
        (
            f"s{i}.json",
            _report(_placed(*select_shard(NAMES, i, split)), targets=WHOLE, shard=f"{i}/{split}"),
        )
        for i in shares
    ]


def test_missing_shards_are_recorded_with_the_targets_they_hold() -> None:
    """Shares 1/4 and 3/4 alone: ``missingShards``, their targets, a loud warning, exit 3."""
    merged = merge(_shards_of(4, 1, 3))
    targets = merged.report.targets
    assert targets is not None
    held = len(select_shard(NAMES, 2, 4)) + len(select_shard(NAMES, 4, 4))
    assert held == 3  # 5 targets cut 4 ways: 1, 1, 1 and 2
    assert (targets.missing_shards, targets.missing_shard_targets) == (["2/4", "4/4"], 3)
    assert merged.report.summary.repositories == 2
    assert merged.warnings == [
        (
            "the merged report is incomplete: shards 2/4 and 4/4 not given: 3 of the 5 targets "
            "are not in the report; merge their reports too, or re-run them (exit 3)"
        )
    ]
    said = "shards 2/4 and 4/4 missing: 3 of 5 targets not in this report"
    assert f"; {said}" in summary_line(merged.report)
    assert f"in **2** repositories; **{said}**" in render_markdown(merged.report)
    document = _json(merged.report)
    assert isinstance(document, dict)
    assert document["targets"]["missingShards"] == ["2/4", "4/4"]
    assert document["targets"]["missingShardTargets"] == 3
    clean = merged.report.model_copy(update={"repositories": []})  # no failed lookup: only that
    assert exit_code(clean, "none") == 3
    one = merge(_shards_of(4, 1, 2, 3)).report
    assert one.targets is not None
    assert (one.targets.missing_shards, one.targets.missing_shard_targets) == (["4/4"], 2)
    assert "shard 4/4 missing: 2 of 5 targets not in this report" in summary_line(one)


def test_every_shard_given_records_none_missing() -> None:
    """All four shares: no ``missingShards``, no warning, no words; an unsharded report too."""
    for merged in (
        merge(_shards_of(4, 4, 2, 1, 3)),
        merge([("a.json", _report(_placed(*NAMES), targets=WHOLE))]),
    ):
        targets = merged.report.targets
        assert targets is not None
        assert (targets.missing_shards, targets.missing_shard_targets) == ([], 0)
        assert merged.warnings == []
        assert "missing" not in summary_line(merged.report)
        assert "missing" not in render_markdown(merged.report)
        clean = merged.report.model_copy(update={"repositories": []})
        assert exit_code(clean, "none") == 0


def test_a_merged_report_keeps_its_missing_shards_until_they_are_merged_in() -> None:
    """Merged again alone it still misses 2/4 and 4/4; with their reports it is whole."""
    partial = merge(_shards_of(4, 1, 3)).report
    again = parse_report(render_json(partial).encode(), "partial.json")
    alone = merge([("partial.json", again)])
    assert alone.report.targets is not None
    assert alone.report.targets.missing_shards == ["2/4", "4/4"]
    assert alone.report.targets.missing_shard_targets == 3
    assert alone.warnings == [
        (
            "the merged report is incomplete: shards 2/4 and 4/4 not given: 3 of the 5 targets "
            "are not in the report; merge their reports too, or re-run them (exit 3)"
        )
    ]
    two = merge([("partial.json", again), *_shards_of(4, 2)])
    assert two.report.targets is not None
    assert two.report.targets.missing_shards == ["4/4"]
    whole = merge([("partial.json", again), *_shards_of(4, 4, 2)])
    assert whole.warnings == []
    assert whole.report.targets is not None
    assert (whole.report.targets.missing_shards, whole.report.targets.missing_shard_targets) == (
        [],
        0,
    )
    assert [r.target for r in whole.report.repositories] == NAMES
    other = merge([("partial.json", again), *_shards_of(3, 2)])
    assert "the reports are shares of different splits: 1/4, 2/3, 3/4" in other.warnings


def test_unsharded_runs_of_different_lists_miss_nothing() -> None:
    """Two unsharded runs (one target each): no 'may be missing' warning, no exit 3.

    Each report holds its whole list, so no target can be missing: the merged list is the
    two together, two targets, and the exit code is the rows' verdict.
    """
    one = TargetList(1, list_digest(["api"]))
    two = TargetList(1, list_digest(["web"]))
    merged = merge(
        [
            ("m1.json", _report([_repo("api")], targets=one)),
            ("m2.json", _report([_repo("web")], targets=two)),
        ]
    )
    assert merged.warnings == []
    targets = merged.report.targets
    assert targets is not None
    assert (targets.count, targets.digest, targets.mismatched) == (
        2,
        list_digest(["api", "web"]),
        [],
    )
    assert [r.target for r in merged.report.repositories] == ["api", "web"]
    assert exit_code(merged.report, "none") == 3  # the rows' own error rows (HTTP 404)
    fine = [_repo("api"), _repo("web")]
    for repo in fine:
        repo.rows, repo.problems = repo.rows[:3], []  # no error row, no manifest error
    clean = merge(
        [
            ("m1.json", _report([fine[0]], targets=one)),
            ("m2.json", _report([fine[1]], targets=two)),
        ]
    )
    assert exit_code(clean.report, "none") == 0


def test_a_shard_among_unsharded_runs_of_another_list_is_still_said() -> None:
    """A shard whose list differs from a whole report's may miss targets: the warning stays."""
    other = TargetList(6, list_digest([*NAMES, "extra"]))
    merged = merge(
        [
            ("whole.json", _report(_placed(*NAMES), targets=WHOLE)),
            ("s2.json", _report(_placed("docs"), targets=other, shard="2/3")),
        ]
    )
    assert merged.report.targets is not None
    assert merged.report.targets.mismatched != []
    assert any("may be missing" in w for w in merged.warnings)
