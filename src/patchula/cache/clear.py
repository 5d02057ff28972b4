"""``patchula cache clear``: remove a cache file and its ``-wal``/``-shm`` sidecars, safely.

Safely means three refusals, each a ``CacheUnavailable`` naming the file and leaving every file
in place:

- another process has the database open (its ``-shm`` dead-man-switch lock, ``wal.in_use``:
  a ``patchula run`` or ``cache warm`` in progress) — or, where the platform cannot tell
  (no open-file-description locks), a ``-shm`` is there at all;
- the file is not an SQLite database (no ``SQLite format 3`` header,
  https://www.sqlite.org/fileformat2.html §1.3): ``--cache`` names something else;
- the database holds tables but not the cache's ``http_entries``: another application's.

Quarantined copies (``<file>.corrupt-<time>``, kept for inspection) are never removed; the
result counts them.
"""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from patchula.cache import recovery, wal
from patchula.cache.base import CacheUnavailable

__all__ = ["Cleared", "clear"]

SQLITE_MAGIC = b"SQLite format 3\0"


@dataclass(frozen=True, slots=True)
class Cleared:
    """What ``clear`` removed.

    ``files``: the paths, database last; ``bytes``: their sizes, summed; ``quarantined``: the
    ``<file>.corrupt-*`` copies left in place.
    """

    files: tuple[Path, ...]
    bytes: int
    quarantined: tuple[Path, ...]


def _tables(path: Path) -> set[str] | str:
    """The table names of ``path``'s main file, or why it cannot be read.

    ``immutable=1``: no lock is taken and no sidecar is read or created (the file is about to
    go; a log left beside it holds nothing that decides whose database it is).
    """
    uri = f"{path.resolve().as_uri()}?mode=ro&immutable=1"
    try:
        conn = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as exc:
        return str(exc)
    try:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    except sqlite3.Error as exc:
        return str(exc)
    finally:
        conn.close()
    return {str(row[0]) for row in rows}


def _check(path: Path) -> None:
    """Raise ``CacheUnavailable`` unless ``path`` is a patchula cache (or an empty file)."""
    if path.is_dir():
        msg = f"cache file {path} is a directory: not removed"
        raise CacheUnavailable(msg)
    try:
        with path.open("rb") as handle:
            header = handle.read(len(SQLITE_MAGIC))
    except OSError as exc:
        msg = f"cache file {path} cannot be read ({exc.strerror or exc}): not removed"
        raise CacheUnavailable(msg) from None
    if not header:
        return  # an empty file: what SQLite leaves of a database never written
    if header != SQLITE_MAGIC:
        msg = f"{path} is not an SQLite database, so not a patchula cache: not removed"
        raise CacheUnavailable(msg)
    tables = _tables(path)
    if isinstance(tables, str):
        msg = (
            f"{path} cannot be read as a patchula cache ({tables}): not removed; a run moves a "
            "damaged cache aside by itself, or remove the file by hand"
        )
        raise CacheUnavailable(msg)
    if tables and "http_entries" not in tables:
        shown = ", ".join(sorted(tables)[:5])
        msg = f"{path} is an SQLite database of another application (tables {shown}): not removed"
        raise CacheUnavailable(msg)


def _in_use(path: Path) -> bool:
    return recovery.is_open_here(path) or wal.in_use(path)


def clear(path: Path) -> Cleared | None:
    """Remove the cache file ``path`` with its ``-wal`` and ``-shm``; ``None`` when none exists.

    Sidecars go first and the database last, so an interruption leaves a database SQLite opens
    as it was at its last checkpoint (or nothing), never a log without its database. Raises
    ``CacheUnavailable`` (nothing removed) when another process has the file open, when it is
    not a patchula cache (see the module docstring), or when a file cannot be removed (those
    removed before it stay removed; the message names the one that was not).
    """
    present = [path.with_name(path.name + suffix) for suffix in (*recovery.SIDECARS, "")]
    present = [p for p in present if p.exists() or p.is_symlink()]
    quarantined = tuple(sorted(path.parent.glob(f"{_glob_escape(path.name)}.corrupt-*")))
    if not present:
        return None
    if _in_use(path):
        msg = (
            f"cache file {path} is open in another process (a patchula run or cache warm in "
            "progress): not removed; clear it when that process has ended"
        )
        raise CacheUnavailable(msg)
    if path.exists() or path.is_symlink():
        _check(path)
    removed: list[Path] = []
    total = 0
    for file in present:
        with contextlib.suppress(OSError):
            total += file.lstat().st_size
        try:
            file.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            msg = f"cannot remove {file}: {exc.strerror or exc}"
            raise CacheUnavailable(msg) from None
        removed.append(file)
    return Cleared(files=tuple(removed), bytes=total, quarantined=quarantined)


def _glob_escape(name: str) -> str:
    """``name`` with glob metacharacters bracketed, so it matches only itself."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)
