"""Settings: flags over environment over config file over defaults, with clear errors."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from patchula.cli.run import bare_recheck
from patchula.errors import ConfigError
from patchula.manager import MANAGERS
from patchula.settings import Settings, WaitByType, load_settings, parse_duration, parse_recheck


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("72h", timedelta(hours=72)),
        ("3d", timedelta(days=3)),
        ("1w", timedelta(weeks=1)),
        ("30m", timedelta(minutes=30)),
        ("90s", timedelta(seconds=90)),
        ("3 days", timedelta(days=3)),
        ("1.5h", timedelta(minutes=90)),
        ("0", timedelta(0)),
    ],
)
def test_parse_duration(text: str, expected: timedelta) -> None:
    """Durations take a number and a unit (or plain zero)."""
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["3", "abc", "-1d", "3 fortnights", ""])
def test_parse_duration_rejects(text: str) -> None:
    """Unitless or unknown durations are refused with a usage message."""
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)


def test_defaults(tmp_path: Path) -> None:
    """With nothing given, the documented defaults apply."""
    s = load_settings({}, env={}, cwd=tmp_path)
    assert (s.concurrency, s.default_host_concurrency, s.format, s.fail_on) == (
        8,
        16,
        "table",
        "none",
    )
    assert s.min_release_age == timedelta(0)


def test_precedence_flag_env_config(tmp_path: Path) -> None:
    """A flag beats an environment variable, which beats patchula.toml."""
    (tmp_path / "patchula.toml").write_text(
        'concurrency = 2\nformat = "markdown"\nfail-on = "major"\n'
    )
    env = {"PATCHULA_CONCURRENCY": "3", "PATCHULA_FORMAT": "json"}
    s = load_settings({"concurrency": 4}, env=env, cwd=tmp_path)
    assert (s.concurrency, s.format, s.fail_on) == (4, "json", "major")


def test_pyproject_tool_table(tmp_path: Path) -> None:
    """``[tool.patchula]`` in pyproject.toml is read when there is no patchula.toml."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.patchula]\nmin-release-age = "3d"\n'
        '[tool.patchula.min-release-age-by-type]\nmajor = "14d"\n'
    )
    policy = load_settings({}, env={}, cwd=tmp_path).release_age_policy()
    assert (policy.major, policy.minor, policy.patch) == (
        timedelta(days=14),
        timedelta(days=3),
        timedelta(days=3),
    )


def test_host_concurrency_merges_and_validates(tmp_path: Path) -> None:
    """Host limits from config and flags merge; out-of-range limits are usage errors."""
    (tmp_path / "patchula.toml").write_text('host-concurrency = { "pypi.org" = 4 }\n')
    s = load_settings({"host_concurrency": ["api.github.com=8"]}, env={}, cwd=tmp_path)
    assert s.host_concurrency == {"pypi.org": 4, "api.github.com": 8}
    with pytest.raises(ConfigError, match="between 1 and 100"):
        load_settings({"host_concurrency": ["a.example=0"]}, env={}, cwd=tmp_path)
    with pytest.raises(ConfigError, match="HOST=N"):
        load_settings({"host_concurrency": ["nonsense"]}, env={}, cwd=tmp_path)


def test_bad_config_names_file_and_key(tmp_path: Path) -> None:
    """An invalid value in the config file is reported with the file, its line and the key."""
    cfg = tmp_path / "patchula.toml"
    cfg.write_text('concurrency = 2\n\nfail-on = "sometimes"\n')
    with pytest.raises(ConfigError, match=r"patchula\.toml:3: fail-on"):
        load_settings({}, env={}, cwd=tmp_path)


def test_a_pyproject_setting_is_named_at_its_line_in_the_table(tmp_path: Path) -> None:
    """``[tool.patchula]`` in pyproject.toml: the line of the key, snake-case as written."""
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.patchula]\nmin_release_age = "3d"\nbogus = 1\n'
    )
    with pytest.raises(ConfigError) as raised:
        load_settings({}, env={}, cwd=tmp_path)
    assert raised.value.args[0].endswith("pyproject.toml:6 [tool.patchula]: bogus: unknown setting")


