"""Extraction records: what one repository at one commit gave with one resolved config.

Seed 003 ("SQLite cache"): extraction keys include the repository, its commit and a hash of the
resolved config, and the cache stores the caller-serialised bytes (outside the HTTP byte
budget). The bytes are msgpack of a versioned ``msgspec`` Struct decoded with its types, so a
damaged or foreign record (a CI cache restored from another branch is not trusted input) is
refused and replaced, never trusted, never unpickled. A local checkout uses records only at a
known HEAD with a clean work tree (``worktree_clean``); a remote repository at the commit its
ref resolved to.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import posixpath
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from patchula import __version__, git
from patchula.discovery import UNREAD_LOCKFILES, UNREAD_MANIFESTS, read_regular
from patchula.errors import ManifestError
from patchula.manager.paths import RULES
from patchula.models import Dependency, ManifestProblem

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from pathlib import Path

    from patchula.settings import Settings

# Bumped whenever what a record holds, or what extraction makes of a file, changes meaning: a
# record of another format misses (its config hash differs) and is replaced.
RECORD_FORMAT = 11  # 2: tracked ignored files, symlinks; 3: index flags; 4: links into skipped
# dirs; 5: npm workspace packages by workspace membership (older records skipped any namesake);
# 6: a requirements file another reads with -c gives its own rows (older records dropped them),
# requirements files are decoded as pip does (older records hold 'not UTF-8' for UTF-16 ones),
# a -c constraint ===V narrows the range (older records pinned the value), a row a Python
# lockfile lacks has a note (older records have none)
# also 6: pyproject rows naming the project itself are skipped (self-referential extras),
# Poetry `||` constraints are unions (were skipped), Python rows carry their prerelease opt-in
# and the package index they are pinned to
# also 6: npm specs of other protocols (jsr:, exec:) and directories skipped, not looked up
# also 6: go.mod exclude directives (Dependency.excluded)
# also 6: node and ubuntu official images have their own versionings (node_image, ubuntu_image)
# 7: the files ignore-paths kept out are listed (``ignored``; older records have none)
# also 7: pyproject [build-system] requires, PDM dev-dependencies, Hatch environments and uv
# constraint/override dependencies are rows; setup.cfg is read; a lone setup.py is a warning
# 8: go.mod go/toolchain rows are read on go.dev's release list (datasource go, versioning
# mise, constraint 1.22.1 not v1.22.1); the toolchain row is looked up, the go row's skip
# reason says why it is not (older records skipped both as "no module proxy lookup yet")
# also 8: tool rows from the widened mise registry mapping (tools older records skipped as
# unmapped), a later backend read when mise's first has no release source (note), tag
# prefixes stripped
# also 8: a name over ``names.MAX_NAME_LENGTH`` characters is a problem (older records hold its row)
# also 8: pyproject rows carry the project's requires-python (Dependency.requires_python)
# 9: pdm.lock is read (Lockfile.groups; older records list it as unread), Pipfile keys with
# extras are rows (older records hold a problem), indented Dockerfile directives are read,
# Compose file format 1 documents give their services
# also 9: a requirements.in paired with the requirements.txt pip-compile or uv compiled from
# it takes current from its pins (older records have it from the range); the compiled file's
# pins of the source's packages are no rows, its indirect pins skipped rows (older records: rows)
# also 9: declared values, constraints, markers, notes and problem messages are redacted
# (``redact_text``; older records may hold a manifest's secret as written)
# also 9: Poetry `python` restrictions are markers, Pipfile [requires] / Pipfile.lock
# _meta.requires and setup.cfg python_requires are requires_python, hatch.toml is read, PDM
# resolution overrides and uv build constraints are rows (older records hold none of these)
# also 9: workflows give actions/setup-* version inputs as tool rows and runs-on runner images
# also 9: core tools bun, deno, erlang, elixir, rust, swift and zig resolve to GitHub releases
# or tags (older records skip them), tag suffixes (Dependency.version_suffixes)
# also 9: Cargo.toml ``registry = "NAME"`` rows carry the registry as ``sole_index`` and are
# looked up (older records skipped them as "alternative registry")
# 10: a package a Python lockfile locks once per resolution fork keeps each fork
# (``Extracted.forks``, uv.lock ``resolution-markers``): each is judged for its own Python
# (older records judged the oldest only)
# 11: npm git dependencies on a GitHub tag (``github:o/r#v1.2.0``, ``#semver:^1``) are
# github-tags rows (older records skipped them)

# The largest record stored or read (bytes). A repository whose extraction is larger is
# extracted afresh on every run; a larger stored value is refused unread.
MAX_RECORD_BYTES = 32 * 1024 * 1024


class Extracted(msgspec.Struct, frozen=True):
    """One dependency ready for lookup, with what its lockfile says (``None``: unlocked)."""

    dep: Dependency
    locked: str | None = None
    lock_file: str | None = None
    note: str | None = None
    # ``(version, marker)`` of each version a Python lockfile locks once per resolution fork
    # (uv.lock ``resolution-markers``; ``""``: no marker, poetry.lock's per-marker entries),
    # oldest first, when it locks several: each fork is judged for its own Python.
    forks: tuple[tuple[str, str], ...] = ()


class Record(msgspec.Struct, frozen=True):
    """What an extraction gave: the value of one extraction record.

    ``files`` are the files the report lists, ``read`` every repository-relative file the
    managers read (includes too), ``problems`` the extraction's problems (never the ``.npmrc``
    warnings, which come from credentials each run), ``extracted`` the rows to look up in
    extraction order; ``npmrc`` the blob SHA of a remote repository's root ``.npmrc`` (read
    again each run, from the cache: its credentials are never copied into a record).
    """

    format: int
    files: list[str]
    read: list[str]
    problems: list[ManifestProblem]
    extracted: list[Extracted]
    npmrc: str | None = None
    # The files ignore-paths kept out (``Discovery.ignored``), and whether that list is whole.
    ignored: list[str] = msgspec.field(default_factory=list)
    ignored_complete: bool = True


class RecordStore(Protocol):
    """Where records are kept (the run's cache: ``Cache.get_extraction``/``put_extraction``)."""

    async def get_extraction(self, repo: str, commit: str, config_hash: str) -> bytes | None:
        """Return the record bytes for (repo, commit, config hash), or ``None``."""
        ...

    async def put_extraction(self, repo: str, commit: str, config_hash: str, data: bytes) -> None:
        """Store (or replace) the record bytes for (repo, commit, config hash)."""
        ...


class RecordKey(msgspec.Struct, frozen=True):
    """The key of one record: repository identity, commit and config hash (hex SHA-256)."""

    repo: str
    commit: str
    config_hash: str


@functools.cache
def _codec() -> tuple[Any, Any]:
    """The msgpack encoder and the typed ``Record`` decoder (``msgspec``), made when first used."""
    return msgspec.msgpack.Encoder(), msgspec.msgpack.Decoder(Record)


def config_hash(settings: Settings, scope_file: str | None, scope_member: str | None) -> str:
    """SHA-256 (hex) of a canonical serialisation of everything that changes an extraction.

    The record format, patchula's version, the enabled managers (in order), the ignore globs,
    the file size limit, the ``[tool-registry]`` overrides and the target's scope (a file
    target or a workspace member reports a subset). Nothing secret is in it: credentials only
    choose registries, after extraction.
    """
    canonical = {
        "format": RECORD_FORMAT,
        "version": __version__,
        "managers": list(settings.managers()),
        "ignore_paths": list(settings.ignore_paths),
        "max_file_bytes": settings.max_file_bytes,
        "tool_registry": sorted(settings.tool_registry.items()),
        "scope": [scope_file, scope_member],
    }
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def encode(record: Record) -> bytes | None:
    """The stored bytes of ``record``, or ``None`` when over ``MAX_RECORD_BYTES`` or unencodable."""
    encoder, _ = _codec()
    try:
        data: bytes = encoder.encode(record)
    except (msgspec.EncodeError, UnicodeEncodeError, OverflowError):
        return None
    return data if len(data) <= MAX_RECORD_BYTES else None


def decode(data: bytes) -> Record | None:
    """``data`` as a ``Record`` of this format, or ``None`` (damaged, foreign, too large).

    Decoding is typed (``msgspec``): a value of the wrong shape is refused, nothing is
    executed. The caller still checks the dependencies as a fresh extraction would.
    """
    if len(data) > MAX_RECORD_BYTES:
        return None
    _, decoder = _codec()
    try:
        record = decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError, TypeError):
        return None
    if not isinstance(record, Record) or record.format != RECORD_FORMAT:
        return None
    return record


