"""Walks a checkout and finds the files the managers read, by path alone.

Skips ``.git``, ``node_modules``, virtual environments, the configured ignore globs (Renovate's
recommended ``ignorePaths`` by default) and what ``.gitignore`` files exclude (each
``.gitignore`` applies to its own directory and below, with git's wildmatch semantics via
``pathspec``) unless git tracks it: gitignore(5) says "files already tracked by Git are not
affected", so in a git checkout the walk asks git once which of the files it skipped for a
``.gitignore`` are tracked (``Walk.add_tracked``). Symlinked directories are never entered; a
symlinked file is read only when its target stays inside the checkout. Only regular files are
ever read (``read_regular``): a FIFO, socket, device, directory or symlink loop named like a
manifest is refused with a reason.
"""

from __future__ import annotations

import errno
import functools
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, cast

import msgspec

from patchula.errors import ManifestError
from patchula.manager.paths import PathRule, rules

if TYPE_CHECKING:
    import pathspec

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
    "bun.lockb": "npm",
}
# Why one of them is not read, when there is more to say than that its format is not read yet.
UNREAD_REASONS = {
    "bun.lockb": (
        "bun.lockb is bun's binary lockfile and is not read: current versions of its manifests"
        " are resolved from their ranges; run `bun install --save-text-lockfile` to write"
        " bun.lock (the default since bun 1.2)"
    ),
}


# Manifests patchula never reads, by the datasource of what they declare: ``setup.py`` is
# executable code (setuptools runs it to learn its requirements; reading them would mean
# running it). The scan says so for one whose directory declares no requirement elsewhere.
UNREAD_MANIFESTS = {"setup.py": "pypi"}


# A .gitignore larger than this is not read (the largest real ones are tens of KiB).
GITIGNORE_MAX_BYTES = 1024 * 1024
# Directory entries a walk looks at inside ``ignore-paths`` directories of one repository, to
# say which manifests the globs kept out (``Discovery.ignored``): a vendored tree of tens of
# thousands of files is not walked to the end for a count.
IGNORED_ENTRIES_MAX = 10_000


class Found(msgspec.Struct, frozen=True):
    """A file one manager will read; ``path`` is repository-relative with POSIX separators."""

    path: str
    manager: str


class Discovery(msgspec.Struct):
    """What a walk found, and what it refused (``(path, reason)``: symlinks out of the tree).

    ``unread_lockfiles`` maps lockfiles of formats not read yet to their datasource id;
    ``unread_manifests`` lists the manifests never read (``UNREAD_MANIFESTS``) it found.
    ``ignored`` are the files a manager would read that an ``ignore-paths`` glob kept out (the
    glob matched the file or a directory above it), in walk order; ``ignored_complete`` is
    ``False`` when a walk stopped looking inside ignored directories after
    ``IGNORED_ENTRIES_MAX`` entries (a vendored tree), so there may be more. Nothing in
    ``ALWAYS_SKIPPED_DIRS``, a virtual environment or a ``.gitignore``d path is counted.
    """

    files: list[Found] = msgspec.field(default_factory=list)
    refused: list[tuple[str, str]] = msgspec.field(default_factory=list)
    unread_lockfiles: dict[str, str] = msgspec.field(default_factory=dict)
    ignored: list[str] = msgspec.field(default_factory=list)
    ignored_complete: bool = True
    # Entries looked at inside ignored directories so far (bounded by ``IGNORED_ENTRIES_MAX``).
    ignored_examined: int = 0
    unread_manifests: list[str] = msgspec.field(default_factory=list)


def discover(
    root: Path, ignore_paths: Iterable[str], managers: Iterable[str] | None = None
) -> Discovery:
    """Walk ``root`` and return the manifest files in a stable (sorted) order.

    ``ignore_paths`` are gitwildmatch globs matched against repository-relative paths
    (``**/tests/**``). ``managers`` (``MANAGERS`` ids; default: all) are the ones asked about
    each file; files only the others read are not found, refused or warned about. Never
    raises for unreadable directories: they are listed in ``refused``.
    """
    walk = Walk(root, ignore_paths, managers)
    for _ in walk.steps():
        pass
    walk.add_tracked()
    return walk.result


