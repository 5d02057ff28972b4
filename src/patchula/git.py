"""Runs ``git`` on a checkout that may be hostile: bounded, no hooks, no fsmonitor, no ``GIT_*``.

Used where only git knows the answer (``records.worktree_clean``: is the work tree clean;
``discovery``: which ignored files are tracked). Imports nothing of patchula's.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

# The longest one git command may run (seconds) and the most of its output read (bytes; more
# is refused, as an answer too large to matter).
TIMEOUT_SECONDS = 10.0
MAX_OUTPUT_BYTES = 4 * 1024 * 1024

_LOOKUP: list[str | None] = []


def executable() -> str | None:
    """The ``git`` on ``PATH`` (looked for once a process), or ``None``."""
    import shutil  # noqa: PLC0415 - lazy: start-up

    if not _LOOKUP:
        _LOOKUP.append(shutil.which("git"))
    return _LOOKUP[0]


def run(
    git: str,
    root: Path,
    args: list[str],
    *,
    work_tree: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = TIMEOUT_SECONDS,
    max_bytes: int = MAX_OUTPUT_BYTES,
) -> bytes | None:
    """The stdout of ``git ARGS`` run in ``root`` (exit 0 or, for ``config``, 1), or ``None``.

    ``work_tree`` (default ``root``) is passed as ``--work-tree``, so a ``core.worktree`` of
    the repository's config cannot point git elsewhere; git finds the repository itself from
    ``root``, so its ownership check (``safe.directory``) still holds. ``core.fsmonitor`` is
    off, hooks point at nothing, no global excludes file or untracked cache is used, and no
    optional lock is taken (``GIT_OPTIONAL_LOCKS=0``). The caller's ``GIT_*`` variables are
    dropped (a ``GIT_DIR`` or ``GIT_INDEX_FILE`` of an enclosing hook must not redirect it);
    ``env`` adds variables (``GIT_LITERAL_PATHSPECS``). Bounded: killed after ``timeout``
    seconds, at most ``max_bytes`` of output read. Any failure (cannot start, a non-zero exit,
    a timeout, too much output) is ``None``, never an error.
    """
    import subprocess  # noqa: PLC0415 - lazy: start-up (only some runs use git)
    import threading  # noqa: PLC0415 - lazy: start-up

    environ = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    environ |= {"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    environ |= dict(env or {})
    command = [
        git,
        "--no-pager",
        f"--work-tree={work_tree or root}",
        "-c",
        "core.fsmonitor=false",
        "-c",
        f"core.hooksPath={os.devnull}",
        "-c",
        f"core.excludesFile={os.devnull}",
        "-c",
        "core.untrackedCache=false",
        *args,
    ]
    try:
        proc = subprocess.Popen(  # noqa: S603 - a fixed argument list, no shell
            command,
            cwd=root,
            env=environ,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return None
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    try:
        with proc:
            if proc.stdout is None:  # never: stdout=PIPE
                return None
            data = proc.stdout.read(max_bytes + 1)
            if len(data) > max_bytes:
                proc.kill()
                return None
            code = proc.wait()
    finally:
        timer.cancel()
    # ``git config --get-regexp`` exits 1 when nothing matches.
    ok = code == 0 or (code == 1 and args[:1] == ["config"] and not data)
    return data if ok else None