def test_unknown_key_is_refused(tmp_path: Path) -> None:
    """A misspelt setting is an error, not silently ignored."""
    (tmp_path / "patchula.toml").write_text("concurency = 3\n")
    with pytest.raises(ConfigError, match="unknown setting"):
        load_settings({}, env={}, cwd=tmp_path)


def test_invalid_toml_config(tmp_path: Path) -> None:
    """A config file that is not TOML is a config error naming the file."""
    cfg = tmp_path / "custom.toml"
    cfg.write_text("concurrency = = 3\n")
    with pytest.raises(ConfigError, match=r"custom\.toml: invalid TOML"):
        load_settings({"config": cfg}, env={}, cwd=tmp_path)


def test_config_nested_too_deeply_names_its_line(tmp_path: Path) -> None:
    """A config file nested past tomllib's recursion limit is a config error with its line."""
    cfg = tmp_path / "custom.toml"
    cfg.write_text("concurrency = 3\nx = " + "[" * 5000 + "]" * 5000 + "\n")
    message = r"custom\.toml: invalid TOML: nested too deeply \(5000 levels of brackets\)"
    with pytest.raises(ConfigError, match=message + r" \(at line 2\)"):
        load_settings({"config": cfg}, env={}, cwd=tmp_path)


def test_registry_overrides(tmp_path: Path) -> None:
    """``--registry NAME=URL`` and PATCHULA_REGISTRY set datasource base URLs."""
    s = load_settings(
        {"registries": ["npm=http://127.0.0.1:9/npm/"]},
        env={"PATCHULA_REGISTRY": "pypi=http://127.0.0.1:9/pypi"},
        cwd=tmp_path,
    )
    assert s.registries == {"npm": "http://127.0.0.1:9/npm", "pypi": "http://127.0.0.1:9/pypi"}
    with pytest.raises(ConfigError, match="NAME=URL"):
        load_settings({"registries": ["npm=ftp://x"]}, env={}, cwd=tmp_path)


def test_host_limit_wants_a_host_not_a_url(tmp_path: Path) -> None:
    """``--host-concurrency http://host=2`` is refused instead of silently matching nothing."""
    with pytest.raises(ConfigError, match="not a URL"):
        load_settings({"host_concurrency": ["http://127.0.0.1:8080=2"]}, env={}, cwd=tmp_path)


def test_goproxy_environment(tmp_path: Path) -> None:
    """GOPROXY's first URL is the goproxy base; direct/off turns proxies off; GOPRIVATE is read."""
    s = load_settings(
        {},
        env={
            "GOPROXY": "https://goproxy.example/,direct",
            "GOPRIVATE": "*.corp.example,github.com/acme",
        },
        cwd=tmp_path,
    )
    assert s.registries == {"goproxy": "https://goproxy.example"}
    chain = load_settings(
        {},
        env={"GOPROXY": "https://a.example/,https://b.example|https://c.example,direct"},
        cwd=tmp_path,
    )
    assert chain.registries == {"goproxy": "https://a.example,https://b.example|https://c.example"}
    assert s.go_noproxy == ("*.corp.example", "github.com/acme")
    assert s.go_proxy_off is None
    off = load_settings({}, env={"GOPROXY": "direct"}, cwd=tmp_path)
    assert off.go_proxy_off == "GOPROXY=direct: patchula uses Go module proxies only"
    flag = load_settings(
        {"registries": ["goproxy=http://127.0.0.1:9"]},
        env={"GOPROXY": "https://x.example"},
        cwd=tmp_path,
    )
    assert flag.registries == {"goproxy": "http://127.0.0.1:9"}


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("2026-12-07T09:00:00Z", datetime(2026, 12, 7, 9, tzinfo=UTC)),
        ("2026-12-07T10:30+01:00", datetime(2026, 12, 7, 9, 30, tzinfo=UTC)),
        ("2026-12-07T09:00:00", datetime(2026, 12, 7, 9, tzinfo=UTC)),
        ("2026-12-07", datetime(2026, 12, 7, tzinfo=UTC)),
    ],
)
def test_now_from_environment_is_an_aware_utc_instant(
    tmp_path: Path, given: str, expected: datetime
) -> None:
    """PATCHULA_NOW takes ISO 8601; a time without an offset or a bare date is read as UTC."""
    now = load_settings({}, env={"PATCHULA_NOW": given}, cwd=tmp_path).now
    assert now == expected
    assert now is not None
    assert now.utcoffset() == timedelta(0)