class Walk:
    """A discovery walk that can pause after each directory (``steps``), then its ``result``.

    The event loop drives it in short slices, so a scan walks small checkouts without handing
    them to a worker thread (an I/O-bound thread waits for the GIL behind a busy event loop for
    a switch interval at every system call) and still stays responsive on a huge one. The
    walk ends with ``add_tracked``, which runs git (blocking, bounded) only when ``asks_git``.
    """

    def __init__(
        self, root: Path, ignore_paths: Iterable[str], managers: Iterable[str] | None = None
    ) -> None:
        self._root = root.resolve()
        self._ignore = _IgnoreGlobs(tuple(ignore_paths))
        # Path rules only: a manager's module is imported when a file it reads is extracted.
        self._managers = rules(managers)
        # What only a .gitignore skipped: files a manager would read, and directories (``/``).
        self._gitignored: list[str] = []
        self.result = Discovery()

    def steps(self) -> Iterator[None]:
        """Walk, yielding after each directory; ``result`` is complete once ``add_tracked`` ran."""
        result = self.result
        walk = _walk(
            self._root, self._root, self._ignore, [], result, self._managers, self._gitignored
        )
        for item in walk:
            if item is not None:
                result.files.append(Found(*item))
            yield
        _sort(result)

    @property
    def asks_git(self) -> bool:
        """Whether ``add_tracked`` runs git: the walk skipped something for a ``.gitignore``."""
        return bool(self._gitignored)

    def add_tracked(self) -> None:
        """Add what the walk skipped only for a ``.gitignore`` and git tracks (blocking).

        One bounded ``git ls-files`` (``tracked_paths``) over the skipped files and
        directories. A tracked file found this way, inside an ignored directory too, is
        discovered as the walk discovers any file, with every other rule still in force:
        ``ALWAYS_SKIPPED_DIRS``, virtual environments, the ``ignore-paths`` globs, symlinks and
        non-regular files. Without git, outside a repository or on any git failure nothing is
        added. Costs nothing when nothing was skipped for a ``.gitignore``.
        """
        if not self._gitignored:
            return
        skipped, self._gitignored = self._gitignored, []
        tracked = tracked_paths(self._root, skipped)
        if tracked:
            ignored_dirs = {p.rstrip("/") for p in skipped if p.endswith("/")}
            _Tracked(self._root, self._ignore, self._managers, ignored_dirs, self.result).add(
                tracked
            )
            _sort(self.result)


def _sort(result: Discovery) -> None:
    result.files.sort(key=lambda f: (f.path.count("/"), f.path, f.manager))
    result.ignored.sort(key=lambda path: (path.count("/"), path))
    result.unread_manifests.sort(key=lambda path: (path.count("/"), path))


class _Tracked:
    """The tracked files a walk skipped for a ``.gitignore``, added to its result."""

    def __init__(
        self,
        root: Path,
        ignore: _IgnoreGlobs,
        managers: Mapping[str, PathRule],
        ignored_dirs: set[str],
        result: Discovery,
    ) -> None:
        self._root = root
        self._ignore = ignore
        self._managers = managers
        self._ignored_dirs = ignored_dirs  # the directories a .gitignore skipped, no ``/``
        self._result = result
        # Per directory: whether the walk enters it; and the ones it did not enter before.
        self._enters: dict[str, bool] = {"": True}
        self._new: dict[str, bool] = {"": False}

    def add(self, tracked: Iterable[str]) -> None:
        """Add the ``tracked`` files and refuse what the walk refuses, in the walk's order."""
        managers = self._managers.values()
        for rel in sorted(tracked, key=lambda p: p.split("/")):
            directory, _, name = rel.rpartition("/")
            wanted = name in UNREAD_LOCKFILES or any(m.matches(rel) for m in managers)
            if not self._enters_directory(directory) or not wanted:
                continue
            if self._ignore.match_file(rel):
                continue
            path = self._root / rel
            try:
                mode = path.lstat().st_mode
            except OSError:
                continue  # deleted from the work tree: the walk does not see it either
            if stat.S_ISLNK(mode):
                refusal = _symlink_refusal(self._root, path)
                if refusal is not None:
                    _refuse_named(rel, refusal, self._result, self._managers)
                    continue
            elif stat.S_ISDIR(mode):
                continue  # a submodule's gitlink: the walk enters it, its files are not ours
            elif not stat.S_ISREG(mode):
                _refuse_named(rel, not_regular(mode), self._result, self._managers)
                continue
            self._result.files.extend(
                Found(*item) for item in _regular_file(rel, name, self._result, self._managers)
            )

    def _enters_directory(self, directory: str) -> bool:
        """Whether the walk, ignoring no tracked file, enters ``directory`` (refusing its name)."""
        known = self._enters.get(directory)
        if known is not None:
            return known
        parent, _, name = directory.rpartition("/")
        enters = self._enters_directory(parent)
        new = self._new[parent] or directory in self._ignored_dirs
        if enters and new:  # a directory of a walked one was checked by the walk already
            path = self._root / directory
            enters = not (
                _skips_directory(name, directory, self._ignore)
                or not path.is_dir()
                or path.is_symlink()
                or _is_virtualenv(str(path))
            )
            if enters:
                _refuse_directory(directory, name, self._result, self._managers)
        self._enters[directory], self._new[directory] = enters, new
        return enters


