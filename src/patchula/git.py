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

    ``GitRun`` started and waited for at once; see it for how git is run and bounded.
    """
    started = GitRun(
        git, root, args, work_tree=work_tree, env=env, timeout=timeout, max_bytes=max_bytes
    )
    return started.result()


class GitRun:
    """``git ARGS`` started in ``root``; ``result()`` waits for it, ``cancel()`` drops it.

    Started early, read-only commands (``ls-files``) run while another (``status``) does.
    ``work_tree`` (default ``root``) is passed as ``--work-tree``, so a ``core.worktree`` of
    the repository's config cannot point git elsewhere; git finds the repository itself from
    ``root``, so its ownership check (``safe.directory``) still holds. ``core.fsmonitor`` is
    off, hooks point at nothing, no global excludes file or untracked cache is used,
    ``core.ignoreStat`` is off (a repository's ``true`` would have git trust the index and
    mark what it refreshes assume-unchanged), and no optional lock is taken
    (``GIT_OPTIONAL_LOCKS=0``). The caller's ``GIT_*`` variables are dropped (a ``GIT_DIR`` or
    ``GIT_INDEX_FILE`` of an enclosing hook must not redirect it); ``env`` adds variables
    (``GIT_LITERAL_PATHSPECS``). Bounded: killed after ``timeout`` seconds, at most
    ``max_bytes`` of output read. Any failure (cannot start, a NUL in an argument, a non-zero
    exit, a timeout, too much output) is a ``None`` result, never an error.
    """

    def __init__(
        self,
        git: str,
        root: Path,
        args: list[str],
        *,
        work_tree: Path | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = TIMEOUT_SECONDS,
        max_bytes: int = MAX_OUTPUT_BYTES,
    ) -> None:
        """Start the command (nothing is started when it cannot be: ``result()`` is None)."""
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
            "-c",
            "core.ignoreStat=false",
            *args,
        ]
        self._config = args[:1] == ["config"]
        self._max = max_bytes
        self._timer: threading.Timer | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        try:
            self._proc = subprocess.Popen(  # noqa: S603 - a fixed argument list, no shell
                command,
                cwd=root,
                env=environ,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except (OSError, ValueError):  # ValueError: a NUL in a (record's, untrusted) path
            return
        self._timer = threading.Timer(timeout, self._proc.kill)
        self._timer.start()

    def result(self) -> bytes | None:
        """Its stdout (at most ``max_bytes``) when it exited 0, else ``None``."""
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        try:
            with proc:
                if proc.stdout is None:  # never: stdout=PIPE
                    return None
                data = proc.stdout.read(self._max + 1)
                if len(data) > self._max:
                    proc.kill()
                    return None
                code = proc.wait()
        finally:
            if self._timer is not None:
                self._timer.cancel()
        # ``git config --get-regexp`` exits 1 when nothing matches.
        ok = code == 0 or (code == 1 and self._config and not data)
        return data if ok else None

    def cancel(self) -> None:
        """Kill it and wait for it to end, when its result was not taken."""
        proc, self._proc = self._proc, None
        if self._timer is not None:
            self._timer.cancel()
        if proc is not None:
            with proc:  # closes stdout, waits
                proc.kill()
