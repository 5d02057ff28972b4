"""Runs ``git`` on a checkout that may be hostile: bounded, no hooks, no fsmonitor, no ``GIT_*``.

Used where only git knows the answer (``records.worktree_clean``: is the work tree clean;
``discovery``: which ignored files are tracked). Imports nothing of patchula's.
"""

from __future__ import annotations

import os
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable, Mapping
    from pathlib import Path

# The longest one git command may run (seconds) and the most of its output read (bytes; more
# is refused, as an answer too large to matter).
TIMEOUT_SECONDS = 10.0
MAX_OUTPUT_BYTES = 4 * 1024 * 1024

# ``GitSearch``: the most bytes read at once, and the longest one entry may be (far above a
# path's ``PATH_MAX`` of 4096; a longer one is refused, as too much output is).
CHUNK_BYTES = 64 * 1024
MAX_ENTRY_BYTES = 64 * 1024

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
        import threading  # noqa: PLC0415 - lazy: start-up (only some runs use git)

        self._config = args[:1] == ["config"]
        self._max = max_bytes
        self._timer: threading.Timer | None = None
        self._proc = _start(git, root, args, work_tree=work_tree, env=env)
        if self._proc is not None:
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


class GitSearch:
    """``git ARGS`` started in ``root``, its NUL-terminated entries searched as they come.

    For an answer no byte bound fits (``ls-files`` of a whole index: tens of MiB on a large
    repository): a thread reads the output ``chunk_bytes`` at a time while the caller does
    other work, calls ``match`` on each entry (bytes, without its NUL) and stops git at the
    first one it accepts. Memory stays bounded (a chunk and the entry it ends in, at most
    ``max_entry_bytes``), time by ``timeout`` seconds; git is run as ``GitRun`` runs it.
    ``result()`` is ``True`` (an entry matched), ``False`` (git exited 0, no entry matched)
    or ``None`` (cannot start, a non-zero exit, a timeout, an entry over ``max_entry_bytes``).
    """

    def __init__(
        self,
        git: str,
        root: Path,
        args: list[str],
        match: Callable[[bytes], bool],
        *,
        work_tree: Path | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = TIMEOUT_SECONDS,
        chunk_bytes: int = CHUNK_BYTES,
        max_entry_bytes: int = MAX_ENTRY_BYTES,
    ) -> None:
        """Start the command and its reader (nothing is started when it cannot be)."""
        import threading  # noqa: PLC0415 - lazy: start-up
        import time  # noqa: PLC0415 - lazy: start-up

        self._match = match
        self._chunk = chunk_bytes
        self._max_entry = max_entry_bytes
        self._found = False
        self._failed = False
        self._deadline = time.monotonic() + timeout
        self._timer: threading.Timer | None = None
        self._reader: threading.Thread | None = None
        self._proc = _start(git, root, args, work_tree=work_tree, env=env)
        if self._proc is None or self._proc.stdout is None:
            return
        self._timer = threading.Timer(timeout, self._proc.kill)
        self._timer.start()
        # A daemon: a reader still blocked when the run ends (a killed git's child holding the
        # pipe) must not keep the process alive.
        self._reader = threading.Thread(
            target=self._read, args=(self._proc, self._proc.stdout), daemon=True
        )
        self._reader.start()

    def _read(self, proc: subprocess.Popen[bytes], stream: IO[bytes]) -> None:
        """Scan ``stream`` entry by entry until a match, its end, or a failure (the thread)."""
        carry = b""
        try:
            with stream:  # closed here, by its only reader
                while chunk := stream.read1(self._chunk):  # type: ignore[attr-defined]
                    entries = (carry + chunk).split(b"\0")
                    carry = entries.pop()
                    if any(map(self._match, entries)):
                        self._found = True
                        break
                    if len(carry) > self._max_entry:
                        self._failed = True
                        break
                else:
                    # git terminates every entry: a tail without its NUL is a cut answer.
                    self._failed = self._failed or bool(carry)
        except (OSError, ValueError):
            self._failed = True
        if self._found or self._failed:
            proc.kill()

    def result(self) -> bool | None:
        """Whether an entry matched (``None``: git failed, timed out or was refused)."""
        import time  # noqa: PLC0415 - lazy: start-up

        proc, self._proc = self._proc, None
        if proc is None or self._reader is None:
            return None
        try:
            # The timer kills git at the deadline, which ends the reader; a second more for
            # it to see the end (a child of git still holding the pipe does not hold us).
            self._reader.join(max(0.0, self._deadline - time.monotonic()) + 1.0)
            if self._reader.is_alive():
                proc.kill()
                proc.wait()  # git itself ends at once; only its child holds the pipe
                return None
            code = proc.wait()
        finally:
            if self._timer is not None:
                self._timer.cancel()
        if self._found:
            return True
        return None if self._failed or code != 0 else False

    def cancel(self) -> None:
        """Kill it and wait for it to end, when its result was not taken."""
        proc, self._proc = self._proc, None
        if self._timer is not None:
            self._timer.cancel()
        if proc is not None:
            proc.kill()
            if self._reader is not None:
                self._reader.join(1.0)
            proc.wait()


def _start(
    git: str,
    root: Path,
    args: list[str],
    *,
    work_tree: Path | None,
    env: Mapping[str, str] | None,
) -> subprocess.Popen[bytes] | None:
    """``git ARGS`` started as ``GitRun`` describes, its stdout a pipe, or ``None``."""
    import subprocess  # noqa: PLC0415 - lazy: start-up (only some runs use git)

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
    try:
        return subprocess.Popen(  # noqa: S603 - a fixed argument list, no shell
            command,
            cwd=root,
            env=environ,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except (OSError, ValueError):  # ValueError: a NUL in a (record's, untrusted) path
        return None
