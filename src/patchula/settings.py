"""Settings built once per run from flags, ``PATCHULA_*`` environment variables and a config file.

Precedence, highest first: command-line flag, environment variable, config file, default. The
config file is ``--config PATH`` (or ``PATCHULA_CONFIG``), else ``patchula.toml`` in the current
directory, else the ``[tool.patchula]`` table of ``pyproject.toml`` there. Keys are kebab-case
and mirror the flags::

    concurrency = 8
    format = "table"
    fail-on = "outdated"
    min-release-age = "3d"
    host-concurrency = { "registry.npmjs.org" = 8 }
    ignore-paths = ["**/node_modules/**", "**/tests/**"]

    [min-release-age-by-type]     # per update type, overriding min-release-age of this file
    major = "14d"                 # (a --min-release-age flag or variable replaces both)
    patch = "1d"

    [registries]                  # datasource id -> base URL (mirrors, the tests' fake registry)
    npm = "https://registry.npmjs.org"
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from patchula.discovery import read_regular
from patchula.errors import ConfigError, ManifestError
from patchula.http.auth import Credential, basic_credential, redact_url, split_userinfo
from patchula.manager import MANAGERS
from patchula.policy import ReleaseAgePolicy

T = TypeVar("T")
OutputFormat = Literal["table", "json", "markdown"]
FailOn = Literal["none", "outdated", "major", "held-back"]

# Renovate's `config:recommended` ignorePaths: vendored trees, examples and test fixtures are not
# the project's dependencies (the corpus has deliberately broken manifests under tests/).
DEFAULT_IGNORE_PATHS = (
    "**/node_modules/**",
    "**/bower_components/**",
    "**/vendor/**",
    "**/examples/**",
    "**/__tests__/**",
    "**/test/**",
    "**/tests/**",
    "**/__fixtures__/**",
)
DEFAULT_MAX_FILE_BYTES = 20 * 1024 * 1024
# A config file (patchula.toml, a pyproject.toml) larger than this is refused, not read.
CONFIG_MAX_BYTES = DEFAULT_MAX_FILE_BYTES

_DURATION = re.compile(
    r"^\s*(?P<n>\d+(?:\.\d+)?)\s*(?P<unit>s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hrs|hours?"
    r"|d|days?|w|weeks?)\s*$",
    re.IGNORECASE,
)
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


_ISO_DURATION = re.compile(
    r"P(?:(?P<w>\d+(?:\.\d+)?)W)?(?:(?P<d>\d+(?:\.\d+)?)D)?"
    r"(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?",
    re.IGNORECASE,
)


def parse_duration(value: str | float) -> timedelta:
    """Parse a release-age duration: ``72h``, ``3d``, ``1w``, ``30m``, ``90s``, ``3 days``, ``0``.

    ISO 8601 durations without years or months (``P14D``, ``PT72H``, ``P1DT12H``) are read
    too: the JSON report writes the options that way.

    Raises ``ValueError`` for anything else (a bare non-zero number is ambiguous and refused).
    """
    if isinstance(value, int | float) and not isinstance(value, bool):
        if value == 0:
            return timedelta(0)
        msg = f"duration {value!r} needs a unit (s, m, h, d or w), e.g. '72h' or '3d'"
        raise ValueError(msg)
    text = str(value).strip()
    if text == "0":
        return timedelta(0)
    iso = _ISO_DURATION.fullmatch(text)
    if iso is not None and any(iso.groups()):
        # ISO 8601 durations (``P14D``, ``PT72H``, ``P1DT12H``): what the JSON report's
        # ``options`` holds, so a report's options can be passed back.
        parts = {k: float(v) for k, v in iso.groupdict().items() if v is not None}
        return timedelta(
            weeks=parts.get("w", 0),
            days=parts.get("d", 0),
            hours=parts.get("h", 0),
            minutes=parts.get("m", 0),
            seconds=parts.get("s", 0),
        )
    match = _DURATION.match(text)
    if match is None:
        msg = f"invalid duration {text!r}: use a number and a unit (s, m, h, d or w), e.g. '3d'"
        raise ValueError(msg)
    unit = match["unit"].lower()
    unit = "m" if unit.startswith("min") or unit == "m" else unit[0]
    return timedelta(seconds=float(match["n"]) * _UNIT_SECONDS[unit])


_SIZE = re.compile(
    r"^\s*(?P<n>\d+(?:\.\d+)?)\s*(?P<unit>b|kb|kib|mb|mib|gb|gib)?\s*$", re.IGNORECASE
)
_SIZE_UNITS = {
    "b": 1,
    "kb": 1000,
    "kib": 1024,
    "mb": 1000**2,
    "mib": 1024**2,
    "gb": 1000**3,
    "gib": 1024**3,
}


def parse_timestamp(value: str | date) -> datetime:
    """Parse an ISO 8601 instant: ``2026-12-07T09:00:00Z``, ``…T10:00+01:00``, ``2026-12-07``.

    Returns an aware UTC datetime. A time without an offset, or a bare date (midnight), is read
    as UTC: a report must not depend on the machine's time zone. Also takes the datetimes and
    dates a TOML file gives. Raises ``ValueError`` with a usage message.
    """
    if isinstance(value, datetime):
        when = value
    elif isinstance(value, date):
        when = datetime(value.year, value.month, value.day)  # noqa: DTZ001 - UTC just below
    else:
        try:
            when = datetime.fromisoformat(str(value).strip())
        except ValueError:
            msg = (
                f"invalid timestamp {value!r}: use ISO 8601, e.g. '2026-12-07T09:00:00Z' "
                "or '2026-12-07'"
            )
            raise ValueError(msg) from None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def parse_size(value: str | int) -> int:
    """Parse a byte size: ``256MiB``, ``1GB``, ``500kb``, ``1048576``; raises ``ValueError``."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            msg = f"size must not be negative, got {value}"
            raise ValueError(msg)
        return value
    match = _SIZE.match(str(value))
    if match is None:
        msg = f"invalid size {value!r}: use a number and a unit (B, KiB, MiB, GiB, kB, MB, GB)"
        raise ValueError(msg)
    return int(float(match["n"]) * _SIZE_UNITS[(match["unit"] or "b").lower()])