# A ``git ls-files`` pathspec list longer than this (bytes) is not passed: git lists every
# tracked file below the walked directory instead (still one command, its output bounded).
MAX_PATHSPEC_BYTES = 64 * 1024


def tracked_paths(root: Path, paths: Iterable[str]) -> set[str] | None:
    """Which of ``paths`` git tracks, as paths relative to ``root``; ``None``: git cannot say.

    ``paths`` are ``root``-relative POSIX paths, a directory ``/``-ended (every tracked file
    below it is given). One ``git ls-files -z --cached --full-name`` with them as literal
    pathspecs (``GIT_LITERAL_PATHSPECS=1``; past ``MAX_PATHSPEC_BYTES`` none, and the answer
    is filtered), run by ``patchula.git.run`` (bounded, hooks and fsmonitor
    off, the caller's ``GIT_*`` dropped) from ``root`` with the work tree at the nearest
    directory holding ``.git`` (``root`` may lie below it). ``None`` without a ``.git`` above
    ``root``, without git, or when git fails (not a repository, dubious ownership, a timeout,
    too much output).
    """
    from patchula import git  # noqa: PLC0415 - lazy: start-up (a walk that skipped nothing)

    top = next((d for d in (root, *root.parents) if os.path.lexists(d / ".git")), None)
    executable = git.executable() if top is not None else None
    if top is None or executable is None:
        return None
    specs = list(dict.fromkeys(paths))
    if not specs:
        return set()
    args = ["ls-files", "-z", "--cached", "--full-name", "--"]
    if sum(len(spec) + 1 for spec in specs) <= MAX_PATHSPEC_BYTES:
        args += specs
    out = git.run(executable, root, args, work_tree=top, env={"GIT_LITERAL_PATHSPECS": "1"})
    if out is None:
        return None
    prefix = root.relative_to(top).as_posix()
    prefix = "" if prefix == "." else prefix + "/"
    asked = set(specs)
    tracked: set[str] = set()
    for raw in out.split(b"\0"):
        name = os.fsdecode(raw)
        if not name.startswith(prefix) or name == prefix:
            continue
        rel = name[len(prefix) :]
        # Only what was asked about (all of it, when the pathspecs were too long to pass).
        parts = rel.split("/")
        if rel in asked or any("/".join(parts[:i]) + "/" in asked for i in range(1, len(parts))):
            tracked.add(rel)
    return tracked


class _Matcher(Protocol):
    def match_file(self, file: str) -> bool: ...


@functools.lru_cache(maxsize=64)
def _ignore_spec(ignore_paths: tuple[str, ...]) -> _Matcher:
    """The compiled ``ignore-paths`` globs (the same for every repository of a run).

    Globs that all name a directory anywhere (``**/NAME/**``, as every default one does) are
    matched by ``NamedDirectories``, without importing ``pathspec``; any other list by
    ``pathspec``'s ``GitIgnoreSpec``.
    """
    names = [_named_directory(glob) for glob in ignore_paths]
    if names and all(names):
        return NamedDirectories(cast("list[str]", names))
    return _gitignore_spec(ignore_paths)


