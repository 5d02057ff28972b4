"""Registry credentials and base URLs from where each ecosystem already keeps them (design.md §3).

Sources: npm's ``.npmrc`` (the user's and the scanned checkout's), ``NPM_CONFIG_REGISTRY``,
pip's ``PIP_INDEX_URL`` and ``pip.conf``, userinfo in any registry URL, ``~/.netrc``,
``GITHUB_TOKEN``/``GH_TOKEN`` and the docker CLI's ``config.json`` (``$DOCKER_CONFIG``). The
readers are pure functions of text, paths and an environment mapping, so tests pass fake homes.
``RegistryAccess`` is what a run uses: per checkout, the registry base URLs (npm's default and
scoped registries, the PyPI index, image registries) and the credentials that go with them,
handed to the fetch facade as a ``Credentials`` (``http.auth``), which sends each one only to
its scope. Secrets never appear in warnings, ``repr`` or anything returned for display:
warnings name the file, line and variable, never a value.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import contextvars
import json
import os
import re
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit

import msgspec

from patchula.cargo_registries import CargoConfigs, CargoLayer, CargoSource, read_layer
from patchula.datasource import DATASOURCES
from patchula.http.auth import (
    Credential,
    StaticCredentials,
    basic_credential,
    redact_url,
    scope_of,
    split_userinfo,
)
from patchula.settings import Settings, parse_registry

__all__ = [
    "CheckoutAccess",
    "Npmrc",
    "RegistryAccess",
    "github_api_url",
    "github_credential",
    "github_graphql_url",
    "netrc_logins",
    "pip_index",
    "read_npmrc",
]

NPM_DEFAULT_REGISTRY = "https://registry.npmjs.org"
# The registry standing for Docker Hub (containerd's hosts.go maps docker.io here); the
# ``docker`` registry setting replaces it (a mirror). Kept here, not read from the ``docker``
# datasource, so resolving an image's base URL imports no datasource.
DOCKER_HUB_REGISTRY = "https://registry-1.docker.io"
GITHUB_API_URL = "https://api.github.com"
# The datasources whose base URL is the registry ``github`` (REST; GraphQL beside it).
GITHUB_DATASOURCES = frozenset({"github-tags", "github-releases"})
USER_NPMRC = "~/.npmrc"
CHECKOUT_NPMRC = "./.npmrc"
# Where pip's global configuration lives (``/etc/pip.conf``); tests point it elsewhere.
PIP_GLOBAL_DIR = Path("/etc")
# Credential files are small; a bigger one is not read (and a FIFO never blocks: see _read).
MAX_CONFIG_BYTES = 1024 * 1024

# npm's ``${VAR}`` / ``${VAR?}`` substitution in .npmrc keys and values (``@npmcli/config``
# env-replace): a backslash before ``$`` keeps it literal; ``?`` makes an unset variable empty.
_ENV_REFERENCE = re.compile(r"(?<!\\)\$\{([^${}?]+)(\?)?\}")


@dataclass(frozen=True, slots=True)
class _Entry:
    """One ``key = value`` of an .npmrc (value after ``${VAR}`` expansion), and where it was."""

    value: str = field(repr=False)
    source: str
    line: int


class _Skipped(msgspec.Struct, frozen=True):
    """A line not used because a ``${VAR}`` in its value is unset: its key, where, and why."""

    key: str
    source: str
    line: int
    why: str


class Npmrc(msgspec.Struct, frozen=True):
    """The settings of one or more .npmrc files, merged (later files win per key)."""

    entries: Mapping[str, _Entry] = msgspec.field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    skipped: tuple[_Skipped, ...] = ()

    def over(self, lower: Npmrc) -> Npmrc:
        """These settings on top of ``lower``'s (npm: project config over user config)."""
        return Npmrc(
            {**lower.entries, **self.entries},
            lower.warnings + self.warnings,
            lower.skipped + self.skipped,
        )


class _UnsetVariableError(LookupError):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _expand(text: str, env: Mapping[str, str]) -> str:
    def replace(match: re.Match[str]) -> str:
        name, optional = match[1], match[2]
        if name in env:
            return env[name]
        if optional:
            return ""
        raise _UnsetVariableError(name)

    return _ENV_REFERENCE.sub(replace, text).replace("\\${", "${")


def _unquote(value: str) -> str:
    """An ini value without its quotes (npm's ``ini`` reads ``"…"`` as JSON, ``'…'`` as is)."""
    if len(value) >= 2 and value[0] == value[-1] == '"':  # noqa: PLR2004 - a pair of quotes
        try:
            parsed = json.loads(value)
        except ValueError:
            return value[1:-1]
        return parsed if isinstance(parsed, str) else value[1:-1]
    if len(value) >= 2 and value[0] == value[-1] == "'":  # noqa: PLR2004 - a pair of quotes
        return value[1:-1]
    return value


