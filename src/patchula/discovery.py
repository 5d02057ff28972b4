"""Walks a checkout and finds the files the managers read, by path alone.

Skips ``.git``, ``node_modules``, virtual environments, the configured ignore globs (Renovate's
recommended ``ignorePaths`` by default) and everything ``.gitignore`` files exclude (each
``.gitignore`` applies to its own directory and below, with git's wildmatch semantics via
``pathspec``). Symlinked directories are never entered; a symlinked file is read only when its
target stays inside the checkout.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from patchula.manager import MANAGERS

ALWAYS_SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".tox",
        ".nox",
        ".venv",
        "venv",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        "site-packages",
        "bower_components",
    }
)


# Lockfiles patchula knows of but cannot read yet, by the datasource of their packages. Their
# manifests are still scanned; the report says current came from the range, not the lock.
UNREAD_LOCKFILES = {
    "yarn.lock": "npm",
    "pnpm-lock.yaml": "npm",
    "bun.lock": "npm",
    "bun.lockb": "npm",
    "Pipfile.lock": "pypi",
    "pdm.lock": "pypi",
}


@dataclass(frozen=True, slots=True)
class Found:
    """A file one manager will read; ``path`` is repository-relative with POSIX separators."""

    path: str
    manager: str


@dataclass(slots=True)
class Discovery:
    """What a walk found, and what it refused (``(path, reason)``: symlinks out of the tree).

    ``unread_lockfiles`` maps lockfiles of formats not read yet to their datasource id.
    """

    files: list[Found] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    unread_lockfiles: dict[str, str] = field(default_factory=dict)


def discover(root: Path, ignore_paths: Iterable[str]) -> Discovery:
    """Walk ``root`` and return the manifest files in a stable (sorted) order.

    ``ignore_paths`` are gitwildmatch globs matched against repository-relative paths
    (``**/tests/**``). Never raises for unreadable directories: they are listed in ``refused``.
    """
    walk = Walk(root, ignore_paths)
    for _ in walk.steps():
        pass
    return walk.result


class Walk:
    """A discovery walk that can pause after each directory (``steps``), then its ``result``.

    The event loop drives it in short slices, so a scan walks small checkouts without handing
    them to a worker thread (an I/O-bound thread waits for the GIL behind a busy event loop for
    a switch interval at every system call) and still stays responsive on a huge one.
    """

    def __init__(self, root: Path, ignore_paths: Iterable[str]) -> None:
        self._root = root.resolve()
        self._ignore = _ignore_spec(tuple(ignore_paths))
        self.result = Discovery()

    def steps(self) -> Iterator[None]:
        """Walk, yielding after each directory; ``result`` is complete when this ends."""
        result = self.result
        for item in _walk(self._root, self._root, self._ignore, [], result):
            if item is not None:
                result.files.append(Found(*item))
            yield
        result.files.sort(key=lambda f: (f.path.count("/"), f.path, f.manager))


@functools.lru_cache(maxsize=64)
def _ignore_spec(ignore_paths: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    """The compiled ``ignore-paths`` globs (the same for every repository of a run)."""
    return pathspec.GitIgnoreSpec.from_lines(list(ignore_paths))


def _walk(  # noqa: C901 - one pass over a directory: prune, ignore, symlink and match
    root: Path,
    directory: Path,
    ignore: pathspec.GitIgnoreSpec,
    gitignores: list[tuple[str, pathspec.GitIgnoreSpec]],
    result: Discovery,
) -> Iterator[tuple[str, str] | None]:
    """Yield ``(path, manager)`` for each manifest, and ``None`` after each directory read."""
    rel_dir = directory.relative_to(root).as_posix()
    prefix = "" if rel_dir == "." else rel_dir + "/"
    specs = gitignores
    gitignore = directory / ".gitignore"
    if gitignore.is_file() and not gitignore.is_symlink():
        try:
            lines = gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
            specs = [*gitignores, (prefix, pathspec.GitIgnoreSpec.from_lines(lines))]
        except OSError as exc:
            result.refused.append((prefix + ".gitignore", f"unreadable: {exc.strerror}"))
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError as exc:
        result.refused.append((rel_dir, f"unreadable directory: {exc.strerror}"))
        return
    yield None
    for entry in entries:
        rel = prefix + entry.name
        if entry.is_dir(follow_symlinks=False):
            if entry.name in ALWAYS_SKIPPED_DIRS or _is_virtualenv(entry.path):
                continue
            if ignore.match_file(rel + "/") or _gitignored(specs, rel + "/"):
                continue
            yield from _walk(root, Path(entry.path), ignore, specs, result)
            continue
        if entry.is_symlink():
            if not _inside(root, Path(entry.path)):
                if any(m.matches(rel) for m in MANAGERS.values()):
                    result.refused.append((rel, "symlink pointing outside the checkout"))
                continue
            if Path(entry.path).is_dir():
                continue  # symlinked directories are never entered
        elif not entry.is_file(follow_symlinks=False):
            continue
        if ignore.match_file(rel) or _gitignored(specs, rel):
            continue
        if entry.name in UNREAD_LOCKFILES:
            result.unread_lockfiles[rel] = UNREAD_LOCKFILES[entry.name]
        for manager_id, manager in MANAGERS.items():
            if manager.matches(rel):
                yield rel, manager_id


def _gitignored(specs: list[tuple[str, pathspec.GitIgnoreSpec]], rel: str) -> bool:
    for prefix, spec in specs:
        if rel.startswith(prefix) and spec.match_file(rel[len(prefix) :]):
            return True
    return False


def _is_virtualenv(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "pyvenv.cfg"))  # noqa: PTH113, PTH118 - hot loop on DirEntry paths


def _inside(root: Path, path: Path) -> bool:
    try:
        path.resolve().relative_to(root)
    except (ValueError, OSError):
        return False
    return True