# A commit as git names one: SHA-1 (40 hex digits) or SHA-256 (64).
_HEX = frozenset("0123456789abcdef")


def is_commit(text: str | None) -> bool:
    """Whether ``text`` is a full commit id (40 or 64 lowercase hex digits)."""
    return text is not None and len(text) in {40, 64} and set(text) <= _HEX


# ``git status`` of a clean check: the longest it may run (seconds) and the most of its output
# read (bytes; more is a tree too dirty to matter).
GIT_STATUS_TIMEOUT_SECONDS = 10.0
GIT_STATUS_MAX_BYTES = 4 * 1024 * 1024


class _Entry(msgspec.Struct, frozen=True):
    code: str
    path: str


def worktree_clean(
    root: Path,
    common_dir: Path,
    read: Iterable[str],
    scope_file: str | None = None,
    *,
    prefix: str = "",
    git: str | None = None,
) -> bool:
    """Whether the checkout at ``root`` is clean for an extraction that read ``read``.

    ``common_dir`` is its git common directory (``scan.git_dirs``). ``prefix`` (``""`` or
    ``docs/``) is where the scanned directory lies in the checkout (a subdirectory target);
    ``read`` and ``scope_file`` are relative to that directory, and only changes inside it
    count. Clean, in this order:

    - no file read lies in a nested repository (``nested_repository``: git does not see
      inside one, the walk does);
    - ``git status --porcelain=v1 -z --untracked-files=all --ignored=matching`` lists no
      modified, staged, deleted or untracked path that could change the extraction
      (``_change_matters``: one it read, one a manager reads by name, a ``.gitignore`` …, an
      untracked directory, which git lists whole only when it is a repository of its own, or
      a changed entry above a read file, a gitlink) and no ignored path the extraction read (or
      a directory above one); for a file target (``scope_file``) no ignored file beside it or
      in a directory above it either (its lockfiles are looked for there, ignored or not);
    - no gitlink in the directory has content (``_populated_gitlink``: status does not enter
      one, the walk does);
    - no entry of the whole index, wherever it lies, is flagged (``git ls-files -v -z``, any
      tag but ``H``: assume-unchanged, skip-worktree, unmerged; ``_flag``): status does not
      look at such a file, so its edit or its deletion (a manifest never read because it is
      missing) is hidden. The index is searched as git writes it (``git.GitSearch``: bounded
      by the timeout, not by bytes; the first flagged entry ends it).

    A checkout with submodules (``.gitmodules``) or its own ``info/exclude`` patterns is never
    clean: the walk sees files git does not. Nor is a sparse checkout (``core.sparseCheckout``,
    or its ``extensions.worktreeConfig`` setting) that leaves anything out: git marks what it
    leaves out skip-worktree, and those files come back, unseen by status, once it is disabled.

    A hostile checkout's config must not run commands: ``core.fsmonitor`` is off, hooks point
    at nothing, every filter driver the config defines is emptied (a clean filter runs while
    status re-reads a file whose stat data changed), submodules are not entered, and no
    optional lock (nor index write) is taken (``GIT_OPTIONAL_LOCKS=0``). Git finds the
    repository itself from ``root`` so its ownership check (``safe.directory``) still holds.
    Any failure (no ``git``, not a repository, dubious ownership, a timeout of
    ``GIT_STATUS_TIMEOUT_SECONDS``, too much output) is ``False``, never an error.
    """
    read_set = _normalised(read)
    executable = git or _git_executable()
    if executable is None or read_set is None:
        return False
    if (root / ".gitmodules").exists() or _has_info_excludes(common_dir):
        return False
    if nested_repository(root / prefix if prefix else root, read_set) is not None:
        return False
    # The index reads need no filter override: they run while config and status do. The
    # flags are searched over the whole index (no pathspec): a flagged file the extraction
    # never read, because it is missing, is just as hidden from status.
    modes = _start_git(
        executable, root, ["ls-files", "-z", "--format=%(objectmode)", *_under(prefix)]
    )
    flags = _search_git(executable, root, ["ls-files", "-v", "-z"], _flag)
    try:
        return _clean_at(executable, root, prefix, read_set, scope_file, modes, flags)
    finally:
        modes.cancel()
        flags.cancel()