def read_npmrc(text: str, source: str, env: Mapping[str, str]) -> Npmrc:
    """Read one .npmrc (``key = value`` lines; ``#``/``;`` comments; quotes; ``${VAR}``).

    Keys under an ``[section]`` header are not top-level settings and are ignored, as npm's
    flat config ignores them. A line naming an unset ``${VAR}`` is skipped with a warning
    naming ``source``, the line and the variable (never a value). Source: npm's ``npmrc``
    documentation (https://docs.npmjs.com/cli/configuring-npm/npmrc).
    """
    entries: dict[str, _Entry] = {}
    warnings: list[str] = []
    skipped: list[_Skipped] = []
    in_section = False
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            in_section = True
            continue
        key, eq, value = line.partition("=")
        key = key.strip()
        if in_section or not eq or not key:
            continue
        expanded_key: str | None = None
        try:
            expanded_key = _expand(key, env)
            expanded = _expand(_unquote(value.strip()), env)
        except _UnsetVariableError as exc:
            why = f"environment variable {exc.name} is not set"
            warnings.append(f"{source} line {number}: {why}; {key} is not used")
            if expanded_key is not None:
                skipped.append(_Skipped(expanded_key, source, number, why))
            continue
        entries[expanded_key] = _Entry(expanded, source, number)
    return Npmrc(entries, tuple(warnings), tuple(skipped))


class NpmRegistries(msgspec.Struct, frozen=True):
    """Where npm packages are looked up: the default registry and per-scope registries."""

    default: str
    scopes: Mapping[str, str] = msgspec.field(default_factory=dict)

    def for_package(self, name: str) -> str:
        """The base URL for ``name``: its scope's registry (``@acme/x``), else the default."""
        if name.startswith("@") and "/" in name:
            return self.scopes.get(name.split("/", 1)[0].lower(), self.default)
        return self.default


def _registry_url(value: str, source: str, found: list[Credential]) -> str | None:
    """A registry URL from a setting, its userinfo moved into ``found``; ``None`` if unusable."""
    bare, user, password = split_userinfo(value.strip())
    if not re.match(r"^https?://[^\s/]+", bare):
        return None
    if user is not None:
        found.append(basic_credential(user, password, bare, source))
    return bare.rstrip("/")


def _npm_registries(
    npmrc: Npmrc, env: Mapping[str, str], configured: str | None, found: list[Credential]
) -> tuple[NpmRegistries, list[str]]:
    """The npm registries in force; scoped ones come from ``@scope:registry`` keys.

    The default, highest first: patchula's own setting (like npm's ``--registry`` flag),
    ``NPM_CONFIG_REGISTRY``, the merged .npmrc ``registry=``, the public registry.
    """
    warnings: list[str] = []
    default: str | None = configured
    if default is None:
        for variable in ("NPM_CONFIG_REGISTRY", "npm_config_registry"):
            if env.get(variable):
                default = _registry_url(env[variable], variable, found)
                if default is None:
                    warnings.append(f"{variable} is not an http(s) URL; not used")
                break
    if default is None and "registry" in npmrc.entries:
        entry = npmrc.entries["registry"]
        default = _registry_url(entry.value, entry.source, found)
        if default is None:
            warnings.append(f"{entry.source} line {entry.line}: registry is not an http(s) URL")
    scopes: dict[str, str] = {}
    for key, entry in npmrc.entries.items():
        scope, sep, name = key.partition(":")
        if not sep or name != "registry" or not scope.startswith("@"):
            continue
        url = _registry_url(entry.value, entry.source, found)
        if url is None:
            warnings.append(f"{entry.source} line {entry.line}: {key} is not an http(s) URL")
            continue
        scopes[scope.lower()] = url
    return NpmRegistries(default or NPM_DEFAULT_REGISTRY, scopes), warnings


# The keys of an .npmrc credential (under a nerf-dart, and the legacy top-level ones).
_CREDENTIAL_KEYS = frozenset({"_authToken", "_auth", "username", "_password"})


class _FileCredentials(msgspec.Struct, frozen=True):
    """The credentials of one .npmrc, and why those it names for a scope cannot be used."""

    credentials: list[Credential]
    unused: dict[str, str]  # scope -> "the credential in FILE line N was not used: WHY"
    warnings: list[str]


