"""Judging a write-ahead log found beside the database before SQLite replays it.

SQLite replays any ``-wal`` whose header and frames are self-consistent, even one written for
another database (https://www.sqlite.org/fileformat2.html §4: nothing in a WAL names its
database). Every cache database carries a random identity in its header's application_id
(offset 68) and rewrites it in every write transaction, so each transaction of its WAL holds a
frame for page 1 with that identity; a WAL whose page-1 frames carry another one is foreign.
A log that cannot be tied to the file this way (no page-1 frame, or page-1 frames without an
identity beside a file without one) is undecided: ``recovery`` replays it on a read-only
connection, which never checkpoints, before the file is opened for writing.
"""

from __future__ import annotations

import contextlib
import os
import struct
from pathlib import Path
from typing import BinaryIO

import msgspec

__all__ = ["WalVerdict", "in_use", "inspect"]

WAL_MAGIC = (0x377F0682, 0x377F0683)  # low bit: checksums over big-endian words
WAL_VERSION = 3007000
WAL_HEADER = 32
FRAME_HEADER = 24
DB_HEADER = 100
APPLICATION_ID = slice(68, 72)
# The unix VFS's dead-man switch: every connection holds a shared lock on this byte of the
# ``-shm`` file while it has the database open (SQLite's os_unix.c, UNIX_SHM_DMS).
SHM_DMS_OFFSET = 128


class WalVerdict(msgspec.Struct, frozen=True):
    """What a leftover ``-wal`` is: ``foreign`` (why, or ``None``), and ``decided``.

    ``decided`` is false when the log cannot be tied to the database either way (no page-1
    frame, or neither the database nor the log's page-1 frames carry an identity); then it is
    replayed read-only and checked in full before it is replayed for real. ``frames`` counts
    the frames of the log's current generation (matching salts).
    """

    foreign: str | None
    decided: bool
    frames: int


def _checksum(data: bytes, *, big_endian: bool, s0: int = 0, s1: int = 0) -> tuple[int, int]:
    """SQLite's WAL checksum over ``data`` (a multiple of 8 bytes), §4.1 of the format page."""
    words = struct.unpack(f"{'>' if big_endian else '<'}{len(data) // 4}I", data)
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & 0xFFFFFFFF
        s1 = (s1 + words[i + 1] + s0) & 0xFFFFFFFF
    return s0, s1


def _page_size(raw: int) -> int:
    return 65536 if raw == 1 else raw


def inspect(path: Path) -> WalVerdict | None:
    """Judge ``<path>-wal``; ``None`` when there is none SQLite would replay.

    Reads only headers and page-1 frames. Raises ``OSError`` when a file cannot be read.
    """
    log = _read_log(path.with_name(path.name + "-wal"))
    if log is None:
        return None
    page_size, frames, identities = log
    if frames == 0:
        return None
    try:
        with path.open("rb") as db:
            header = db.read(DB_HEADER)
    except FileNotFoundError:
        header = b""
    if not header:
        # SQLite would silently delete the log of an empty or missing database.
        return WalVerdict("there is no database it could belong to", decided=True, frames=frames)
    if len(header) < DB_HEADER or not header.startswith(b"SQLite format 3\0"):
        return None  # a damaged file: quarantined with its sidecars when it fails to open
    db_page_size = _page_size(struct.unpack(">H", header[16:18])[0])
    if db_page_size != page_size:
        reason = f"its page size is {page_size} bytes, the database's {db_page_size}"
        return WalVerdict(reason, decided=True, frames=frames)
    identity = header[APPLICATION_ID]
    if identity == bytes(4) and any(found != identity for found in identities):
        # A file gets its identity checkpointed into its header as soon as it is stamped
        # (``recovery``), so a log carrying one beside a file without any is another cache's.
        reason = "it was written for another cache (this database has no identity yet)"
        return WalVerdict(reason, decided=True, frames=frames)
    if identity == bytes(4) or not identities:
        return WalVerdict(None, decided=False, frames=frames)
    if any(found != identity for found in identities):
        return WalVerdict("it was written for another database", decided=True, frames=frames)
    return WalVerdict(None, decided=True, frames=frames)


def _read_log(wal: Path) -> tuple[int, int, list[bytes]] | None:
    """(page size, frames, page-1 identities) of a log SQLite would read; ``None`` otherwise."""
    try:
        file = wal.open("rb")
    except FileNotFoundError:
        return None
    with file:
        head = file.read(WAL_HEADER)
        if len(head) < WAL_HEADER:
            return None
        magic, version, page_size, _, salt1, salt2, check1, check2 = struct.unpack(">8I", head)
        valid_size = 512 <= page_size <= 65536 and page_size & (page_size - 1) == 0  # noqa: PLR2004 - SQLite's bounds
        if magic not in WAL_MAGIC or version != WAL_VERSION or not valid_size:
            return None  # SQLite ignores (and later overwrites) a log with a bad header
        if _checksum(head[:24], big_endian=bool(magic & 1)) != (check1, check2):
            return None
        frames, identities = _current_frames(file, page_size, (salt1, salt2))
    return page_size, frames, identities


def _current_frames(
    file: BinaryIO, page_size: int, salts: tuple[int, int]
) -> tuple[int, list[bytes]]:
    """Count the frames of the log's current generation and collect their page-1 identities.

    Reads each 24-byte frame header (and the identity of page-1 frames), never whole pages.
    Frames of older generations (after a restart) carry older salts; the first one ends the
    current generation. Checksums are not verified: only a frame SQLite wrote for this log has
    its salts, and a torn tail cannot carry another identity.
    """
    frames = 0
    identities: list[bytes] = []
    offset = WAL_HEADER
    while True:
        file.seek(offset)
        frame = file.read(FRAME_HEADER)
        if len(frame) < FRAME_HEADER:
            break
        page, _, salt1, salt2 = struct.unpack(">4I", frame[:16])
        if (salt1, salt2) != salts:
            break
        if page == 1:
            file.seek(offset + FRAME_HEADER + APPLICATION_ID.start)
            identities.append(file.read(APPLICATION_ID.stop - APPLICATION_ID.start))
        # A frame cut short (the process died writing it) is not replayed: do not count it.
        file.seek(offset + FRAME_HEADER + page_size - 1)
        if not file.read(1):
            break
        frames += 1
        offset += FRAME_HEADER + page_size
    return frames, identities


def in_use(path: Path) -> bool:
    """Tell whether another process has the database open (its ``-shm`` dead-man switch).

    Asks for the lock without taking it (``F_OFD_GETLK`` where the platform has it, which also
    sees this process's own POSIX locks). Callers must not ask while a connection of this
    process is open on ``path``: closing any descriptor of a file drops the process's POSIX
    locks on it (fcntl(2)). Without open-file-description locks (not Linux) the answer is
    ``True``: unknown, so the log is left to SQLite.
    """
    try:
        import fcntl  # noqa: PLC0415 - POSIX only
    except ImportError:  # pragma: no cover - Windows
        return True
    command = getattr(fcntl, "F_OFD_GETLK", None)
    if command is None:  # pragma: no cover - the struct layout below is Linux's
        return True
    shm = path.with_name(path.name + "-shm")
    try:
        fd = os.open(shm, os.O_RDONLY)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    try:
        # struct flock on Linux: type, whence (short), start, len (off_t), pid (int), padding.
        query = struct.pack("hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, SHM_DMS_OFFSET, 1, 0)
        try:
            answer = fcntl.fcntl(fd, command, query)
        except OSError:
            return True
        kind: int = struct.unpack("hhqqi4x", answer)[0]
        return kind != fcntl.F_UNLCK
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