def _normalised(read: Iterable[str]) -> set[str] | None:
    """``read`` as git names the paths (``a/./b``: ``a/b``), or ``None`` when one cannot be.

    A record is untrusted input: a path leaving the directory (``../x``, ``/etc/x``), empty,
    or holding a NUL is no file git can vouch for.
    """
    found: set[str] = set()
    for rel in read:
        path = posixpath.normpath(rel) if rel else ""
        if not path or path == "." or "\0" in path or path.startswith(("/", "../")) or path == "..":
            return None
        found.add(path)
    return found


def _under(prefix: str) -> list[str]:
    """The pathspec arguments of the scanned directory (none: the whole checkout)."""
    return ["--", f":(literal){prefix}"] if prefix else []


def _clean_at(
    executable: str,
    root: Path,
    prefix: str,
    read_set: set[str],
    scope_file: str | None,
    modes: git.GitRun,
    flags: git.GitSearch,
) -> bool:
    """``worktree_clean`` from ``git config`` on; ``modes`` and ``flags`` run meanwhile."""
    filters = _git(executable, root, ["config", "-z", "--name-only", "--get-regexp", r"^filter\."])
    if filters is None:
        return False
    overrides: list[str] = []
    for name in {n.rsplit(".", 1)[0] for n in filters.decode(errors="replace").split("\0") if n}:
        for key in ("clean", "smudge", "process"):
            overrides += ["-c", f"{name}.{key}="]
        overrides += ["-c", f"{name}.required=false"]
    status = _git(
        executable,
        root,
        [
            *overrides,
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--ignored=matching",
            "--ignore-submodules=all",
            "--no-renames",
            # Only the scanned directory (and whatever lies above it, for ``!! docs/``).
            *_under(prefix),
        ],
    )
    if status is None or _status_matters(status, prefix, read_set, scope_file):
        return False
    if _populated_gitlink(executable, root, prefix, modes.result()):
        return False
    return flags.result() is False