def _npm_credentials(npmrc: Npmrc, registries: NpmRegistries) -> _FileCredentials:
    """Credentials of one .npmrc's nerf-dart keys (``//host/path/:…``), one per nerf-dart.

    ``:_authToken`` (Bearer), ``:_auth`` and ``:username`` + ``:_password`` (Basic), in npm's
    order (token, then ``_auth``, then user name and password; ``npm/npm-registry-fetch``
    ``lib/auth.js``); legacy top-level ``_authToken``/``_auth`` apply to the default registry
    only, below a nerf-dart credential for the same scope (npm tries the nerf-dart first).
    ``always-auth`` is ignored: a credential in scope is always sent. A nerf-dart whose
    credential lines cannot be used (an unset ``${VAR}``, a ``_password`` not in base64)
    gets an ``unused`` explanation instead, naming the file and line (never a value).

    A nerf-dart has no scheme: its credential is for ``https://`` and, when a registry in use
    on that host is plain ``http://`` (a local mirror), for that too.
    """
    warnings: list[str] = []
    by_dart: dict[str, dict[str, _Entry]] = {}
    for key, entry in npmrc.entries.items():
        if key.startswith("//"):
            dart, _, name = key.rpartition(":")
            if dart:
                by_dart.setdefault(dart, {})[name] = entry
    skipped: dict[str, _Skipped] = {}  # nerf-dart (or "" for the top level) -> first skipped
    for unset in npmrc.skipped:
        dart, _, name = unset.key.rpartition(":")
        if unset.key in {"_authToken", "_auth"}:
            skipped.setdefault("", unset)
        elif unset.key.startswith("//") and dart and name in _CREDENTIAL_KEYS:
            skipped.setdefault(dart, unset)
    in_use = [registries.default, *registries.scopes.values()]

    def scopes(dart: str) -> list[str]:
        https = scope_of(f"https:{dart}")
        plain = scope_of(f"http:{dart}")
        origin = plain.split("/", 3)[2]
        if any(
            scope_of(url).split("/", 3)[2] == origin and url.startswith("http:") for url in in_use
        ):
            return [https, plain]
        return [https]

    found = _FileCredentials([], {}, warnings)
    top = {k: npmrc.entries[k] for k in ("_authToken", "_auth") if k in npmrc.entries}
    # The legacy top-level keys first: a nerf-dart credential for the same scope replaces it.
    groups = [("", top, [scope_of(registries.default)])] if top or "" in skipped else []
    darts = [d for d in dict.fromkeys([*by_dart, *skipped]) if d]
    groups += [(dart, by_dart.get(dart, {}), scopes(dart)) for dart in darts]
    for dart, fields, where in groups:
        made = _npm_credential(fields, warnings)
        if isinstance(made, tuple):
            header, value, source = made
            found.credentials.extend(Credential(header, value, source, scope) for scope in where)
            for scope in where:
                found.unused.pop(scope, None)  # a legacy key's note: this one is sent instead
            continue
        line = skipped.get(dart)
        if made is None and line is not None:
            made = f"the credential in {line.source} line {line.line} was not used: {line.why}"
        if made is not None:
            # Kept beside a legacy credential for the same scope: this one would have won.
            found.unused.update(dict.fromkeys(where, made))
    return found


