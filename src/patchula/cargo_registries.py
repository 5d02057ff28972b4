"""Cargo registries and source replacement, read from a checkout's ``.cargo/config.toml``.

Cargo reads ``.cargo/config.toml`` (and the legacy ``.cargo/config``, which wins when both
exist) in the current directory and every parent, nearest first, then ``$CARGO_HOME/config.toml``;
tables merge and the nearest file wins per key. patchula reads them from a ``Cargo.toml``'s
directory up to the checkout root (never the directories above it), then, as it reads
``~/.npmrc``, the user's ``$CARGO_HOME`` (default ``~/.cargo``) ``config.toml`` and
``credentials.toml``. Environment variables ``CARGO_REGISTRIES_<NAME>_INDEX`` and
``CARGO_REGISTRIES_<NAME>_TOKEN`` (``NAME`` upper-cased, ``-`` as ``_``) win over the files.

Resolution (``CargoConfig.resolve``): a dependency's ``registry = "NAME"`` (or crates.io, the
source ``crates-io``) follows ``[source.<name>] replace-with`` (a cycle is an error, never a
hang) to a source: ``[source.S] registry = URL``, ``[registries.S] index = URL``, or the
``local-registry``/``directory``/``git`` kinds, which patchula does not read. Only a sparse
index (``sparse+https://…``) can be read without git; a git index is skipped, saying so. The
token is sent as ``Authorization: <token>``, as cargo sends it (the Cargo Book, "Registry
Authentication"). Sources: https://doc.rust-lang.org/cargo/reference/config.html,
https://doc.rust-lang.org/cargo/reference/source-replacement.html,
https://doc.rust-lang.org/cargo/reference/registries.html.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from patchula.http.auth import Credential, basic_credential, redact_url, scope_of, split_userinfo

__all__ = ["CRATES_IO", "CargoConfig", "CargoLayer", "CargoSource", "env_name", "read_layer"]

CRATES_IO = "crates-io"
CONFIG_NAMES = ("config", "config.toml")  # cargo prefers the legacy name when both exist
SPARSE = "sparse+"
MAX_REPLACEMENTS = 64
# Source kinds patchula does not read, as a reason says them.
_UNREAD_KINDS = {
    "local-registry": "a local-registry source (files on disk)",
    "directory": "a directory source (vendored crates)",
    "git": "a git source",
}  # a longer chain of replace-with is treated as a cycle


@dataclass(frozen=True, slots=True)
class CargoLayer:
    """One cargo configuration file: its parsed tables, or why it could not be read."""

    source: str
    data: Mapping[str, object] = field(default_factory=dict, repr=False)
    error: str | None = None


def read_layer(text: str, source: str) -> CargoLayer:
    """Parse one cargo config file (TOML); a damaged one keeps an error naming file and line."""
    import tomllib  # noqa: PLC0415 - lazy: start-up (most checkouts have no cargo config)

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        text = str(exc)
        found = re.search(r"\(at line (\d+), column \d+\)$", text)
        line = getattr(exc, "lineno", None) or (found[1] if found else None)
        where = f"{source} line {line}" if line else source
        message = text.split(" (at ", 1)[0]
        return CargoLayer(source, error=f"{where}: not valid TOML ({message})")
    return CargoLayer(source, data)


def env_name(registry: str) -> str:
    """The environment name of a registry: ``my-reg`` → ``MY_REG`` (cargo's config env rule)."""
    return registry.upper().replace("-", "_").replace(".", "_")


@dataclass(frozen=True, slots=True)
class CargoSource:
    """Where a crate is looked up, or why it is not.

    ``index``: the sparse index base URL (no ``sparse+``, no userinfo, no trailing ``/``);
    ``None`` with no ``skip``/``error``: the run's crates.io index (``--registry crates``).
    ``alternative``: the index is not crates.io's (its web API is not crates.io's either).
    ``credentials``: what goes to ``index`` (the registry token, userinfo in its URL).
    ``note``: what the row says about the source (a replacement of crates.io).
    """

    index: str | None = None
    alternative: bool = False
    credentials: tuple[Credential, ...] = ()
    note: str | None = None
    skip: str | None = None
    error: str | None = None
    no_token: str | None = None  # what a 401 from ``index`` says when no token is configured


def _table(data: Mapping[str, object], *keys: str) -> Mapping[str, object]:
    value: object = data
    for key in keys:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value if isinstance(value, Mapping) else {}


class CargoConfig:
    """The cargo configuration layers that apply to one directory, nearest first."""

    def __init__(self, layers: list[CargoLayer], env: Mapping[str, str]) -> None:
        self.layers = layers
        self._env = env

    def _value(self, *keys: str) -> tuple[str, str] | None:
        """The nearest string value at ``keys`` and the file it is in."""
        *tables, last = keys
        for layer in self.layers:
            value = _table(layer.data, *tables).get(last)
            if isinstance(value, str):
                return value, layer.source
        return None

    def _has(self, *keys: str) -> bool:
        *tables, last = keys
        return any(last in _table(layer.data, *tables) for layer in self.layers)

    def resolve(self, registry: str | None, *, mirror_configured: bool) -> CargoSource:
        """Where a dependency on ``registry`` (``None``: crates.io) is looked up.

        ``mirror_configured``: ``--registry crates=URL`` is set; it wins over a replacement
        of crates.io. A damaged config file is an error naming it and its line.
        """
        for layer in self.layers:
            if layer.error is not None:
                return CargoSource(error=f"cargo configuration: {layer.error}")
        start = registry or CRATES_IO
        if start == CRATES_IO and mirror_configured:
            return CargoSource()
        chain = [start]
        where = ""
        while True:
            found = self._value("source", chain[-1], "replace-with")
            if found is None:
                break
            target, where = found
            if target in chain or len(chain) > MAX_REPLACEMENTS:
                cycle = " → ".join([*chain, target])
                return CargoSource(error=f"cargo source replacement cycle ({where}): {cycle}")
            chain.append(target)
        name = chain[-1]
        replaced = f"{start} replaced by '{name}' ({where})" if len(chain) > 1 else None
        if name == CRATES_IO:
            if start == CRATES_IO:
                return CargoSource()
            return CargoSource(note=replaced)
        kind = next((k for k in _UNREAD_KINDS if self._has("source", name, k)), None)
        if kind is not None:
            said = f" ({replaced})" if replaced else ""
            return CargoSource(
                skip=f"cargo source '{name}' is {_UNREAD_KINDS[kind]}{said}: not looked up"
            )
        return self._registry(start, name, replaced)

    def _registry(self, start: str, name: str, replaced: str | None) -> CargoSource:
        """The sparse index of registry ``name`` (reached from ``start``), or why not."""
        url = self._index(name)
        if url is None:
            return CargoSource(
                skip=f"alternative registry '{name}' is not defined ([registries.{name}] index"
                f" in .cargo/config.toml, or CARGO_REGISTRIES_{env_name(name)}_INDEX)"
            )
        index, origin = url
        if not index.startswith(SPARSE):
            return CargoSource(
                skip=f"registry '{name}' has a git index ({redact_url(index)}, {origin}):"
                " patchula reads only sparse indexes (sparse+https://…)"
            )
        bare, user, password = split_userinfo(index.removeprefix(SPARSE).strip())
        if not bare.startswith(("https://", "http://")):
            return CargoSource(skip=f"registry '{name}' index ({origin}) is not an http(s) URL")
        bare = bare.rstrip("/")
        credentials: list[Credential] = []
        if user is not None:
            credentials.append(basic_credential(user, password, f"{bare}/", f"{origin} index URL"))
        token = self._token(name)
        no_token = None
        if token is not None:
            value, source = token
            credentials.append(Credential("Authorization", value, source, scope_of(f"{bare}/")))
        elif not credentials:
            no_token = (
                f"no token configured for cargo registry '{name}' (set"
                f" CARGO_REGISTRIES_{env_name(name)}_TOKEN, or [registries.{name}] token in"
                " $CARGO_HOME/credentials.toml)"
            )
        note = f"{replaced}: looked up on {redact_url(bare)}" if replaced else None
        return CargoSource(bare, start != CRATES_IO, tuple(credentials), note, no_token=no_token)

    def _index(self, name: str) -> tuple[str, str] | None:
        variable = f"CARGO_REGISTRIES_{env_name(name)}_INDEX"
        if self._env.get(variable, "").strip():
            return self._env[variable].strip(), variable
        return self._value("source", name, "registry") or self._value("registries", name, "index")

    def _token(self, name: str) -> tuple[str, str] | None:
        variable = f"CARGO_REGISTRIES_{env_name(name)}_TOKEN"
        if self._env.get(variable, "").strip():
            return self._env[variable].strip(), variable
        found = self._value("registries", name, "token")
        if found is not None and found[0].strip():
            return found[0].strip(), found[1]
        return None


class CargoConfigs:
    """The cargo configuration of one checkout, read per directory on demand (and kept).

    ``root`` ``None`` (a remote repository): only the user's files and the environment.
    ``user`` holds the ``$CARGO_HOME`` layers (config, then credentials), lowest precedence.
    """

    def __init__(self, root: Path | None, user: list[CargoLayer], env: Mapping[str, str]) -> None:
        self._root = root
        self._user = user
        self._env = env
        self._layers: dict[str, list[CargoLayer]] = {}
        self._configs: dict[str, CargoConfig] = {}

    def for_file(self, file: str) -> CargoConfig:
        """The configuration for the manifest ``file`` (relative to the root, POSIX)."""
        directory = posixpath.dirname(file)
        config = self._configs.get(directory)
        if config is None:
            layers: list[CargoLayer] = []
            current = directory
            while True:
                layers += self._own(current)
                if not current:
                    break
                current = posixpath.dirname(current)
            config = CargoConfig([*layers, *self._user], self._env)
            self._configs[directory] = config
        return config

    def _own(self, directory: str) -> list[CargoLayer]:
        if directory in self._layers:
            return self._layers[directory]
        found: list[CargoLayer] = []
        if self._root is not None:
            from patchula.credentials import _inside, _read  # noqa: PLC0415 - cycle

            for name in CONFIG_NAMES:
                relative = posixpath.join(directory, ".cargo", name)
                path = self._root / relative
                if not _inside(self._root, path):
                    continue
                text = _read(path)
                if text is not None:
                    found.append(read_layer(text, f"./{relative}"))
                    break  # the legacy ``config`` wins over ``config.toml``
        self._layers[directory] = found
        return found