def _status_matters(status: bytes, prefix: str, read: set[str], scope_file: str | None) -> bool:
    """Whether an entry of ``status`` (``git status --porcelain=v1 -z``) could change it."""
    above = _directories(read)
    for entry in _entries(status):
        path = entry.path
        if prefix:
            # A directory entry at or above the scanned one (an ignored or untracked
            # ``docs/``) hides everything in it; entries elsewhere are outside its walk.
            if path.endswith("/") and prefix.startswith(path):
                return True
            if not path.startswith(prefix):
                continue
            path = path[len(prefix) :]
        if entry.code == "!!":
            if _ignored_matters(path, read, scope_file):
                return True
        elif _change_matters(path, read, above):
            return True
    return False


def nested_repository(root: Path, read: Iterable[str]) -> str | None:
    """The first directory below ``root`` holding a ``.git`` above a ``read`` path, or ``None``.

    ``git`` stops at a directory holding ``.git`` (a directory, or the ``gitdir:`` file of a
    worktree or submodule): it lists an untracked one as ``dir/`` and a committed one as a
    gitlink whose content status does not look at (``--ignore-submodules=all``), while the
    walk reads the files inside. One ``lstat`` per distinct directory of the read paths.
    """
    seen: dict[str, bool] = {}
    for rel in read:
        directory = posixpath.dirname(rel)
        while directory and directory not in seen:
            seen[directory] = os.path.lexists(root / directory / ".git")
            directory = posixpath.dirname(directory)
    found = sorted(directory for directory, holds in seen.items() if holds)
    return found[0] if found else None


def _directories(read: Iterable[str]) -> set[str]:
    """Every directory above a path of ``read`` (``a/b/c.txt``: ``a``, ``a/b``)."""
    found: set[str] = set()
    for rel in read:
        directory = posixpath.dirname(rel)
        while directory and directory not in found:
            found.add(directory)
            directory = posixpath.dirname(directory)
    return found


# The index mode of a gitlink: a commit of another repository (gitformat-index(5)).
_GITLINK = b"160000"


def _populated_gitlink(executable: str, root: Path, prefix: str, modes: bytes | None) -> bool:
    """Whether a gitlink in the scanned directory has anything in its directory.

    A gitlink without ``.gitmodules`` (``git add`` of an embedded repository) is a repository
    status does not enter (``--ignore-submodules=all``: entering it would run its own config),
    while the walk reads what is in it: a manifest added there would be unseen even when the
    extraction read nothing in it. An absent or empty gitlink directory (a clone never fills
    one) holds nothing to walk. ``modes`` is the output of ``git ls-files -z
    --format=%(objectmode)`` (git 2.38+; the modes only, a few bytes a file; ``None`` when it
    failed); ``ls-files -s`` gives the paths when there is a gitlink (or that git is older). A
    failure (an index too large for ``GIT_STATUS_MAX_BYTES``) counts as populated.
    """
    # Each mode is six digits and a NUL: a six-byte match is one whole entry's mode.
    if modes is not None and _GITLINK not in modes:
        return False
    staged = _git(executable, root, ["ls-files", "-z", "-s", *_under(prefix)])
    if staged is None:
        return True
    for raw in staged.split(b"\0"):
        if raw.startswith(_GITLINK + b" "):  # "<mode> <object> <stage>\t<path>"
            path = raw.partition(b"\t")[2].decode("utf-8", errors="surrogateescape")
            if _has_entries(root / path):
                return True
    return False