# A glob ``**/NAME/**`` whose NAME is a plain file name: no wildmatch character, escape, space
# (git strips trailing spaces), leading ``!`` or ``#``; ``.`` and ``..`` are not plain.
_NAMED_DIRECTORY = re.compile(r"\*\*/([A-Za-z0-9._-]+)/\*\*")


def _named_directory(glob: str) -> str | None:
    """NAME when ``glob`` is ``**/NAME/**`` with a plain NAME (``_NAMED_DIRECTORY``), else None."""
    match = _NAMED_DIRECTORY.fullmatch(glob)
    return match[1] if match and match[1] not in {".", ".."} else None


class NamedDirectories:
    """``GitIgnoreSpec.from_lines(["**/NAME/**", ...]).match_file`` for plain directory names.

    What ``pathspec`` (1.x) does for those lines, with one regex: the path is made relative (one
    leading ``/``, else one leading ``./``, removed) and matches when some NAME is a directory
    in it, at its start or after a ``/`` with at least one character before (pathspec's
    ``^(?:.+/)?NAME/``; ``.`` stops at a newline). A test holds the two equal on generated
    paths.
    """

    def __init__(self, names: Iterable[str]) -> None:
        alternatives = "|".join(re.escape(name) for name in names)
        self._match = re.compile(f"(?:.+/)?(?:{alternatives})/").match

    def match_file(self, file: str) -> bool:
        """Whether ``file`` (a ``/``-separated path) lies in a directory of one of the names."""
        if file.startswith("/"):
            file = file[1:]
        elif file.startswith("./"):
            file = file[2:]
        return self._match(file) is not None


def _gitignore_spec(lines: Iterable[str]) -> pathspec.GitIgnoreSpec:
    """``lines`` compiled with git's wildmatch semantics."""
    import pathspec  # noqa: PLC0415 - lazy: start-up (a checkout without entries matches nothing)

    return pathspec.GitIgnoreSpec.from_lines(list(lines))


class _IgnoreGlobs:
    """The ``ignore-paths`` globs, compiled when the walk meets its first entry.

    A checkout without entries never imports ``pathspec`` nor compiles them (issue 12:
    start-up); the compiled spec is shared by every walk of a run (``_ignore_spec``).
    """

    def __init__(self, globs: tuple[str, ...]) -> None:
        self._globs = globs
        self._spec: _Matcher | None = None

    def match_file(self, rel: str) -> bool:
        """Whether ``rel`` (a ``/``-separated path, ``/``-ended for a directory) is ignored."""
        if self._spec is None:
            self._spec = _ignore_spec(self._globs)
        return self._spec.match_file(rel)


def _walk(
    root: Path,
    directory: Path,
    ignore: _IgnoreGlobs,
    gitignores: list[tuple[str, pathspec.GitIgnoreSpec]],
    result: Discovery,
    managers: Mapping[str, PathRule],
    gitignored: list[str],
) -> Iterator[tuple[str, str] | None]:
    """Yield ``(path, manager)`` per file ``managers`` read; ``None`` after each directory.

    What only a ``.gitignore`` skips is noted in ``gitignored`` (``Walk.add_tracked``).
    """
    rel_dir = directory.relative_to(root).as_posix()
    prefix = "" if rel_dir == "." else rel_dir + "/"
    specs = gitignores
    gitignore = directory / ".gitignore"
    if gitignore.is_file() and not gitignore.is_symlink():
        try:
            data = read_regular(gitignore, prefix + ".gitignore", GITIGNORE_MAX_BYTES)
            lines = data.decode("utf-8", errors="replace").splitlines()
            specs = [*gitignores, (prefix, _gitignore_spec(lines))]
        except ManifestError as exc:
            result.refused.append((exc.file, f"unreadable: {exc.message}"))
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
            if _kept_out(entry, rel, ignore, specs, result, managers):
                continue
            if _gitignored(specs, rel + "/"):
                gitignored.append(rel + "/")
                continue
            _refuse_directory(rel, entry.name, result, managers)
            yield from _walk(root, Path(entry.path), ignore, specs, result, managers, gitignored)
            continue
        if _kept_out(entry, rel, ignore, specs, result, managers):
            continue
        if _gitignored(specs, rel):
            if _named_unread(entry.name) or any(m.matches(rel) for m in managers.values()):
                gitignored.append(rel)
            continue
        if entry.is_symlink():
            refusal = _symlink_refusal(root, Path(entry.path))
            if refusal is not None:
                _refuse_named(rel, refusal, result, managers)
                continue
        elif not entry.is_file(follow_symlinks=False):
            _refuse_named(rel, not_regular(_lstat_mode(entry)), result, managers)
            continue
        yield from _regular_file(rel, entry.name, result, managers)