def _npm_credential(
    fields: Mapping[str, _Entry], warnings: list[str]
) -> tuple[str, str, str] | str | None:
    """``(header, value, source)`` of one nerf-dart's fields; else why not, or ``None`` if none."""
    token = fields.get("_authToken")
    if token is not None and token.value:
        return "Authorization", f"Bearer {token.value}", token.source
    auth = fields.get("_auth")
    if auth is not None and auth.value:
        return "Authorization", f"Basic {auth.value}", auth.source
    user, password = fields.get("username"), fields.get("_password")
    if user is not None and password is not None:
        try:
            secret = base64.b64decode(password.value, validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            where = f"{password.source} line {password.line}"
            warnings.append(f"{where}: _password is not base64; not used")
            return f"the credential in {where} was not used: _password is not base64"
        login = base64.b64encode(f"{user.value}:{secret}".encode()).decode("ascii")
        return "Authorization", f"Basic {login}", password.source
    return None


def pip_index(
    env: Mapping[str, str], home: Path | None, etc: Path | None = None
) -> tuple[str, str] | None:
    """The pip index URL and where it was set: ``PIP_INDEX_URL``, else ``index-url`` in pip.conf.

    Files in pip's order, later overriding earlier: ``/etc/pip.conf``, then (unless
    ``PIP_CONFIG_FILE`` names an existing file) ``~/.pip/pip.conf`` and
    ``$XDG_CONFIG_HOME/pip/pip.conf`` (default ``~/.config/pip/pip.conf``), then
    ``PIP_CONFIG_FILE``; ``[install]`` overrides ``[global]``
    (https://pip.pypa.io/en/stable/topics/configuration/). Unreadable files are skipped.
    """
    if env.get("PIP_INDEX_URL"):
        return env["PIP_INDEX_URL"], "PIP_INDEX_URL"
    files: list[Path] = [(PIP_GLOBAL_DIR if etc is None else etc) / "pip.conf"]
    explicit = Path(env["PIP_CONFIG_FILE"]) if env.get("PIP_CONFIG_FILE") else None
    if home is not None and not (explicit is not None and explicit.is_file()):
        xdg = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
        files += [home / ".pip" / "pip.conf", xdg / "pip" / "pip.conf"]
    if explicit is not None:
        files.append(explicit)
    found: tuple[str, str] | None = None
    for path in files:
        text = _read(path)
        if text is None:
            continue
        import configparser  # noqa: PLC0415 - lazy: start-up (most machines have no pip.conf)

        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(text)
        except configparser.Error:
            continue
        for section in ("global", "install"):
            value = parser.get(section, "index-url", fallback=None)
            if value and value.strip():
                found = value.strip(), _shown(path, home)
    return found


def netrc_logins(path: Path) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """``machine`` entries of a netrc file: host → (login, password); warnings for damage.

    The ``default`` entry is not used: it would send one password to every registry. A file
    that does not parse is not used; the warning names its line, never its content.
    """
    text = _read(path)
    if text is None:
        return {}, []
    import netrc  # noqa: PLC0415 - lazy: start-up (read only when the file exists)

    try:
        parsed = netrc.netrc(os.fspath(path))
    except netrc.NetrcParseError as exc:
        return {}, [f"{path}: not a valid netrc file (line {exc.lineno}); not used"]
    except OSError:
        return {}, []
    logins = {
        host.lower(): (login, password or "")
        for host, (login, _account, password) in parsed.hosts.items()
        if host != "default" and login
    }
    return logins, []


# The names the docker CLI accepts for Docker Hub in ``auths`` (``https://index.docker.io/v1/``
# is what ``docker login`` writes; ``registry.ConvertToHostname`` strips scheme and path).
DOCKER_HUB_KEYS = frozenset({"index.docker.io", "docker.io", "registry-1.docker.io"})
# Docker Hub's token service: the docker CLI sends the Hub login there (the token request),
# not only to the registry.
DOCKER_HUB_AUTH = "https://auth.docker.io"


@dataclass(frozen=True, slots=True)
class DockerLogin:
    """One usable ``auths`` entry of a docker config: registry host, user, password (hidden)."""

    host: str
    user: str
    password: str = field(repr=False)


def docker_logins(text: str, source: str) -> tuple[list[DockerLogin], list[str]]:
    """The ``auths`` logins of a docker ``config.json`` and warnings naming ``source``.

    An entry gives ``auth`` (base64 ``user:password``) or ``username`` and ``password``; its
    key is a registry host (``ghcr.io``, ``localhost:5000``) or URL (``https://ghcr.io``,
    ``https://index.docker.io/v1/``), reduced to ``host[:port]`` as the docker CLI does
    (``registry.ConvertToHostname``). ``identitytoken`` (an OAuth refresh token), ``credsStore``
    and ``credHelpers`` (credential helper programs) are not supported: those entries are
    skipped with a warning naming the key, never a value; so is a damaged entry. A file that
    is not a JSON object is one warning. Source: docs.docker.com "docker login" and the
    ``docker/cli`` ``cli/config/configfile`` format.
    """
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return [], [f"{source}: not valid JSON; not used"]
    if not isinstance(document, dict):
        return [], [f"{source}: not a JSON object; not used"]
    warnings: list[str] = []
    if document.get("credsStore"):
        warnings.append(
            f"{source}: credsStore (a credential helper) is not supported; registries stored "
            "there are looked up anonymously"
        )
    helpers = document.get("credHelpers")
    if isinstance(helpers, dict) and helpers:
        hosts = ", ".join(sorted(_docker_host(str(k)) for k in helpers))
        warnings.append(
            f"{source}: credHelpers (credential helpers) are not supported; {hosts} "
            "looked up without them"
        )
    auths = document.get("auths", {})
    if not isinstance(auths, dict):
        return [], [*warnings, f"{source}: auths is not an object; not used"]
    logins: list[DockerLogin] = []
    for key, entry in auths.items():
        host = _docker_host(str(key))
        if not isinstance(entry, dict) or not host:
            warnings.append(f"{source}: auths entry {host or '?'!r} is not usable; skipped")
            continue
        if entry.get("identitytoken"):
            warnings.append(
                f"{source}: auths entry {host!r} has an identitytoken (a refresh token), which "
                "is not supported; skipped"
            )
            continue
        login = _docker_login(host, entry)
        if isinstance(login, str):
            warnings.append(f"{source}: auths entry {host!r}: {login}; skipped")
        elif login is not None:
            logins.append(login)
    return logins, warnings


def _docker_login(host: str, entry: Mapping[str, object]) -> DockerLogin | str | None:
    """The login of one ``auths`` entry, why it is unusable, or ``None`` (an empty entry)."""
    auth = entry.get("auth")
    if isinstance(auth, str) and auth:
        try:
            decoded = base64.b64decode(auth, validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return "auth is not base64"
        name, colon, secret = decoded.partition(":")
        if not colon or not name:
            return "auth is not base64 of user:password"
        return DockerLogin(host, name, secret)
    user, password = entry.get("username"), entry.get("password")
    if isinstance(user, str) and user and isinstance(password, str):
        return DockerLogin(host, user, password)
    if auth not in (None, "") or user not in (None, "") or password not in (None, ""):
        return "no usable auth, or username and password"
    return None


def _docker_host(key: str) -> str:
    """``https://Index.Docker.IO/v1/`` → ``index.docker.io`` (scheme and path dropped)."""
    key = key.strip()
    for prefix in ("https://", "http://"):
        if key.lower().startswith(prefix):
            key = key[len(prefix) :]
            break
    return key.split("/", 1)[0].lower()


def docker_credentials(
    logins: list[DockerLogin],
    source: str,
    registries: Mapping[str, str],
    insecure: frozenset[str],
) -> list[Credential]:
    """Basic credentials for the image registries ``logins`` name, each scoped to its base URL.

    A registry host's login goes to ``image_base(host)`` (``https://``, or ``http://`` for
    loopback and insecure hosts); Docker Hub's (any of ``DOCKER_HUB_KEYS``) to the ``docker``
    registry base and to ``DOCKER_HUB_AUTH``, the token service the docker CLI sends it to.
    Nowhere else.
    """
    found: list[Credential] = []
    for login in logins:
        if login.host in DOCKER_HUB_KEYS:
            bases = [image_base("docker.io", registries, insecure), DOCKER_HUB_AUTH]
        else:
            bases = [image_base(login.host, registries, insecure)]
        found += [basic_credential(login.user, login.password, f"{b}/", source) for b in bases]
    return found


def github_credential(env: Mapping[str, str], api: str | None = None) -> Credential | None:
    """``GH_TOKEN`` (the gh CLI's order) or ``GITHUB_TOKEN`` as a Bearer credential.

    Scoped to ``api`` (the ``github`` registry, ``--registry github=URL``) when given, else
    ``GITHUB_API_URL`` (GitHub Enterprise Server) or ``https://api.github.com``.
    """
    for variable in ("GH_TOKEN", "GITHUB_TOKEN"):
        token = env.get(variable, "").strip()
        if token:
            api = api or github_api_url(env)
            return Credential("Authorization", f"Bearer {token}", variable, scope_of(api))
    return None


def github_api_url(env: Mapping[str, str], registries: Mapping[str, str] | None = None) -> str:
    """The GitHub REST base: the ``github`` registry, else ``GITHUB_API_URL``, else the default.

    A GitHub Enterprise Server base is ``https://<host>/api/v3`` (GraphQL at ``/api/graphql``)
    and is used as given; no trailing slash.
    """
    configured = (registries or {}).get("github") or env.get("GITHUB_API_URL", "").strip()
    return (configured or GITHUB_API_URL).rstrip("/")


def github_graphql_url(api: str) -> str:
    """The GraphQL endpoint beside REST base ``api``: ``{api}/graphql``.

    GitHub Enterprise Server's ``https://<host>/api/v3`` has it at ``https://<host>/api/graphql``.
    """
    base = api.rstrip("/")
    if base.endswith("/api/v3"):
        return f"{base.removesuffix('/v3')}/graphql"
    return f"{base}/graphql"


def _read(path: Path) -> str | None:
    """The text of a regular file of at most ``MAX_CONFIG_BYTES``, else ``None``.

    Opened non-blocking and checked with ``fstat``: a FIFO or device named like a config file
    must never block the run.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_CONFIG_BYTES:
            return None
        data = os.read(fd, MAX_CONFIG_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data.decode("utf-8-sig", errors="replace")


def _shown(path: Path, home: Path | None) -> str:
    """``path`` as a message shows it (``~/…`` under the home directory)."""
    if home is not None:
        with contextlib.suppress(ValueError):
            return f"~/{path.relative_to(home).as_posix()}"
    return str(path)


@dataclass(frozen=True, slots=True)
class CheckoutAccess:
    """Registries and credentials for one checkout's lookups (``key`` tells stores apart).

    ``cargo``: the checkout's cargo configuration (``crate_view``); ``sent``/``unused``: what
    ``credentials`` was made of, and ``stores`` the run's key table, for views derived from it.
    """

    npm: NpmRegistries
    registries: Mapping[str, str]
    credentials: StaticCredentials = field(repr=False)
    key: int = 0
    warnings: tuple[str, ...] = ()
    insecure_registries: frozenset[str] = frozenset()
    cargo: CargoConfigs | None = field(default=None, repr=False, compare=False)
    sent: tuple[Credential, ...] = field(default=(), repr=False, compare=False)
    unused: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    stores: dict[object, int] | None = field(default=None, repr=False, compare=False)
    derived: dict[object, CheckoutAccess] = field(default_factory=dict, repr=False, compare=False)

    def crate_view(self, file: str, registry: str | None) -> tuple[CheckoutAccess, CargoSource]:
        """The view a crate of manifest ``file`` on ``registry`` (``None``: crates.io) uses.

        Its ``.cargo/config.toml`` files (``cargo_registries``) may name an alternative
        registry or replace crates.io: the view then has that sparse index as its ``crates``
        registry and the registry's token (``CARGO_REGISTRIES_<NAME>_TOKEN``) for it alone;
        an alternative registry has no crates.io web API (``crates.NO_WEB_API``). The source
        says why a crate is not looked up (a git index, a local-registry) or is an error (a
        replacement cycle, a damaged config file). ``--registry crates=URL`` wins over a
        replacement of crates.io.
        """
        if self.cargo is None:
            if registry is None:
                return self, CargoSource()
            skip = f"alternative registry '{registry}': no cargo configuration was read"
            return self, CargoSource(skip=skip)
        config = self.cargo.for_file(file)
        source = config.resolve(registry, mirror_configured="crates" in self.registries)
        if source.index is None:
            return self, source
        signature = (
            self.key,
            source.index,
            source.alternative,
            tuple(sorted((c.scope, c.header, c.cache_identity) for c in source.credentials)),
            source.no_token,
        )
        view = self.derived.get(signature)
        if view is None:
            from patchula.datasource import crates  # noqa: PLC0415 - lazy: start-up

            registries = {**self.registries, "crates": source.index}
            if source.alternative:
                registries["crates-api"] = crates.NO_WEB_API
            by_scope = {(c.scope, c.header): c for c in (*self.sent, *source.credentials)}
            unused = dict(self.unused)
            if source.no_token is not None:
                unused[scope_of(f"{source.index}/")] = source.no_token
            stores = {} if self.stores is None else self.stores
            key = stores.setdefault(("cargo", signature), len(stores))
            view = replace(
                self,
                registries=registries,
                credentials=StaticCredentials(by_scope.values(), unused),
                key=key,
                sent=tuple(by_scope.values()),
                unused=unused,
                derived={},
            )
            self.derived[signature] = view
        return view, source

    def base_url(self, datasource: str, package: str) -> str:
        """The base URL ``package`` of ``datasource`` is looked up on.

        For ``docker`` (``package`` = ``<registry host[:port]>/<repository>``, Docker Hub as
        ``docker.io``): Docker Hub's images go to the ``docker`` registry (a mirror, else
        ``DOCKER_HUB_REGISTRY``), any other host ``h`` to ``https://h``, or ``http://h`` when
        ``h`` is loopback or listed in ``insecure_registries`` (``image_base``). The GitHub
        datasources (``github-tags``, ``github-releases``) use the ``github`` registry
        (``--registry github=URL``, ``GITHUB_API_URL``, default ``https://api.github.com``).
        """
        if datasource == "npm":
            return self.npm.for_package(package)
        if datasource == "docker":
            return image_base(package.partition("/")[0], self.registries, self.insecure_registries)
        if datasource in GITHUB_DATASOURCES:
            return (self.registries.get("github") or GITHUB_API_URL).rstrip("/")
        return self.registries.get(datasource) or DATASOURCES[datasource].default_base_url


def image_base(
    host: str, registries: Mapping[str, str], insecure: frozenset[str] | set[str]
) -> str:
    """The base URL of image registry ``host`` (``host[:port]`` as an image reference names it).

    ``docker.io`` is the ``docker`` registry (``registries["docker"]`` or
    ``DOCKER_HUB_REGISTRY``). Otherwise ``https://host`` (lower-case), or ``http://host`` for a
    loopback host (``localhost``, ``127.0.0.0/8``, ``::1``: the docker daemon's default) and
    for a host in ``insecure`` (``host:port``, or a bare host covering all its ports), as the
    daemon's ``insecure-registries`` setting allows.
    """
    host = host.strip().lower()
    if host == "docker.io":
        return registries.get("docker") or DOCKER_HUB_REGISTRY
    name = urlsplit(f"//{host}").hostname or host
    plain = _loopback(name) or host in insecure or name in insecure
    return f"{'http' if plain else 'https'}://{host}"


def _loopback(name: str) -> bool:
    """Whether host ``name`` (no port, no brackets) is ``localhost`` or a loopback address."""
    if name == "localhost":
        return True
    import ipaddress  # noqa: PLC0415 - lazy: start-up

    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


# The checkout whose lookup the running task makes: the fetch facade asks ``for_url`` with a
# URL only, so the credentials of that checkout travel with the task's context.
_ACTIVE: contextvars.ContextVar[CheckoutAccess | None] = contextvars.ContextVar(
    "patchula_checkout_access", default=None
)


class RegistryAccess:
    """The run's credential sources, read once; per checkout, its registries and credentials.

    Precedence of credentials for one scope, highest first: userinfo in a patchula registry
    URL (``--registry``, ``PATCHULA_REGISTRY``, ``[registries]``); the checkout's ``.npmrc``;
    the user's ``~/.npmrc`` (``NPM_CONFIG_USERCONFIG``); userinfo in ``NPM_CONFIG_REGISTRY``;
    the pip index (``PIP_INDEX_URL``, pip.conf); ``GH_TOKEN``/``GITHUB_TOKEN``; the docker
    config's ``auths`` (``docker_logins``, ``$DOCKER_CONFIG/config.json`` or
    ``~/.docker/config.json``); ``~/.netrc``
    (``NETRC``), only for registry hosts no other source has a credential for. The two
    ``.npmrc`` files are not merged per key for credentials: the checkout's credential for a
    nerf-dart replaces the user's whatever its kind (npm's order applies within one file).
    Between scopes the most specific (longest) wins. A credential line that cannot be used
    explains a 401/403 for its scope (``unused_for``) unless a higher source has one there.
    ``home`` ``None`` reads no user files; ``etc`` holds the global ``pip.conf`` (default
    ``PIP_GLOBAL_DIR``).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        env: Mapping[str, str] | None = None,
        home: Path | None = None,
        etc: Path | None = None,
    ) -> None:
        self._settings = settings
        self._env: Mapping[str, str] = {} if env is None else env
        env = self._env
        warnings: list[str] = []
        self._user_npmrc = Npmrc()
        user_config = env.get("NPM_CONFIG_USERCONFIG") or env.get("npm_config_userconfig")
        npmrc_path = Path(user_config) if user_config else home / ".npmrc" if home else None
        if npmrc_path is not None:
            text = _read(npmrc_path)
            if text is not None:
                shown = USER_NPMRC if not user_config else _shown(npmrc_path, home)
                self._user_npmrc = read_npmrc(text, shown, env)
        self._pip: list[Credential] = []
        self._pypi: str | None = None
        index = pip_index(env, home, etc)
        if index is not None and "pypi" not in settings.registries:
            url, source = index
            bare = _registry_url(url, source, self._pip)
            if bare is None or not bare.endswith("/simple"):
                warnings.append(
                    f"{source}: index {redact_url(url)} is not a …/simple index URL; not used"
                )
                self._pip.clear()
            else:
                self._pypi = parse_registry(f"pypi={bare}")[1]
        # The token goes to the ``github`` registry (``--registry github=URL``, else
        # ``GITHUB_API_URL``): REST under it and, for GHES, GraphQL at ``/api/graphql``.
        self._github_api = github_api_url(env, settings.registries)
        self._github: list[Credential] = []
        for url in dict.fromkeys([self._github_api, github_graphql_url(self._github_api)]):
            github = github_credential(env, url)
            if github is not None and not any(url.startswith(c.scope) for c in self._github):
                self._github.append(github)
        self._docker: list[Credential] = []
        docker_dir = Path(env["DOCKER_CONFIG"]) if env.get("DOCKER_CONFIG") else None
        if docker_dir is None and home is not None:
            docker_dir = home / ".docker"
        docker_text = _read(docker_dir / "config.json") if docker_dir is not None else None
        if docker_dir is not None and docker_text is not None:
            shown = (
                "$DOCKER_CONFIG/config.json"
                if env.get("DOCKER_CONFIG")
                else _shown(docker_dir / "config.json", home)
            )
            logins, more = docker_logins(docker_text, shown)
            warnings += more
            self._docker = docker_credentials(
                logins,
                shown,
                settings.registries,
                frozenset(settings.insecure_registries),
            )
        netrc_path = Path(env["NETRC"]) if env.get("NETRC") else home / ".netrc" if home else None
        self._netrc: dict[str, tuple[str, str]] = {}
        if netrc_path is not None:
            self._netrc, more = netrc_logins(netrc_path)
            warnings += more
        self._cargo_user = _cargo_user(env, home)
        self._stores: dict[object, int] = {}
        self._default = self._access(Npmrc(), ())
        # Warnings about the user's files and environment, reported once for the run (stderr).
        self.warnings: list[str] = [
            *warnings,
            *self._user_npmrc.warnings,
            *self._default.warnings,
        ]

    def for_checkout(self, root: Path | None) -> CheckoutAccess:
        """Registries and credentials for lookups of the checkout at ``root``.

        Its ``.npmrc`` (a regular file inside the checkout, at most 1 MiB) is read on top of
        the user's; its warnings (``./.npmrc line N …``) are returned for the repository.
        ``None``: the run-wide view (no checkout).
        """
        if root is None:
            return self._default
        text = _read(root / ".npmrc") if _inside(root, root / ".npmrc") else None
        return self.for_npmrc(text, root)

    def for_npmrc(self, text: str | None, root: Path | None = None) -> CheckoutAccess:
        """Registries and credentials for a repository whose root ``.npmrc`` holds ``text``.

        What ``for_checkout`` does with a checkout's file, for one known by its text (a remote
        repository's blob); ``None``: the repository has none (the run-wide view). ``root``: the
        checkout whose ``.cargo/config.toml`` files its crates' lookups read (``crate_view``).
        """
        if text is None and root is None:
            return self._default
        checkout = Npmrc() if text is None else read_npmrc(text, CHECKOUT_NPMRC, self._env)
        view = self._access(checkout, checkout.warnings, root)
        if text is None:
            # No .npmrc: the run-wide view's warnings, as before cargo configs were read.
            return replace(view, warnings=self._default.warnings)
        # Only what this checkout adds: the run-wide warnings are reported once, not per checkout.
        own = tuple(w for w in view.warnings if w not in self._default.warnings)
        return replace(view, warnings=own)

    def _access(
        self, checkout: Npmrc, warnings: tuple[str, ...], checkout_root: Path | None = None
    ) -> CheckoutAccess:
        npmrc = checkout.over(self._user_npmrc)
        npm_found: list[Credential] = []
        configured = self._settings.registries.get("npm")
        npm, more = _npm_registries(npmrc, self._env, configured, npm_found)
        # Credentials per file, not per merged key: for one nerf-dart the checkout's credential
        # replaces the user's whatever its kind (a checkout ``username``/``_password`` must not
        # lose to a user ``_authToken`` that npm's per-key merge would rank first).
        user = _npm_credentials(self._user_npmrc, npm)
        own = _npm_credentials(checkout, npm)
        registries = dict(self._settings.registries)
        if self._pypi is not None:
            registries["pypi"] = self._pypi
        registries["npm"] = npm.default
        registries["github"] = self._github_api
        # Lowest precedence first: a later credential for the same scope replaces an earlier.
        ranked = [
            *self._docker,
            *self._github,
            *self._pip,
            *[c for c in npm_found if c.source.lower().startswith("npm_config")],
            *[c for c in npm_found if not c.source.lower().startswith("npm_config")],
            *user.credentials,
            *own.credentials,
            *self._settings.registry_credentials,
        ]
        by_scope = {(c.scope, c.header): c for c in ranked}
        # Why a file's credential for a scope was not used, unless a source above that file
        # has a credential for the scope (then the unusable one would not have been sent).
        above_own = {c.scope for c in self._settings.registry_credentials}
        above_user = above_own | {c.scope for c in own.credentials}
        unused = {s: why for s, why in user.unused.items() if s not in above_user}
        unused |= {s: why for s, why in own.unused.items() if s not in above_own}
        covered = {c.scope.split("/", 3)[2] for c in by_scope.values()}
        # Without ~/.netrc logins there is nothing to match: the origins (which import every
        # datasource for its default base URL) are not listed.
        for url in self._origins(registries, npm) if self._netrc else ():
            # netrc names machines, not ports or schemes: a login for a host applies to every
            # registry origin on it that has no other credential (as curl and pip use it).
            root = scope_of(url).split("/", 3)
            origin = root[2]
            login = self._netrc.get(urlsplit(url).hostname or "")
            if login is not None and origin not in covered:
                covered.add(origin)
                credential = basic_credential(*login, f"{root[0]}//{origin}/", "~/.netrc")
                by_scope[(credential.scope, credential.header)] = credential
        store = StaticCredentials(by_scope.values(), unused)
        # Explanations count too: a lookup's 401 row must name this checkout's unusable line.
        sent = sorted((c.scope, c.header, c.cache_identity, c.source) for c in by_scope.values())
        signature = (tuple(sent), tuple(sorted(unused.items())))
        key = self._stores.setdefault(signature, len(self._stores))
        return CheckoutAccess(
            npm=npm,
            registries=registries,
            credentials=store,
            key=key,
            warnings=warnings + tuple(more) + tuple(user.warnings) + tuple(own.warnings),
            insecure_registries=frozenset(self._settings.insecure_registries),
            cargo=CargoConfigs(checkout_root, self._cargo_user, self._env),
            sent=tuple(by_scope.values()),
            unused=unused,
            stores=self._stores,
        )

    def _origins(self, registries: Mapping[str, str], npm: NpmRegistries) -> list[str]:
        """Every registry base URL a lookup may use (datasource defaults included)."""
        from patchula.datasource import crates  # noqa: PLC0415 - lazy: start-up

        urls = [npm.default, *npm.scopes.values(), crates.DEFAULT_API_URL]
        urls += [registries.get(i) or m.default_base_url for i, m in DATASOURCES.items()]
        for value in registries.values():
            urls += [u.strip() for u in re.split(r"[,|]", value) if u.strip()]
        return list(dict.fromkeys(urls))

    def github_budget_warning(self) -> str | None:
        """The warning for a run with GitHub lookups and no credential for the ``github`` API.

        ``None`` when one is configured (``GH_TOKEN``, ``GITHUB_TOKEN``, userinfo in
        ``--registry github=URL``). Unauthenticated, api.github.com allows 60 requests an hour
        per IP address (docs.github.com "Rate limits for the REST API"); a GitHub Enterprise
        Server sets its own. Names the variables, never a value.
        """
        api = self._github_api
        if self._default.credentials.for_url(f"{api}/repos/") is not None:
            return None
        host = urlsplit(api).hostname or api
        if api == GITHUB_API_URL:
            budget = (
                f"{host} allows 60 requests an hour without one, so GitHub lookups past that "
                "fail (naming the reset time) until the hour is over"
            )
            more = " for 5,000 requests an hour"
        else:
            budget = f"requests to {host} are anonymous, within whatever limit that server sets"
            more = ""
        return (
            f"no GitHub token (GH_TOKEN or GITHUB_TOKEN): {budget}; set GH_TOKEN or "
            f"GITHUB_TOKEN (e.g. GH_TOKEN=$(gh auth token)){more}"
        )

    def for_url(self, url: str) -> Credential | None:
        """The credential for ``GET url`` in the lookup running now (``Credentials``)."""
        active = _ACTIVE.get()
        return (self._default if active is None else active).credentials.for_url(url)

    def unused_for(self, url: str) -> str | None:
        """Why a credential configured for ``url`` was not sent, in the lookup running now."""
        active = _ACTIVE.get()
        return (self._default if active is None else active).credentials.unused_for(url)

    @staticmethod
    @contextlib.contextmanager
    def using(access: CheckoutAccess) -> Iterator[None]:
        """Within the block (this task and tasks it starts), requests use ``access``'s store."""
        token = _ACTIVE.set(access)
        try:
            yield
        finally:
            _ACTIVE.reset(token)

    def __repr__(self) -> str:
        return f"RegistryAccess({self._default.credentials!r})"


def _cargo_user(env: Mapping[str, str], home: Path | None) -> list[CargoLayer]:
    """The user's cargo files: ``$CARGO_HOME`` (default ``~/.cargo``) config, then credentials.

    Read only when ``home`` is given (as ``~/.npmrc`` is); the legacy names without
    ``.toml`` win when both exist, as cargo reads them.
    """
    if home is None:
        return []
    cargo_home = Path(env["CARGO_HOME"]) if env.get("CARGO_HOME") else home / ".cargo"
    layers: list[CargoLayer] = []
    for stem in ("config", "credentials"):
        for name in (stem, f"{stem}.toml"):
            text = _read(cargo_home / name)
            if text is not None:
                shown = f"$CARGO_HOME/{name}" if env.get("CARGO_HOME") else f"~/.cargo/{name}"
                layers.append(read_layer(text, shown))
                break
    return layers


def _inside(root: Path, path: Path) -> bool:
    """Whether ``path`` resolves inside ``root`` (a symlinked .npmrc may not leave it)."""
    try:
        path.resolve().relative_to(root.resolve())
    except (OSError, ValueError, RuntimeError):
        return False
    return True