def _has_entries(directory: Path) -> bool:
    """Whether ``directory`` is a directory with anything in it (unreadable: assumed so)."""
    try:
        if directory.is_symlink() or not directory.is_dir():  # the walk enters neither
            return False
        with os.scandir(directory) as entries:
            return next(entries, None) is not None
    except OSError:
        return True


def _flag(entry: bytes) -> bool:
    """Whether a ``git ls-files -v -z`` entry (``TAG PATH``) is flagged: any tag but ``H``.

    ``git update-index --assume-unchanged`` (``core.ignoreStat`` sets it on every added file)
    and ``--skip-worktree`` (what a sparse checkout leaves out) make status trust the index
    for that file (git-update-index(1), "Using 'assume unchanged' bit", "Skip-worktree bit"):
    an edit, or a deletion, is hidden. ``ls-files -v`` tags such an entry lowercase or ``S``,
    an unmerged one ``M`` (git-ls-files(1)).
    """
    return not entry.startswith(b"H ")


# Files that change what a walk finds without being read by a manager.
_WALK_FILES = frozenset({".gitignore", "pyvenv.cfg", *UNREAD_LOCKFILES, *UNREAD_MANIFESTS})


def _change_matters(path: str, read: set[str], above: set[str]) -> bool:
    """Whether a changed, staged or untracked ``path`` could change the extraction.

    It does when the extraction read it, when any manager would read it by its name (a new or
    deleted manifest), or when it steers the walk (a ``.gitignore``, a virtual environment's
    ``pyvenv.cfg``, an unread lockfile). An untracked directory (``lib/``: git lists one whole
    only when it is a repository of its own, so what is inside is unknown) and a changed entry
    above a read file (``above``: a gitlink ``lib``) do too. Anything else (a build log, a
    report, a cache file kept in the checkout) leaves the extraction as it was.
    """
    if path.endswith("/") or path in above:
        return True
    if path in read or posixpath.basename(path) in _WALK_FILES:
        return True
    return any(rule.matches(path) for rule in RULES.values())


def _entries(data: bytes) -> list[_Entry]:
    """The entries of ``git status --porcelain=v1 -z --no-renames`` output (``XY PATH``)."""
    entries: list[_Entry] = []
    for raw in data.split(b"\0"):
        if raw:
            text = raw.decode("utf-8", errors="replace")
            entries.append(_Entry(text[:2], text[3:]))
    return entries


def _ignored_matters(path: str, read: set[str], scope_file: str | None) -> bool:
    """Whether the ignored ``path`` (``dir/`` for a directory) could change the extraction."""
    if path.endswith("/"):
        return any(r.startswith(path) for r in read) or (
            scope_file is not None and scope_file.startswith(path)
        )
    if path in read:
        return True
    if scope_file is None:
        return False
    where, target = posixpath.dirname(path), posixpath.dirname(scope_file)
    return not where or target == where or target.startswith(where + "/")


def _has_info_excludes(common_dir: Path) -> bool:
    """Whether the repository's ``info/exclude`` holds a pattern (the walk does not read it)."""
    path = common_dir / "info" / "exclude"
    if not os.path.lexists(path):
        return False
    try:  # a regular file only, bounded: a FIFO there must not block the run
        data = read_regular(path, "info/exclude", GIT_STATUS_MAX_BYTES)
    except ManifestError:
        return True
    text = data.decode("utf-8", errors="replace")
    return any(line.strip() and not line.lstrip().startswith("#") for line in text.splitlines())


def _git_executable() -> str | None:
    """The ``git`` on ``PATH`` (``patchula.git.executable``), or ``None``."""
    return git.executable()


def _git(executable: str, root: Path, args: list[str]) -> bytes | None:
    """``patchula.git.run`` bounded by ``GIT_STATUS_TIMEOUT_SECONDS``/``GIT_STATUS_MAX_BYTES``."""
    return git.run(
        executable, root, args, timeout=GIT_STATUS_TIMEOUT_SECONDS, max_bytes=GIT_STATUS_MAX_BYTES
    )


def _start_git(executable: str, root: Path, args: list[str]) -> git.GitRun:
    """``patchula.git.GitRun`` started, bounded as ``_git`` is."""
    return git.GitRun(
        executable, root, args, timeout=GIT_STATUS_TIMEOUT_SECONDS, max_bytes=GIT_STATUS_MAX_BYTES
    )


def _search_git(
    executable: str, root: Path, args: list[str], match: Callable[[bytes], bool]
) -> git.GitSearch:
    """``patchula.git.GitSearch`` started, bounded by ``GIT_STATUS_TIMEOUT_SECONDS``."""
    return git.GitSearch(executable, root, args, match, timeout=GIT_STATUS_TIMEOUT_SECONDS)