def parse_host_limit(value: str) -> tuple[str, int]:
    """Parse ``HOST=N`` with 1 <= N <= 100; raises ``ValueError`` with a usage message."""
    host, sep, number = value.partition("=")
    host = host.strip().lower()
    if not sep or not host:
        msg = f"expected HOST=N, got {value!r}"
        raise ValueError(msg)
    if "/" in host or "@" in host:
        msg = f"give a host name (and :port if not the default), not a URL: {host!r}"
        raise ValueError(msg)
    try:
        limit = int(number)
    except ValueError:
        msg = f"limit for {host} must be an integer 1-100, got {number!r}"
        raise ValueError(msg) from None
    if not 1 <= limit <= 100:  # noqa: PLR2004 - the documented bounds
        msg = f"limit for {host} must be between 1 and 100, got {limit}"
        raise ValueError(msg)
    return host, limit


# Datasource ids a base URL can be given for (design.md §3); more arrive with their datasources.
REGISTRY_NAMES = (
    "npm",
    "pypi",
    "crates",
    "crates-api",
    "goproxy",
    "github",
    "docker",
    "docker-hub",
    "node",
    "python",
    "go",
)


# ``backend:package`` as mise writes a backend (``jdx/mise:docs/registry.md``).
_BACKEND = re.compile(r"[a-z][a-z0-9-]*:\S+")


def parse_tool_registry(value: Mapping[str, object]) -> dict[str, str]:
    """Check ``[tool-registry]``: tool short name → ``backend:package``; raises ``ValueError``."""
    out: dict[str, str] = {}
    for tool, backend in value.items():
        if not isinstance(backend, str) or _BACKEND.fullmatch(backend.strip()) is None:
            msg = f"{tool}: expected a mise backend such as 'github:owner/repo', got {backend!r}"
            raise ValueError(msg)
        out[str(tool).strip()] = backend.strip()
    return out


