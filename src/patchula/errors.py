"""The patchula exception tree; per-dependency failures become report rows, not crashes.

```
PatchulaError
├── ConfigError            bad option, flag value or config file (exit code 2)
├── ManifestError          one manifest cannot be read or parsed (a row naming file and line)
│   └── NotUtf8Error       its bytes are not UTF-8 (kept: pip decodes requirements otherwise)
├── RepositoryUnreadable   a remote repository cannot be read (a repository row with the reason)
└── LookupFailed           one registry lookup failed (a row with status `error`, exit code 3)
    ├── PackageNotFound    the registry answered 404/410 for the package
    ├── RegistryError      the registry answered with an unexpected status or an unusable body
    ├── RegistryUnreachable the request failed at the network level (DNS, connect, timeout, reset)
    └── NotCached          ``--offline``: the cache holds no answer (a row with status `unknown`)
```
"""

from __future__ import annotations


class PatchulaError(Exception):
    """Base of every error patchula raises on purpose."""


class ConfigError(PatchulaError):
    """A command-line option, environment variable or config file is invalid."""


class ManifestError(PatchulaError):
    """A manifest or lockfile cannot be parsed.

    Carries the file (relative to the repository root, POSIX separators) and the 1-based line
    where the problem was found, or ``None`` when no line applies (unreadable, too large).
    """

    def __init__(self, message: str, *, file: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.message}"


class NotUtf8Error(ManifestError):
    """A file's bytes are not UTF-8 text; ``data`` holds them.

    Most manifests are UTF-8 by their format (JSON, TOML, YAML), so this is their problem.
    A manager whose tool decodes its files otherwise (pip reads a requirements file by its
    byte-order mark or coding line) decodes ``data`` itself (a manager's ``decode``).
    """

    def __init__(self, message: str, *, file: str, line: int | None, data: bytes) -> None:
        super().__init__(message, file=file, line=line)
        self.data = data


class RepositoryUnreadable(PatchulaError):  # noqa: N818 - names the outcome, like LookupFailed
    """A remote repository (``github:OWNER/REPO``) cannot be read at all.

    ``reason`` is the one-line, token-free sentence the report shows on the repository's row
    (not found or not visible, empty, no such ref, no permission, rate limited, unusable
    answer); the run's other repositories go on.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class LookupFailed(PatchulaError):  # noqa: N818 - the design names the outcome, not an "Error"
    """A registry lookup failed; ``reason`` is a one-line, token-free explanation."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class PackageNotFound(LookupFailed):
    """The registry does not know the package (HTTP 404 or 410)."""


class RegistryError(LookupFailed):
    """The registry answered, but not with something usable (5xx, 4xx, malformed body)."""


class RegistryUnreachable(LookupFailed):
    """The request never got an HTTP answer (DNS failure, refused, timeout, reset)."""


# The reason of every ``NotCached``: what a row, a caveat or a note says of it.
NOT_CACHED = "not in cache (offline)"


class NotCached(LookupFailed):
    """``--offline`` and the cache holds no answer for the request (no connection is opened).

    Its row is ``unknown`` (the freshness is not known, nothing failed upstream), with the
    reason ``not in cache (offline)`` (``NOT_CACHED``); the run still exits 3, as for a
    failed lookup.
    """

    def __init__(self, reason: str = NOT_CACHED) -> None:
        super().__init__(reason)