def _kept_out(
    entry: os.DirEntry[str],
    rel: str,
    ignore: _IgnoreGlobs,
    specs: list[tuple[str, pathspec.GitIgnoreSpec]],
    result: Discovery,
    managers: Mapping[str, PathRule],
) -> bool:
    """Whether an ignore-paths glob keeps ``entry`` (at ``rel``) out; what it held is noted.

    The manifests kept out go to ``result.ignored`` (a directory's by ``_note_ignored_tree``),
    unless a ``.gitignore`` would have skipped them anyway.
    """
    if entry.is_dir(follow_symlinks=False):
        if not ignore.match_file(rel + "/"):
            return False
        if not _gitignored(specs, rel + "/"):
            _note_ignored_tree(entry.path, rel, specs, result, managers)
        return True
    if not ignore.match_file(rel):
        return False
    if not _gitignored(specs, rel) and any(m.matches(rel) for m in managers.values()):
        result.ignored.append(rel)
    return True


def _note_ignored_tree(
    path: str,
    rel: str,
    specs: list[tuple[str, pathspec.GitIgnoreSpec]],
    result: Discovery,
    managers: Mapping[str, PathRule],
) -> None:
    """Add to ``result.ignored`` the files a manager reads under the ignored directory ``rel``.

    Depth first, names sorted, as the walk goes; symlinks are not followed, and what the walk
    never enters (``ALWAYS_SKIPPED_DIRS``, virtual environments, ``.gitignore``d paths of the
    directories above) is not counted. At most ``IGNORED_ENTRIES_MAX`` entries per repository
    are looked at (then ``ignored_complete`` is ``False``); an unreadable directory is passed
    over (nothing in it would have been read either way).
    """
    stack = [(path, rel)]
    while stack:
        directory, prefix = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        if result.ignored_examined + len(entries) > IGNORED_ENTRIES_MAX:
            result.ignored_complete = False
            return
        result.ignored_examined += len(entries)
        subdirectories = []
        for entry in entries:
            inner = f"{prefix}/{entry.name}"
            if entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                if (
                    entry.name not in ALWAYS_SKIPPED_DIRS
                    and not _is_virtualenv(entry.path)
                    and not _gitignored(specs, inner + "/")
                ):
                    subdirectories.append((entry.path, inner))
            elif any(m.matches(inner) for m in managers.values()) and not _gitignored(specs, inner):
                result.ignored.append(inner)
        stack.extend(reversed(subdirectories))


def _skips_directory(name: str, rel: str, ignore: _IgnoreGlobs) -> bool:
    """Whether the directory ``rel`` (named ``name``) is never entered, by name or ignore glob.

    The rule every source shares (a walked checkout, a remote tree); virtual environments are
    found by their ``pyvenv.cfg`` as each source can, ``.gitignore`` only in a checkout.
    """
    return name in ALWAYS_SKIPPED_DIRS or ignore.match_file(rel + "/")


def _named_unread(name: str) -> bool:
    """Whether a file named ``name`` is noted though no manager reads it (lockfile, setup.py)."""
    return name in UNREAD_LOCKFILES or name in UNREAD_MANIFESTS