def test_now_flag_wins_and_config_dates_are_read(tmp_path: Path) -> None:
    """--now beats PATCHULA_NOW, which beats a TOML datetime in patchula.toml; unset is None."""
    (tmp_path / "patchula.toml").write_text("now = 2026-12-01T00:00:00Z\n")
    env = {"PATCHULA_NOW": "2026-12-02"}
    assert load_settings({}, env={}, cwd=tmp_path).now == datetime(2026, 12, 1, tzinfo=UTC)
    assert load_settings({}, env=env, cwd=tmp_path).now == datetime(2026, 12, 2, tzinfo=UTC)
    flag = load_settings({"now": "2026-12-03T00:00:00Z"}, env=env, cwd=tmp_path).now
    assert flag == datetime(2026, 12, 3, tzinfo=UTC)
    assert load_settings({}, env={}, cwd=tmp_path / "none").now is None


def test_invalid_now_names_its_source(tmp_path: Path) -> None:
    """An unreadable timestamp is a usage error naming the flag and the expected form."""
    with pytest.raises(ConfigError, match=r"--now: invalid timestamp 'monday'.*ISO 8601"):
        load_settings({"now": "monday"}, env={}, cwd=tmp_path)
    with pytest.raises(ConfigError, match="PATCHULA_NOW"):
        load_settings({}, env={"PATCHULA_NOW": "13/12/2026"}, cwd=tmp_path)


def test_managers_are_chosen_by_flag_environment_and_config(tmp_path: Path) -> None:
    """enabled-managers narrows the set, disabled-managers removes from it, in MANAGERS order."""
    (tmp_path / "patchula.toml").write_text('enabled-managers = ["go_mod", "cargo_toml"]\n')
    assert load_settings({}, env={}, cwd=tmp_path).managers() == ("cargo_toml", "go_mod")
    env = {"PATCHULA_DISABLED_MANAGERS": "cargo_toml"}
    assert load_settings({}, env=env, cwd=tmp_path).managers() == ("go_mod",)
    flag = load_settings({"disabled_managers": "cargo_lock, go_mod"}, env={}, cwd=tmp_path / "x")
    assert "cargo_lock" not in flag.managers()
    assert "go_mod" not in flag.managers()
    assert len(flag.managers()) == len(MANAGERS) - 2


def test_unknown_manager_ids_are_refused_with_the_known_ones(tmp_path: Path) -> None:
    """A manager id that does not exist is a usage error listing the ids that do."""
    with pytest.raises(ConfigError, match=r"--enabled-managers: unknown manager 'npm' \(known: "):
        load_settings({"enabled_managers": "npm"}, env={}, cwd=tmp_path)
    (tmp_path / "patchula.toml").write_text('disabled-managers = ["cargo"]\n')
    with pytest.raises(ConfigError, match=r"patchula.toml:1: disabled-managers: unknown manager"):
        load_settings({}, env={}, cwd=tmp_path)


