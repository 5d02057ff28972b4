"""The run's target list: ``--targets-file``, and the stable shares ``--shard I/N`` takes.

A CI matrix spreads one target list over N jobs, each running ``patchula run --shard I/N``
(the engine is the CI system, not a scheduler of ours). A share must be the same on every
machine and every run, cover the list with the other shares exactly once, be balanced, and
move few targets when one is added: the targets are ordered by a SHA-256 digest of their text
and the ordered list is cut into N contiguous runs of ``floor``/``ceil(len / N)`` targets.
Adding one target shifts each cut by at most one place, so at most N - 1 others change share
(a hash modulo N would move none, but is balanced only on average: 1,000 targets over 4
shares differ by 10% about one run in ten).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from patchula.errors import ConfigError

# The most of a targets file read (a million short lines).
TARGETS_FILE_MAX_BYTES = 64 * 1024 * 1024


def read_targets_file(path: Path) -> list[str]:
    """The targets listed in ``path``: one per line, blank lines and ``#`` comments skipped.

    A ``#`` starts a comment at the start of a line or after whitespace (``github:o/r  # web``);
    surrounding whitespace, CR of CRLF line ends and a byte-order mark opening a line are
    dropped. Targets keep their text: a relative path is relative to the working directory,
    as on the command line.

    Raises:
        ConfigError: the file cannot be read, is larger than ``TARGETS_FILE_MAX_BYTES``, or is
            not UTF-8 text (the message names the file and, for bad text, the line).
    """
    try:
        with path.open("rb") as handle:
            data = handle.read(TARGETS_FILE_MAX_BYTES + 1)
    except OSError as exc:
        msg = f"--targets-file {path}: cannot read: {exc.strerror or exc}"
        raise ConfigError(msg) from None
    if len(data) > TARGETS_FILE_MAX_BYTES:
        msg = f"--targets-file {path}: larger than {TARGETS_FILE_MAX_BYTES} bytes"
        raise ConfigError(msg)
    targets: list[str] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            msg = f"--targets-file {path}, line {number}: not UTF-8 text"
            raise ConfigError(msg) from None
        # A BOM opens the text Windows editors write, and every file concatenated into this
        # one (``type a.txt b.txt > repos.txt``): never part of a target.
        text = _without_comment(line.removeprefix("\ufeff")).strip()
        if "\x00" in text:
            msg = f"--targets-file {path}, line {number}: NUL byte in a target"
            raise ConfigError(msg)
        if text:
            targets.append(text)
    return targets


def _without_comment(line: str) -> str:
    if line.lstrip().startswith("#"):
        return ""
    for index, char in enumerate(line):
        if char == "#" and index and line[index - 1] in " \t":
            return line[:index]
    return line


def shard_key(target: str) -> bytes:
    """The digest a target is ordered by when the list is cut into shares."""
    return hashlib.sha256(target.encode("utf-8", "surrogatepass")).digest()


def select_shard(targets: Sequence[str], index: int, count: int) -> list[str]:
    """The targets of share ``index`` of ``count`` (1-based), in their given order.

    Repeated targets count once. Shares of the same list are disjoint, cover it, and differ in
    size by at most one target (see the module docstring).

    Raises:
        ValueError: unless ``1 <= index <= count``.
    """
    if not 1 <= index <= count:
        msg = f"shard {index}/{count}: expected 1 <= I <= N"
        raise ValueError(msg)
    unique = list(dict.fromkeys(targets))
    ordered = sorted(unique, key=lambda t: (shard_key(t), t))
    start = len(ordered) * (index - 1) // count
    end = len(ordered) * index // count
    chosen = set(ordered[start:end])
    return [t for t in unique if t in chosen]


def list_digest(targets: Sequence[str]) -> str:
    """``sha256:<hex>`` of the sorted ``targets``, each followed by a newline (UTF-8).

    Shards of one matrix cut the same list only when their lists' digests (and lengths) are
    equal: ``report merge`` compares them (a shard whose owner listing failed cut another).
    """
    text = "".join(f"{target}\n" for target in sorted(targets))
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