def parse_registry(value: str) -> tuple[str, str]:
    """Parse ``NAME=URL`` (a datasource id and an http(s) base URL); raises ``ValueError``.

    A pip-style PyPI index URL (``…/simple``) is accepted and means its host's base URL. A
    query or fragment is refused (request paths are appended to the base). Messages show the
    URL redacted (``redact_url``): never a password it carries.
    """
    name, sep, url = value.partition("=")
    name, url = name.strip(), url.strip()
    if not sep or not name or not re.match(r"^https?://[^\s/]+", url):
        shown = f"{name}{sep}{redact_url(url)}" if sep else redact_url(value)
        msg = f"expected NAME=URL with an http(s) URL, got {shown!r}"
        raise ValueError(msg)
    if name not in REGISTRY_NAMES:
        msg = f"unknown datasource {name!r} (known: {', '.join(REGISTRY_NAMES)})"
        raise ValueError(msg)
    try:
        parts = [urlsplit(part.strip()) for part in re.split(r"[,|]", url)]
        for part in parts:
            _ = part.port  # raises for a port that is not a number in 0-65535
    except ValueError as exc:
        msg = f"unusable {name} URL {redact_url(url)!r}: {exc}"
        raise ValueError(msg) from None
    if "?" in url or "#" in url:
        # Request paths are appended to the base URL: a query or fragment would end up in the
        # middle of every request path. Tokens belong in .npmrc, ~/.netrc or URL userinfo.
        msg = (
            f"the {name} base URL must not have a query or fragment, got {redact_url(url)!r}; "
            "give a token in .npmrc, ~/.netrc or as user:password@ in the URL"
        )
        raise ValueError(msg)
    url = url.rstrip("/")
    if name == "pypi" and url.endswith("/simple"):
        url = url.removesuffix("/simple")
    return name, url


def parse_shard(text: str) -> tuple[int, int]:
    """Parse ``--shard I/N`` (``2/4``: the second of four shares; 1-based like Jest and Playwright).

    Raises:
        ValueError: not two integers ``I/N`` with ``1 <= I <= N <= 10000``.
    """
    match = re.fullmatch(r"\s*(\d{1,5})\s*/\s*(\d{1,5})\s*", text)
    if match is None:
        msg = f"expected I/N such as 1/4, got {text!r}"
        raise ValueError(msg)
    index, count = int(match[1]), int(match[2])
    if not 1 <= index <= count <= SHARD_MAX:
        msg = f"expected 1 <= I <= N <= {SHARD_MAX}, got {text!r}"
        raise ValueError(msg)
    return index, count


# The most shares ``--shard`` splits a target list into.
SHARD_MAX = 10_000