def test_recheck_patterns_parse_from_flags_env_and_config_switches() -> None:
    """``--recheck`` patterns are kept in order without repeats; a switch means every one."""
    assert parse_recheck(["pkg-1*", "left-pad", "pkg-1*"]) == ("pkg-1*", "left-pad")
    assert parse_recheck("a, b c") == ("a", "b", "c")
    assert parse_recheck("true") == ("*",)
    assert parse_recheck([True]) == ("*",)  # type: ignore[list-item]  # a TOML switch
    assert parse_recheck("false") == ()
    assert load_settings({"recheck": ["@scope/*"]}, env={}).recheck == ("@scope/*",)
    assert load_settings({}, env={"PATCHULA_RECHECK": "1"}).recheck == ("*",)
    assert load_settings({}, env={"PATCHULA_OFFLINE": "1"}).offline is True
    assert bare_recheck(["--recheck"]) == ["--recheck=*"]
    assert bare_recheck(["--recheck", "--offline", "."]) == ["--recheck=*", "--offline", "."]
    assert bare_recheck(["--recheck", "pkg-1*", "."]) == ["--recheck", "pkg-1*", "."]
    assert bare_recheck(["--", "--recheck"]) == ["--", "--recheck"]


def test_waits_by_type_given_as_timedeltas_are_kept() -> None:
    """A ``WaitByType`` built in code keeps its waits (a timedelta was dropped to ``None``)."""
    by = WaitByType(major=timedelta(days=14), patch=timedelta(hours=2))
    settings = Settings(min_release_age=timedelta(days=1), min_release_age_by_type=by)
    policy = settings.release_age_policy()
    assert (policy.major, policy.minor, policy.patch) == (
        timedelta(days=14),
        timedelta(days=1),
        timedelta(hours=2),
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("P14D", timedelta(days=14)),
        ("PT72H", timedelta(hours=72)),
        ("P1DT12H30M", timedelta(days=1, hours=12, minutes=30)),
        ("P2W", timedelta(weeks=2)),
        ("pt90s", timedelta(seconds=90)),
    ],
)
def test_iso_8601_durations_as_the_report_writes_them_are_read(
    text: str, expected: timedelta
) -> None:
    """The JSON report's options hold ``P14D``: passing one back gives the same wait."""
    assert parse_duration(text) == expected
    assert load_settings({"min_release_age": text}, env={}).min_release_age == expected


@pytest.mark.parametrize("text", ["P", "PT", "P1Y", "P1M", "PXD"])
def test_iso_durations_without_a_fixed_length_are_refused(text: str) -> None:
    """Years and months have no fixed length; an empty ``P`` says nothing."""
    with pytest.raises(ValueError, match="invalid duration"):
        parse_duration(text)


@pytest.mark.parametrize(
    ("cli", "env", "wait_from"),
    [
        ({"min_release_age": "40d"}, {}, "--min-release-age"),
        ({}, {"PATCHULA_MIN_RELEASE_AGE": "40d"}, "environment variable PATCHULA_MIN_RELEASE_AGE"),
    ],
)
def test_a_flag_wait_replaces_the_config_files_waits_by_type(
    tmp_path: Path, cli: dict[str, object], env: dict[str, str], wait_from: str
) -> None:
    """``--min-release-age 40d`` beats a file's ``patch = "1d"``: flag over file, every type.

    The precedence (flag, variable, file) holds for the wait of every update type the flag
    sets; the note naming what it replaced is kept for ``-v``.
    """
    (tmp_path / "patchula.toml").write_text(
        'min-release-age = "3d"\n[min-release-age-by-type]\npatch = "1d"\n'
    )
    settings = load_settings(cli, env=env, cwd=tmp_path)
    policy = settings.release_age_policy()
    assert (policy.major, policy.minor, policy.patch) == (timedelta(days=40),) * 3
    note = (
        f"{wait_from} 40d is the wait of every update type: it replaces"
        f" [min-release-age-by-type] of {tmp_path / 'patchula.toml'} (patch = '1d')"
    )
    assert settings.notes == (note,)
    assert "notes" not in settings.model_dump(by_alias=True)
    alone = load_settings({}, env={}, cwd=tmp_path)  # one source: the per-type wait stands
    assert alone.release_age_policy().patch == timedelta(days=1)
    assert alone.release_age_policy().major == timedelta(days=3)
    assert alone.notes == ()