def _regular_file(
    rel: str, name: str, result: Discovery, managers: Mapping[str, PathRule]
) -> Iterator[tuple[str, str]]:
    """Yield ``(rel, manager)`` for each manager reading the regular file ``rel``.

    A lockfile of a format not read yet is noted in ``result.unread_lockfiles``, a manifest
    never read in ``result.unread_manifests`` (when a manager of its datasource is asked).
    """
    unread = UNREAD_LOCKFILES.get(name)
    if unread is not None and any(unread == m.datasource for m in managers.values()):
        result.unread_lockfiles[rel] = unread
    never = UNREAD_MANIFESTS.get(name)
    if never is not None and any(never == m.datasource for m in managers.values()):
        result.unread_manifests.append(rel)
    for manager_id, manager in managers.items():
        if manager.matches(rel):
            yield rel, manager_id


# Why a symlink of a path list is not read when its caller cannot resolve it (``discover_paths``
# without ``symlink``).
REMOTE_SYMLINK = "symlink (not followed in a remote repository)"


def directory_skipper(ignore_paths: Iterable[str]) -> Callable[[str], bool]:
    """``skip(rel)``: whether a directory ``rel`` of a path list is never entered.

    By name (``ALWAYS_SKIPPED_DIRS``) or ``ignore_paths`` glob, as in a walk; what a remote
    tree reader prunes while listing (a virtual environment is known only once listed).
    """
    ignore = _IgnoreGlobs(tuple(ignore_paths))

    def skip(rel: str) -> bool:
        return bool(rel) and _skips_directory(rel.rpartition("/")[2], rel, ignore)

    return skip


def discover_paths(
    paths: Iterable[tuple[str, bool]],
    ignore_paths: Iterable[str],
    managers: Iterable[str] | None = None,
    symlink: Callable[[str], str | None] | None = None,
) -> Discovery:
    """The discovery of a repository known by its path list (a remote tree), as a walk finds.

    ``paths`` are ``(repository-relative POSIX path, is_symlink)`` of every file (no
    directories). The walk's rules apply: ``ALWAYS_SKIPPED_DIRS``, the ``ignore_paths`` globs,
    virtual environments (a directory holding ``pyvenv.cfg``), directories named like a
    manifest refused, unread lockfiles noted. A symlink a manager would read (or an unread
    lockfile's) is asked about: ``symlink(path)`` says why it is not read (the walk's words,
    ``tree_symlink_refusal``), ``None`` when it is found as the file it names, as a walk finds
    one inside the checkout; without ``symlink`` it is refused (``REMOTE_SYMLINK``).
    ``.gitignore`` has no meaning here: it decides what a checkout holds, and a commit's tree
    holds only what was committed. The order is the walk's (depth first, names sorted), so a
    remote repository reports like its checkout.
    """
    ignore = _IgnoreGlobs(tuple(ignore_paths))
    chosen = rules(managers)
    listed = sorted(paths, key=lambda item: item[0].split("/"))
    files = {path for path, _ in listed}
    result = Discovery()
    # Why a directory is not entered: "" it is, "glob" an ignore-paths glob (its manifests are
    # ``ignored``), "never" by name or as a virtual environment, or below such a directory.
    skipped: dict[str, str] = {"": ""}

    def skips(directory: str) -> str:
        known = skipped.get(directory)
        if known is None:
            parent, _, name = directory.rpartition("/")
            known = skips(parent)
            if known != "never":
                if name in ALWAYS_SKIPPED_DIRS or f"{directory}/pyvenv.cfg" in files:
                    known = "never"
                elif not known and ignore.match_file(directory + "/"):
                    known = "glob"
            if not known:
                _refuse_directory(directory, name, result, chosen)
            skipped[directory] = known
        return known

    for path, is_link in listed:
        directory, _, name = path.rpartition("/")
        why = skips(directory)
        if why or ignore.match_file(path):
            if why != "never" and any(m.matches(path) for m in chosen.values()):
                result.ignored.append(path)
            continue
        if is_link:
            if not _named_unread(name) and not any(m.matches(path) for m in chosen.values()):
                continue  # nobody reads it: never resolved (its target may cost a request)
            refusal = REMOTE_SYMLINK if symlink is None else symlink(path)
            if refusal is not None:
                _refuse_named(path, refusal, result, chosen)
                continue
        result.files.extend(Found(*item) for item in _regular_file(path, name, result, chosen))
    _sort(result)
    return result