def parse_recheck(value: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Parse ``--recheck`` patterns: package names or ``fnmatch`` globs, ``*`` for all.

    A list, or ``a,b c`` text (``PATCHULA_RECHECK``, a config list); ``true``/``1``/``yes``
    (a config or environment switch) mean ``*``; blanks and repeats are dropped.
    """
    items = re.split(r"[,\s]+", value) if isinstance(value, str) else list(value)
    found: list[str] = []
    for item in items:
        if isinstance(item, bool):
            item = "*" if item else ""  # noqa: PLW2901 - ``recheck = true`` in a config file
        if not isinstance(item, str):
            msg = f"expected package names or globs (strings), got {item!r}"
            raise ValueError(msg)  # noqa: TRY004 - pydantic reports ValueError, not TypeError
        text = item.strip()
        if text.lower() in {"true", "1", "yes", "on"}:
            text = "*"
        elif text.lower() in {"false", "0", "no", "off"}:
            text = ""
        if text:
            found.append(text)
    return tuple(dict.fromkeys(found))


def parse_insecure_registries(value: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Parse registry hosts (``host`` or ``host:port``) that may be reached over plain http.

    A list, or ``a:5000,b c`` text; lower-cased, repeats dropped. A bare host covers all its
    ports. Raises ``ValueError`` for a URL, a path or a port that is not a number.
    """
    items = re.split(r"[,\s]+", value) if isinstance(value, str) else list(value)
    hosts: list[str] = []
    for item in items:
        if not isinstance(item, str):
            msg = f"expected registry hosts (strings), got {item!r}"
            raise ValueError(msg)  # noqa: TRY004 - pydantic reports ValueError, not TypeError
        host = item.strip().lower()
        if not host:
            continue
        if (
            "/" in host
            or "@" in host
            or not re.fullmatch(r"(\[[0-9a-f:.]+\]|[^:\[\]]+)(:\d{1,5})?", host)
        ):
            msg = f"expected a registry host or host:port (no scheme or path), got {item.strip()!r}"
            raise ValueError(msg)
        hosts.append(host)
    return tuple(dict.fromkeys(hosts))


def parse_managers(value: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Parse manager ids (``MANAGERS`` keys such as ``cargo_toml``), a list or ``a,b c`` text.

    Repeats are dropped; raises ``ValueError`` naming an unknown id and the known ones.
    """
    items = re.split(r"[,\s]+", value) if isinstance(value, str) else list(value)
    ids: list[str] = []
    for item in items:
        if not isinstance(item, str):
            msg = f"expected manager ids (strings), got {item!r}"
            raise ValueError(msg)  # noqa: TRY004 - pydantic reports ValueError, not TypeError
        name = item.strip()
        if not name:
            continue
        if name not in MANAGERS:
            msg = f"unknown manager {name!r} (known: {', '.join(MANAGERS)})"
            raise ValueError(msg)
        ids.append(name)
    return tuple(dict.fromkeys(ids))


def _strip_userinfo(url: str, found: list[Credential]) -> str:
    """``url`` (a Go proxy chain is several, split by ``,``/``|``) without userinfo.

    Each userinfo becomes a Basic credential (source ``registry URL``) appended to ``found``.
    """
    parts = re.split(r"([,|])", url)
    for index in range(0, len(parts), 2):
        bare, user, password = split_userinfo(parts[index].strip())
        if user is None:
            continue
        parts[index] = bare
        found.append(basic_credential(user, password, bare, "registry URL"))
    return "".join(parts)


def _kebab(name: str) -> str:
    return name.replace("_", "-")


class WaitByType(BaseModel):
    """Per-update-type release-age overrides; ``None`` falls back to ``min-release-age``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    major: timedelta | None = None
    minor: timedelta | None = None
    patch: timedelta | None = None

    @field_validator("major", "minor", "patch", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> Any:  # noqa: ANN401 - pydantic before-validator
        return value if value is None or isinstance(value, timedelta) else parse_duration(value)


class Settings(BaseModel):
    """Everything a run needs to know, resolved once; immutable afterwards."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, alias_generator=_kebab, populate_by_name=True
    )

    concurrency: int = Field(default=8, ge=1, le=1000)
    host_concurrency: dict[str, int] = Field(default_factory=dict)
    default_host_concurrency: int = Field(default=16, ge=1, le=100)
    format: OutputFormat = "table"
    report: Path | None = None
    fail_on: FailOn = "none"
    allow_unknown: bool = Field(
        default=False,
        description="Under fail-on, let dependencies that could not be judged (status unknown) "
        "pass; by default they match as findings do",
    )
    min_release_age: timedelta = timedelta(0)
    min_release_age_by_type: WaitByType = WaitByType()
    unknown_age: Literal["hold", "admit"] = "hold"
    registries: dict[str, str] = Field(default_factory=dict)
    # Userinfo taken out of ``registries`` at parse time (Basic credentials for those base
    # URLs' scopes): never dumped into the report, never shown in a repr.
    registry_credentials: tuple[Credential, ...] = Field(default=(), exclude=True, repr=False)
    # What ``load_settings`` resolved between sources that a user may not expect (a flag's
    # wait replacing a file's per-type waits), one sentence each; ``-v`` prints them.
    notes: tuple[str, ...] = Field(default=(), exclude=True)
    insecure_registries: tuple[str, ...] = Field(
        default=(),
        description="Image registry hosts reached over plain http (loopback hosts always are)",
    )
    ignore_paths: tuple[str, ...] = DEFAULT_IGNORE_PATHS
    enabled_managers: tuple[str, ...] = Field(
        default=(), description="Manager ids to run (Renovate's enabledManagers); empty: all"
    )
    disabled_managers: tuple[str, ...] = Field(
        default=(), description="Manager ids never run, even when enabled"
    )
    max_file_bytes: int = Field(default=DEFAULT_MAX_FILE_BYTES, ge=1)
    cache: Path | None = Field(
        default=None, description="SQLite cache file; default: the platform's user cache dir"
    )
    no_cache: bool = False
    cache_budget: int = Field(default=256 * 1024 * 1024, ge=0)
    go_freshness_secs: int = Field(
        default=3600, ge=0, description="Minimum freshness of Go proxy @v/list and @latest"
    )
    registry_freshness_secs: int = Field(
        default=3600,
        ge=0,
        description="Minimum freshness of OCI tag lists sent with neither ETag nor Last-Modified",
    )
    request_deadline: float = Field(
        default=30.0,
        gt=0,
        le=600,
        description="Seconds one registry request may take in all (attempts, redirects, back-off)",
    )
    max_body_bytes: int = Field(
        default=256 * 1024 * 1024,
        ge=1,
        description="Bound on one response body, on the wire and decompressed",
    )
    go_noproxy: tuple[str, ...] = Field(
        default=(), description="GONOPROXY/GOPRIVATE module path patterns never sent to a proxy"
    )
    go_proxy_off: str | None = Field(
        default=None, description="Why no Go proxy is used (GOPROXY=direct or off), if so"
    )
    now: datetime | None = Field(
        default=None,
        description="The instant the release-age policy is evaluated at (default: the real now)",
    )
    offline: bool = Field(
        default=False,
        description="Answer from the cache alone (HTTP entries and catalog views, whatever "
        "their age); never open a connection",
    )
    recheck: tuple[str, ...] = Field(
        default=(),
        description="Package names or globs whose stored catalog views are not reused this "
        "run ('*': every dependency)",
    )
    dashboard: Path | None = Field(
        default=None, description="Also write the Markdown dependency dashboard to this file"
    )
    targets_file: Path | None = Field(
        default=None,
        description="A file of targets, one per line ('#' starts a comment), scanned after the "
        "targets given as arguments",
    )
    shard: tuple[int, int] | None = Field(
        default=None,
        description="I/N: scan only the I-th of N stable shares of the target list (1 <= I <= N; "
        "patchula.shard)",
    )
    include_forks: bool = Field(
        default=False, description="github:OWNER/* also lists the owner's forks"
    )
    include_archived: bool = Field(
        default=False, description="github:OWNER/* also lists the owner's archived repositories"
    )
    tool_registry: dict[str, str] = Field(
        default_factory=dict,
        description="mise registry mapping overrides: tool short name -> backend "
        "('github:owner/repo', 'aqua:…', 'cargo:…', 'npm:…', 'core:node' …), over the shipped "
        "mapping ([tool-registry] in config)",
    )
    cache_workers: int = Field(
        default=5, ge=1, le=100, description="Lookup tasks `cache warm` works on at once"
    )
    cache_max_depth: int = Field(
        default=10,
        ge=1,
        le=100,
        description="Depth of dependencies of dependencies at which `cache warm` stops",
    )
    cache_max_attempts: int = Field(
        default=3, ge=1, le=20, description="Attempts of a lookup task before it fails for good"
    )
    verbose: int = Field(default=0, ge=0)
    quiet: bool = False
    progress: bool = True

    @model_validator(mode="before")
    @classmethod
    def _registry_userinfo(cls, data: Any) -> Any:  # noqa: ANN401 - pydantic before-validator
        """Move userinfo out of registry base URLs into Basic credentials for their scopes.

        URLs built from a base URL then never carry a password (into a row's ``sourceUrl``, a
        reason or the report's options); the credential goes only to that URL's scope.
        """
        if not isinstance(data, dict):
            return data
        key = "registries" if "registries" in data else None
        registries = data.get(key) if key else None
        if not isinstance(registries, dict):
            return data
        found = list(data.get("registry_credentials", ()))
        clean: dict[str, Any] = {}
        for name, url in registries.items():
            clean[name] = _strip_userinfo(url, found) if isinstance(url, str) else url
        return {**data, "registries": clean, "registry_credentials": tuple(found)}

    @field_validator("min_release_age", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> Any:  # noqa: ANN401 - pydantic before-validator
        return value if isinstance(value, timedelta) else parse_duration(value)

    @field_validator("enabled_managers", "disabled_managers", mode="before")
    @classmethod
    def _managers(cls, value: Any) -> Any:  # noqa: ANN401 - pydantic before-validator
        return parse_managers(value) if isinstance(value, str | list | tuple) else value

    @field_validator("recheck", mode="before")
    @classmethod
    def _recheck(cls, value: Any) -> Any:  # noqa: ANN401 - pydantic before-validator
        return parse_recheck(value) if isinstance(value, str | list | tuple) else value

    @field_validator("shard", mode="before")
    @classmethod
    def _shard(cls, value: Any) -> Any:  # noqa: ANN401 - pydantic before-validator
        return parse_shard(value) if isinstance(value, str) else value

    @field_validator("insecure_registries", mode="before")
    @classmethod
    def _insecure(cls, value: Any) -> Any:  # noqa: ANN401 - pydantic before-validator
        return parse_insecure_registries(value) if isinstance(value, str | list | tuple) else value

    @field_validator("now", mode="before")
    @classmethod
    def _timestamp(cls, value: Any) -> Any:  # noqa: ANN401 - pydantic before-validator
        return parse_timestamp(value) if isinstance(value, str | date) else value

    @field_validator("cache_budget", "max_body_bytes", mode="before")
    @classmethod
    def _size(cls, value: Any) -> Any:  # noqa: ANN401 - pydantic before-validator
        return parse_size(value) if isinstance(value, str | int) else value

    @field_validator("host_concurrency", mode="before")
    @classmethod
    def _hosts(cls, value: Any) -> Any:  # noqa: ANN401 - pydantic before-validator
        if isinstance(value, dict):
            return dict(parse_host_limit(f"{k}={v}") for k, v in value.items())
        return value

    @field_validator("tool_registry", mode="before")
    @classmethod
    def _tool_registry(cls, value: Any) -> Any:  # noqa: ANN401 - pydantic before-validator
        return parse_tool_registry(value) if isinstance(value, dict) else value

    @field_validator("registries", mode="before")
    @classmethod
    def _registries(cls, value: Any) -> Any:  # noqa: ANN401 - pydantic before-validator
        if isinstance(value, dict):
            return dict(parse_registry(f"{k}={v}") for k, v in value.items())
        return value

    def managers(self) -> tuple[str, ...]:
        """The manager ids this run uses, in ``MANAGERS`` order.

        The enabled ones (all when none is given) minus the disabled ones.
        """
        enabled = self.enabled_managers or tuple(MANAGERS)
        return tuple(m for m in MANAGERS if m in enabled and m not in self.disabled_managers)

    def release_age_policy(self) -> ReleaseAgePolicy:
        """Return the release-age policy these settings describe."""
        base = self.min_release_age
        by = self.min_release_age_by_type
        return ReleaseAgePolicy(
            major=by.major if by.major is not None else base,
            minor=by.minor if by.minor is not None else base,
            patch=by.patch if by.patch is not None else base,
            unknown_age=self.unknown_age,
        )


_ENV_SCALARS = (
    "concurrency",
    "format",
    "report",
    "fail_on",
    "allow_unknown",
    "min_release_age",
    "unknown_age",
    "insecure_registries",
    "offline",
    "recheck",
    "dashboard",
    "targets_file",
    "shard",
    "include_forks",
    "include_archived",
    "max_file_bytes",
    "default_host_concurrency",
    "verbose",
    "quiet",
    "progress",
    "cache",
    "no_cache",
    "cache_budget",
    "go_freshness_secs",
    "registry_freshness_secs",
    "request_deadline",
    "max_body_bytes",
    "now",
    "enabled_managers",
    "disabled_managers",
    "cache_workers",
    "cache_max_depth",
    "cache_max_attempts",
)


def load_settings(
    cli: Mapping[str, Any],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Settings:
    """Build ``Settings`` from command-line flags (``None`` = not given), env and config.

    ``cli`` may hold ``config`` (a path), list-valued ``host_concurrency``/``registries`` in
    ``HOST=N``/``NAME=URL`` form, and scalar fields. Raises ``ConfigError`` naming the source
    (flag, variable or file and key) of any invalid value, or of ``offline`` and ``no_cache``
    both set (offline answers come from the cache alone).
    """
    env = os.environ if env is None else env
    cwd = cwd or Path.cwd()
    config_path = cli.get("config") or env.get("PATCHULA_CONFIG")
    values, source = _read_config(Path(config_path) if config_path else None, cwd)

    for name in _ENV_SCALARS:
        raw = env.get(f"PATCHULA_{name.upper()}")
        if raw not in (None, ""):
            values[name] = raw
            source[name] = f"environment variable PATCHULA_{name.upper()}"
    try:
        if env.get("PATCHULA_HOST_CONCURRENCY"):
            values["host_concurrency"] = {
                **values.get("host_concurrency", {}),
                **dict(_split_pairs(env["PATCHULA_HOST_CONCURRENCY"], parse_host_limit)),
            }
        if env.get("PATCHULA_REGISTRY"):
            values["registries"] = {
                **values.get("registries", {}),
                **dict(_split_pairs(env["PATCHULA_REGISTRY"], parse_registry)),
            }
    except ValueError as exc:
        raise ConfigError(f"environment: {exc}") from None

    _go_environment(env, values)

    for name, value in cli.items():
        if value is None or name == "config":
            continue
        if name == "host_concurrency":
            try:
                limits = dict(parse_host_limit(v) for v in value)
            except ValueError as exc:
                raise ConfigError(f"--host-concurrency: {exc}") from None
            values[name] = {**values.get(name, {}), **limits}
        elif name == "registries":
            try:
                urls = dict(parse_registry(v) for v in value)
            except ValueError as exc:
                raise ConfigError(f"--registry: {exc}") from None
            values[name] = {**values.get(name, {}), **urls}
        elif name == "insecure_registries":
            values[name] = value
            source[name] = "--insecure-registry"
        else:
            values[name] = value
            source[name] = f"--{_kebab(name)}"
    try:
        settings = Settings.model_validate(values)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, source)) from None
    settings = _wait_precedence(settings, values, source)
    if settings.offline and settings.no_cache:
        # Offline answers come from the cache alone: without one, every row would be unknown.
        msg = (
            f"{source.get('offline', '--offline')} and {source.get('no_cache', '--no-cache')} "
            "cannot be combined: --offline answers from the cache alone"
        )
        raise ConfigError(msg)
    return settings


def _wait_precedence(
    settings: Settings, values: Mapping[str, Any], source: Mapping[str, str]
) -> Settings:
    """``settings`` with a flag's (or variable's) ``min-release-age`` over a file's per-type waits.

    The precedence (flag, variable, file, default) holds per setting, and
    ``--min-release-age`` is the wait of every update type: given by a source above the config
    file, it replaces the file's ``[min-release-age-by-type]`` too, else a file's ``patch =
    "1d"`` would quietly beat ``--min-release-age 40d``. Within one source the per-type waits
    override ``min-release-age``, as documented. The note saying so is kept for ``-v``.
    """
    by_type = values.get("min_release_age_by_type")
    wait_from = source.get("min_release_age")
    file = source.get("min_release_age_by_type")
    if not by_type or wait_from is None or file is None or wait_from == file:
        return settings
    given = ", ".join(f"{kind} = {value!r}" for kind, value in dict(by_type).items())
    note = (
        f"{wait_from} {values['min_release_age']} is the wait of every update type: it "
        f"replaces [min-release-age-by-type] of {file} ({given})"
    )
    return settings.model_copy(update={"min_release_age_by_type": WaitByType(), "notes": (note,)})


def _go_environment(env: Mapping[str, str], values: dict[str, Any]) -> None:
    """Honour the go command's GOPROXY, GOPRIVATE and GONOPROXY (https://go.dev/ref/mod#goproxy).

    The proxy URLs at the head of GOPROXY, with their ``,`` (next on 404/410) and ``|`` (next on
    any error) separators, become the ``goproxy`` base (unless one is configured); an entry
    ``direct`` or ``off`` ends the list, and if it comes first Go modules are skipped with that
    reason (patchula never fetches from version control). GONOPROXY (default: GOPRIVATE) lists
    module path patterns that are never sent to a proxy.
    """
    proxy = env.get("GOPROXY", "").strip()
    if proxy:
        parts = re.split(r"([,|])", proxy)
        chain = ""
        for index in range(0, len(parts), 2):
            entry = parts[index].strip()
            if not re.match(r"^https?://", entry):
                if not chain and entry in {"direct", "off"}:
                    values.setdefault(
                        "go_proxy_off", f"GOPROXY={entry}: patchula uses Go module proxies only"
                    )
                break
            chain += (parts[index - 1] if chain else "") + entry.rstrip("/")
        if chain:
            values.setdefault("registries", {}).setdefault("goproxy", chain)
    patterns = env.get("GONOPROXY") or env.get("GOPRIVATE") or ""
    found = tuple(p.strip() for p in patterns.split(",") if p.strip())
    if found:
        values.setdefault("go_noproxy", found)


def _split_pairs(text: str, parse: Callable[[str], tuple[str, T]]) -> list[tuple[str, T]]:
    return [parse(part) for part in re.split(r"[,\s]+", text.strip()) if part]


def _read_config(path: Path | None, cwd: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """Return the config table and, per key, where it came from."""
    table: dict[str, Any] = {}
    where = ""
    if path is not None:
        data = _load_toml(path)
        # A pyproject.toml passed with --config holds its settings under [tool.patchula].
        table = data.get("tool", {}).get("patchula", {}) if path.name == "pyproject.toml" else data
        where = str(path)
    elif (cwd / "patchula.toml").is_file():
        table = _load_toml(cwd / "patchula.toml")
        where = str(cwd / "patchula.toml")
    elif (cwd / "pyproject.toml").is_file():
        try:
            data = _load_toml(cwd / "pyproject.toml")
        except ConfigError:
            data = {}  # a broken pyproject is a manifest problem of the scan, not a config error
        table = (
            data.get("tool", {}).get("patchula", {}) if isinstance(data.get("tool"), dict) else {}
        )
        where = f"{cwd / 'pyproject.toml'} [tool.patchula]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [tool.patchula] must be a table")
    values = {k.replace("-", "_"): v for k, v in table.items()}
    if "registry_credentials" in values:
        # Filled from userinfo in [registries] URLs only; not a setting a file may give.
        raise ConfigError(f"{where}: registry-credentials: unknown setting")
    return values, dict.fromkeys(values, where)


def _load_toml(path: Path) -> dict[str, Any]:
    """Read a config file (a regular file of at most ``CONFIG_MAX_BYTES``) as TOML.

    Any unusable file — missing, a FIFO or directory (read without blocking), too large, not
    UTF-8, invalid TOML, nested too deeply, a number over Python's digit limit — raises
    ``ConfigError`` naming it; nothing else escapes.
    """
    if not path.exists() and not path.is_symlink():
        raise ConfigError(f"config file not found: {path}")
    try:
        data = read_regular(path, str(path), CONFIG_MAX_BYTES)
    except ManifestError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.message}") from None
    import tomllib  # noqa: PLC0415 - lazy: start-up (most runs have no config file)

    try:
        text = data.decode("utf-8-sig")
        return tomllib.loads(text)
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (at byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except RecursionError:
        from patchula.manager.base import nesting_problem  # noqa: PLC0415 - lazy: rare

        problem = nesting_problem(str(path), text, "TOML")
        raise ConfigError(f"{path}: {problem.message} (at line {problem.line})") from None
    except ValueError as exc:  # an integer over the 4,300-digit conversion limit
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None


def _describe(exc: ValidationError, source: Mapping[str, str]) -> str:
    """Turn a pydantic error into one line per problem, naming the flag, variable or file."""
    lines = []
    for err in exc.errors():
        loc = [str(p) for p in err["loc"]]
        field = loc[0].replace("-", "_") if loc else ""
        origin = source.get(field, "config")
        key = ".".join(_kebab(p) for p in loc) if loc else "?"
        message = str(err.get("ctx", {}).get("error", err["msg"]))
        if err["type"] == "extra_forbidden":
            message = "unknown setting"
        # A flag already names its key ("--format: invalid value"); files and variables do not.
        if origin.startswith("--"):
            lines.append(f"{origin}: {message}")
            continue
        line = _config_line(origin, loc)
        at = origin
        if line is not None:
            table = _PYPROJECT_TABLE if origin.endswith(_PYPROJECT_TABLE) else ""
            at = f"{origin.removesuffix(_PYPROJECT_TABLE)}:{line}{table}"
        lines.append(f"{at}: {key}: {message}")
    return "invalid settings: " + "; ".join(lines)


_PYPROJECT_TABLE = " [tool.patchula]"


def _config_line(origin: str, loc: list[str]) -> int | None:
    """The line of the key ``loc`` in the config file ``origin`` names, if it is one.

    ``origin`` is a file (``patchula.toml``) or ``PATH [tool.patchula]``; a key is found as
    written, kebab- or snake-case. ``None`` for environment variables and keys not found.
    Best effort (``manager.base.TomlLocator``): only a bad value's error message pays for it.
    """
    if origin.startswith("environment variable") or not loc:
        return None
    path = origin
    prefix: tuple[str, ...] = ()
    if origin.endswith(_PYPROJECT_TABLE):
        path, prefix = origin.removesuffix(_PYPROJECT_TABLE), ("tool", "patchula")
    elif Path(origin).name == "pyproject.toml":
        prefix = ("tool", "patchula")
    try:
        text = read_regular(Path(path), path, CONFIG_MAX_BYTES).decode("utf-8-sig")
    except (ManifestError, UnicodeDecodeError, OSError):
        return None
    from patchula.manager.base import TomlLocator  # noqa: PLC0415 - lazy: only on a bad value

    locator = TomlLocator(text)
    for spelling in (_kebab, lambda part: part.replace("-", "_")):
        keys = tuple(spelling(str(part)) for part in loc)
        for depth in range(len(keys), 0, -1):  # the deepest key the file spells this way
            offset = locator.find(prefix + keys[:depth])
            if offset is not None:
                return locator.line(offset)
    return None