def _gitignored(specs: list[tuple[str, pathspec.GitIgnoreSpec]], rel: str) -> bool:
    for prefix, spec in specs:
        if rel.startswith(prefix) and spec.match_file(rel[len(prefix) :]):
            return True
    return False


def _is_virtualenv(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "pyvenv.cfg"))  # noqa: PTH113, PTH118 - hot loop on DirEntry paths


def _refuse_named(
    rel: str, reason: str, result: Discovery, managers: Mapping[str, PathRule]
) -> None:
    """Refuse ``rel`` with ``reason`` when a manager would read it; anything else is skipped."""
    if any(m.matches(rel) for m in managers.values()):
        result.refused.append((rel, reason))


def _refuse_directory(
    rel: str, name: str, result: Discovery, managers: Mapping[str, PathRule]
) -> None:
    """Refuse the directory ``rel`` when it bears a manifest's file name (``package.json/``).

    Only names with an extension count: ``dockerfiles/``, which Renovate's loose
    ``Dockerfile*`` pattern names, is an ordinary folder and is walked without a word.
    """
    if "." in name.lstrip("."):
        _refuse_named(rel, "not a regular file (directory)", result, managers)


def _lstat_mode(entry: os.DirEntry[str]) -> int:
    try:
        return entry.stat(follow_symlinks=False).st_mode
    except OSError:
        return 0


def _symlink_refusal(root: Path, path: Path) -> str | None:
    """Why the symlink ``path`` is not read, or ``None`` when it names a regular file inside.

    A dangling link is left to the reader (it says "file not found"). ``Path.resolve`` raises
    ``RuntimeError`` on a loop in Python 3.11 (``OSError`` from 3.13), so both are a loop here.
    """
    try:
        target = path.resolve()
    except RuntimeError:
        return "symlink loop"
    except OSError as exc:
        return "symlink loop" if exc.errno == errno.ELOOP else f"unreadable: {exc.strerror}"
    try:
        target.relative_to(root)
    except ValueError:
        return "symlink pointing outside the checkout"
    try:
        mode = os.stat(target).st_mode  # noqa: PTH116 - the mode of an already resolved path
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symlink loop"
        return None
    if stat.S_ISDIR(mode):
        return "symlinked directory (never entered)"
    if not stat.S_ISREG(mode):
        return not_regular(mode)
    return None


# The most symlinks one path resolution follows; more is a loop (Linux's limit, 40, as
# path_resolution(7) gives it).
MAX_SYMLINK_HOPS = 40


class TreePath(msgspec.Struct, frozen=True):
    """Where a path of a path list leads once its symlinks are followed (``resolve_tree_path``).

    ``path``: the repository-relative POSIX path reached (``""`` the root; it may name
    nothing), or ``None`` with ``failure``: ``outside`` (``..`` above the root, or an absolute
    target), ``loop`` (over ``MAX_SYMLINK_HOPS`` links), ``pending`` (``link``: a symlink
    whose target is not known yet).
    """

    path: str | None
    failure: Literal["outside", "loop", "pending"] | None = None
    link: str | None = None


def resolve_tree_path(
    rel: str, is_link: Callable[[str], bool], target_of: Callable[[str], str | None]
) -> TreePath:
    """Follow the symlinks of ``rel`` in a path list, component by component, as ``realpath``.

    ``is_link(path)`` says whether ``path`` is a symlink, ``target_of(link)`` its target (the
    link's content: a path relative to its directory, or absolute), ``None`` when not known
    yet. A component that names nothing is kept, and ``..`` then drops it, as
    ``os.path.realpath`` does; so a path without symlinks resolves to its normal form.
    """
    if rel.startswith("/"):
        return TreePath(None, "outside")
    parts: list[str] = []
    todo = rel.split("/")[::-1]  # a stack: the next component last
    hops = 0
    while todo:
        part = todo.pop()
        if part in {"", "."}:
            continue
        if part == "..":
            if not parts:
                return TreePath(None, "outside")
            parts.pop()
            continue
        candidate = "/".join([*parts, part])
        if not is_link(candidate):
            parts.append(part)
            continue
        target = target_of(candidate)
        if target is None:
            return TreePath(None, "pending", candidate)
        hops += 1
        if hops > MAX_SYMLINK_HOPS:
            return TreePath(None, "loop")
        if target.startswith("/"):  # absolute: only a checkout at that very place holds it
            return TreePath(None, "outside")
        todo.extend(target.split("/")[::-1])
    return TreePath("/".join(parts))


def tree_symlink_refusal(resolved: TreePath, is_dir: Callable[[str], bool]) -> str | None:
    """Why a symlink of a path list that resolved to ``resolved`` is not read, or ``None``.

    The walk's words for a checkout's symlink (``_symlink_refusal``): out of the tree, a
    loop, a directory. ``None`` for a file, or a target that names nothing (the reader says
    "file not found", as for a dangling link in a checkout). ``pending`` is the caller's.
    """
    if resolved.failure == "outside":
        return "symlink pointing outside the checkout"
    if resolved.failure == "loop":
        return "symlink loop"
    if resolved.path is not None and (not resolved.path or is_dir(resolved.path)):
        return "symlinked directory (never entered)"
    return None


_KINDS = (
    (stat.S_ISDIR, "directory"),
    (stat.S_ISFIFO, "FIFO"),
    (stat.S_ISSOCK, "socket"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
)


def not_regular(mode: int) -> str:
    """The reason a file of ``st_mode`` ``mode`` is not read: ``not a regular file (FIFO)``."""
    kind = next((name for test, name in _KINDS if test(mode)), "unknown type")
    return f"not a regular file ({kind})"


def read_regular(path: Path, rel: str, max_bytes: int) -> bytes:
    """Return the bytes of the regular file ``path`` (at most ``max_bytes``), never blocking.

    The file is opened with ``O_NONBLOCK`` (a FIFO opens at once instead of waiting for a
    writer) and checked with ``fstat`` on the open descriptor, so a file swapped for a FIFO
    after a check is still refused (no check-then-open race). At most ``max_bytes + 1`` bytes
    are read, so a file that grows while being read is still bounded.

    Raises:
        ManifestError: naming ``rel``: not found, a symlink loop, not a regular file (FIFO,
            directory, socket, device), over ``max_bytes``, or another ``OSError``.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise ManifestError(_open_failure(path, exc), file=rel) from None
    try:
        mode = os.fstat(fd)
        if not stat.S_ISREG(mode.st_mode):
            raise ManifestError(not_regular(mode.st_mode), file=rel)
        if mode.st_size > max_bytes:
            raise ManifestError(too_large(mode.st_size, max_bytes), file=rel)
        chunks: list[bytes] = []
        left = max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise ManifestError(f"cannot read: {exc.strerror}", file=rel) from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > max_bytes:
        raise ManifestError(too_large(len(data), max_bytes), file=rel)
    return data


def _open_failure(path: Path, exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        return "file not found"
    if exc.errno == errno.ELOOP:
        return "symlink loop"
    if exc.errno == errno.ENXIO:  # opening a socket (or a device without a driver)
        try:
            return not_regular(os.stat(path).st_mode)  # noqa: PTH116 - the mode, as in fstat
        except OSError:
            pass
    return f"cannot read: {exc.strerror}"


def too_large(size: int, max_bytes: int) -> str:
    """The reason a file of ``size`` bytes over the ``max_bytes`` limit is not read.

    Both numbers in the largest unit (MiB, KiB, bytes) at which the limit is at least one unit
    and the two still read differently: ``file is 3.0 MiB, over the 1 MiB limit``, ``file is
    2,345 bytes, over the 1,000-byte limit``.
    """
    for unit, name in ((1 << 20, "MiB"), (1 << 10, "KiB")):
        if max_bytes >= unit and round(size / unit, 1) != round(max_bytes / unit, 1):
            limit = max_bytes / unit
            shown = f"{limit:.0f}" if limit.is_integer() else f"{limit:.1f}"
            return f"file is {size / unit:.1f} {name}, over the {shown} {name} limit; not read"
    return f"file is {size:,} bytes, over the {max_bytes:,}-byte limit; not read"
