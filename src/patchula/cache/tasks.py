"""Lookup tasks (schema v4 ``lookup_tasks``): the SQL of the task queue and of the lookup record.

Seed 000 ("PyPI Cache Robustness Design") adapted as design.md §7 says: one row per
(datasource, package) is both the record of its last lookup and the task ``cache warm`` works
through. Every function takes the writer's connection and expects to run inside
``schema.transaction`` (``Cache.task_job`` does both); times are epoch seconds.

States (the table's CHECK): ``pending`` → claimed ``in_progress`` (``claim``, one
``UPDATE … RETURNING``, a lease) → ``completed`` or, after a failed attempt, ``pending`` again
with ``next_retry_at`` = now + 30 s * 2^(attempts - 1), until ``max_attempts`` make it
``failed`` for good. ``retry`` puts failed tasks back to ``pending`` with their attempts reset.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Literal

import msgspec

__all__ = [
    "BACKOFF_SECONDS",
    "STATUSES",
    "FailedTask",
    "LookupOutcome",
    "NewTask",
    "Task",
    "TaskSummary",
    "backoff",
    "claim",
    "complete",
    "enqueue",
    "fail",
    "failed",
    "lease_owners",
    "open_count",
    "reclaim",
    "record",
    "renew",
    "retry",
    "still_claimed",
    "summary",
]

TaskStatus = Literal["pending", "in_progress", "completed", "failed"]
STATUSES: tuple[TaskStatus, ...] = ("pending", "in_progress", "completed", "failed")
# The seed's back-off: 30 s after the first failed attempt, 60 s after the second, …
BACKOFF_SECONDS = 30.0


def backoff(attempts: int) -> float:
    """Seconds to wait after the ``attempts``-th failed attempt: ``30 * 2^(attempts - 1)``."""
    return BACKOFF_SECONDS * float(2 ** max(attempts - 1, 0))


class NewTask(msgspec.Struct, frozen=True):
    """A task to open: a package of a datasource, the constraint it was declared with, origin.

    ``triggered_by`` names what asked for it (``repository:file`` for a target's dependency,
    ``datasource:package@version`` for a dependency of a dependency); ``parent_id`` is the task
    whose version declared it, ``depth`` its distance from a target's manifest (0).
    """

    datasource: str
    package: str
    constraint: str | None
    depth: int = 0
    parent_id: int | None = None
    triggered_by: str | None = None
    # Where and as whom it is looked up: part of the task's identity (v5).
    base_url: str = ""
    credential: str = "-"
    # The checkout whose .npmrc applies (a retry by a later process reads it again).
    checkout_root: str | None = None
    # The cache holds a fresh answer to its catalog request (the fetch facade said so).
    fresh: bool = False
    # A task of this identity failed for good is opened again (a target's dependency).
    reopen_failed: bool = False


class Task(msgspec.Struct, frozen=True):
    """A claimed task, as ``claim`` hands it out (``attempts`` counts this attempt)."""

    id: int
    datasource: str
    package: str
    constraint: str | None
    depth: int
    attempts: int
    max_attempts: int
    base_url: str = ""
    checkout_root: str | None = None
    # Other constraints it was reached with while open: their versions are followed too.
    wanted: tuple[str | None, ...] = ()
    # Versions (with extras: ``1.2[socks]``) whose dependencies were enqueued already.
    followed_versions: tuple[str, ...] = ()


class LookupOutcome(msgspec.Struct, frozen=True):
    """How one lookup of ``patchula run`` ended: ``result`` (a catalog summary) or ``error``."""

    datasource: str
    package: str
    result: str | None
    error: str | None
    # A failure retrying cannot mend (404, refused name, unusable body): failed for good at once.
    permanent: bool = False
    # The registry it was looked up on (with the datasource and package: the task it records).
    base_url: str = ""


class TaskSummary(msgspec.Struct, frozen=True):
    """Counts per status, the oldest pending task's creation and the next retry due (or None)."""

    counts: dict[str, int]
    oldest_pending: float | None
    next_retry: float | None
    # Completed tasks whose catalog is stored but whose version's dependencies could not be
    # read (``dependenciesUnknown`` in the result): the graph below them is not warm.
    dependencies_unknown: int = 0


class FailedTask(msgspec.Struct, frozen=True):
    """A task failed for good: what ``cache failed`` lists (``failed_at`` in epoch seconds)."""

    package: str
    datasource: str
    error: str | None
    attempts: int
    failed_at: float | None
    triggered_by: str | None = None
    depth: int = 0


def enqueue(
    conn: sqlite3.Connection,
    tasks: Sequence[NewTask],
    *,
    now: float,
    fresh_after: float,
    max_attempts: int,
) -> list[int | None]:
    """Open a ``warm`` task for each of ``tasks`` unless one is open or needs none; their ids.

    A task is (datasource, package, base URL, credential digest). The seed's de-duplication
    at creation: an open task (``pending`` or ``in_progress``) of that identity is reused (a
    ``run`` task becomes ``warm``: its dependencies are to be followed). A ``warm`` task
    completed needs none (``None``) when it completed at or after ``fresh_after`` (this warm
    run already did it) or when the cache holds a fresh answer to its catalog request
    (``NewTask.fresh``); else (pruned, evicted, stale, or a ``run`` record) it is opened again.
    A task failed for good gives ``None`` (it waits for ``retry``) unless ``reopen_failed``:
    then it is opened again with its attempts reset. Repeats within ``tasks`` give the first
    one's answer.
    """
    ids: list[int | None] = []
    for task in tasks:
        row = conn.execute(
            "SELECT id, status, origin, completed_at, version_constraint, followed, wanted"
            " FROM lookup_tasks"
            " WHERE datasource = ? AND package = ? AND base_url = ? AND credential = ?",
            (task.datasource, task.package, task.base_url, task.credential),
        ).fetchone()
        if row is None:
            cursor = conn.execute(
                "INSERT INTO lookup_tasks (datasource, package, version_constraint, parent_id,"
                " depth, triggered_by, origin, status, max_attempts, created_at, base_url,"
                " credential, checkout_root)"
                " VALUES (?, ?, ?, ?, ?, ?, 'warm', 'pending', ?, ?, ?, ?, ?)",
                (
                    task.datasource,
                    task.package,
                    task.constraint,
                    task.parent_id,
                    task.depth,
                    task.triggered_by,
                    max_attempts,
                    now,
                    task.base_url,
                    task.credential,
                    task.checkout_root,
                ),
            )
            ids.append(cursor.lastrowid)
            continue
        ident, status, origin, completed_at, stored, followed, wanted_text = row
        done_now = completed_at is not None and completed_at >= fresh_after
        handled = _json_list(followed, "constraints")
        if status in {"pending", "in_progress"}:
            wanted = _json_list(wanted_text)
            if task.constraint != stored and task.constraint not in wanted:
                # Reached at another range while open: its version is followed too.
                wanted.append(task.constraint)
            conn.execute(
                "UPDATE lookup_tasks SET origin = 'warm', wanted = ? WHERE id = ?",
                (json.dumps(wanted) if wanted else None, ident),
            )
            ids.append(ident)
        elif status == "failed" and not task.reopen_failed:
            ids.append(None)
        elif status == "completed" and origin == "warm" and (done_now or task.fresh):
            if task.constraint in handled or (followed is None and task.constraint == stored):
                ids.append(None)
            else:
                # Warm, but reached at a range not resolved yet: follow that version too.
                _reopen(conn, ident, task, now=now, max_attempts=max_attempts, keep=followed)
                ids.append(ident)
        else:
            _reopen(conn, ident, task, now=now, max_attempts=max_attempts)
            ids.append(ident)
    return ids


def _json_list(text: str | None, key: str | None = None) -> list[str | None]:
    """The JSON list in ``text`` (or under ``key`` of the object in it); ``[]`` when none."""
    if not text:
        return []
    try:
        value = json.loads(text)
    except ValueError:
        return []
    if key is not None:
        value = value.get(key) if isinstance(value, dict) else None
    if not isinstance(value, list):
        return []
    return [v if isinstance(v, str) else None for v in value]


def _reopen(
    conn: sqlite3.Connection,
    ident: int,
    task: NewTask,
    *,
    now: float,
    max_attempts: int,
    keep: str | None = None,
) -> None:
    """Make the completed task ``ident`` a new pending ``warm`` task described by ``task``.

    ``keep``: the ``followed`` record it keeps (what is still warm); ``None`` forgets it.
    """
    conn.execute(
        "UPDATE lookup_tasks SET status = 'pending', origin = 'warm', version_constraint = ?,"
        " parent_id = ?, depth = ?, triggered_by = ?, attempts = 0, max_attempts = ?,"
        " result = NULL, error_message = NULL, created_at = ?, started_at = NULL,"
        " completed_at = NULL, next_retry_at = NULL, lease_owner = NULL, lease_until = NULL,"
        " checkout_root = ?, followed = ?, wanted = NULL WHERE id = ?",
        (
            task.constraint,
            task.parent_id if task.parent_id != ident else None,
            task.depth,
            task.triggered_by,
            max_attempts,
            now,
            task.checkout_root,
            keep,
            ident,
        ),
    )


def record(
    conn: sqlite3.Connection,
    outcomes: Iterable[LookupOutcome],
    *,
    now: float,
    max_attempts: int,
) -> None:
    """Record lookups of ``patchula run``: each completed, or failed with its next retry.

    A success completes the package's task (a ``warm`` task that is open is left to ``cache
    warm``, which follows its dependencies; a ``warm`` task completed stays as it is). A
    failure is one attempt: the task is ``pending`` with ``next_retry_at`` after the back-off,
    or ``failed`` once ``max_attempts`` attempts failed (at once when it is ``permanent``);
    an ``in_progress`` or open ``warm`` task is left to the process working on it. The row
    is created when missing; of repeats of one package in ``outcomes`` the last counts.
    """
    # One record per package: a package looked up on two registries keeps its last outcome.
    outcomes = list({(o.datasource, o.package, o.base_url): o for o in outcomes}.values())
    found = _rows_of(conn, [(o.datasource, o.package, o.base_url) for o in outcomes])
    completions: list[tuple[str | None, float, float, int]] = []
    for outcome in outcomes:
        row = found.get((outcome.datasource, outcome.package, outcome.base_url))
        if row is None:
            _insert_run(conn, outcome, now=now, max_attempts=max_attempts)
            continue
        ident, status, origin, attempts, limit = row
        if status == "in_progress" or (status == "pending" and origin == "warm"):
            continue
        if outcome.error is None:
            if status == "completed" and origin == "warm":
                continue
            completions.append((outcome.result, now, now, ident))
            continue
        # A task failed for good keeps its attempts and only takes the newest error.
        tried = attempts + 1 if status == "pending" else attempts if status == "failed" else 1
        done = status == "failed" or tried >= limit or outcome.permanent
        conn.execute(
            "UPDATE lookup_tasks SET status = ?, origin = 'run', error_message = ?,"
            " attempts = ?, max_attempts = ?, started_at = ?, completed_at = ?,"
            " next_retry_at = ?, result = NULL, lease_owner = NULL, lease_until = NULL"
            " WHERE id = ?",
            (
                "failed" if done else "pending",
                outcome.error,
                tried,
                limit if status != "completed" else max_attempts,
                now,
                now if done else None,
                None if done else now + backoff(tried),
                ident,
            ),
        )
    # The common case of a run whose lookups all succeed: one statement for the batch.
    conn.executemany(
        "UPDATE lookup_tasks SET status = 'completed', origin = 'run', result = ?,"
        " error_message = NULL, attempts = 1, started_at = ?, completed_at = ?,"
        " next_retry_at = NULL, lease_owner = NULL, lease_until = NULL WHERE id = ?",
        completions,
    )


# Triples read per statement (three parameters each, far below SQLite's 32,766 parameters).
_ROWS_CHUNK = 500


def _rows_of(
    conn: sqlite3.Connection, identities: Sequence[tuple[str, str, str]]
) -> dict[tuple[str, str, str], tuple[int, str, str, int, int]]:
    """(datasource, package, base URL) → (id, status, origin, attempts, max_attempts).

    A run's lookup records onto the task of that registry whatever its credential digest
    (the run's record does not know which store answered); of several, the lowest id.
    """
    found: dict[tuple[str, str, str], tuple[int, str, str, int, int]] = {}
    unique = list(dict.fromkeys(identities))
    for start in range(0, len(unique), _ROWS_CHUNK):
        chunk = unique[start : start + _ROWS_CHUNK]
        values = ",".join("(?, ?, ?)" for _ in chunk)
        sql = (
            "SELECT t.datasource, t.package, t.base_url, t.id, t.status, t.origin, t.attempts,"  # noqa: S608 - placeholders only
            f" t.max_attempts FROM lookup_tasks t JOIN (VALUES {values}) AS v"
            " ON t.datasource = v.column1 AND t.package = v.column2 AND t.base_url = v.column3"
            " ORDER BY t.id DESC"
        )
        params = [part for triple in chunk for part in triple]
        for row in conn.execute(sql, params).fetchall():
            found[(row[0], row[1], row[2])] = (row[3], row[4], row[5], row[6], row[7])
    return found


def _insert_run(
    conn: sqlite3.Connection, outcome: LookupOutcome, *, now: float, max_attempts: int
) -> None:
    """Insert the first record of a package ``patchula run`` looked up."""
    ok = outcome.error is None
    done = ok or max_attempts <= 1 or outcome.permanent
    conn.execute(
        "INSERT INTO lookup_tasks (datasource, package, triggered_by, origin, status, attempts,"
        " max_attempts, result, error_message, created_at, started_at, completed_at,"
        " next_retry_at, base_url) VALUES (?, ?, 'patchula run', 'run', ?, 1, ?, ?, ?, ?, ?, ?,"
        " ?, ?)",
        (
            outcome.datasource,
            outcome.package,
            "completed" if ok else "failed" if done else "pending",
            max_attempts,
            outcome.result,
            outcome.error,
            now,
            now,
            now if done else None,
            None if done else now + backoff(1),
            outcome.base_url,
        ),
    )


def lease_owners(conn: sqlite3.Connection) -> list[str]:
    """The owners of the leases on ``in_progress`` tasks (to find those whose process ended)."""
    rows = conn.execute(
        "SELECT DISTINCT lease_owner FROM lookup_tasks"
        " WHERE status = 'in_progress' AND lease_owner IS NOT NULL"
    ).fetchall()
    return [str(r[0]) for r in rows]


_INTERRUPTED = (
    "status = 'failed', completed_at = ?, next_retry_at = NULL, lease_owner = NULL,"
    " lease_until = NULL, error_message = 'interrupted: the process working on it ended'"
)
_TAKEN_BACK = "status = 'pending', next_retry_at = NULL, lease_owner = NULL, lease_until = NULL"


def reclaim(conn: sqlite3.Connection, *, now: float, owner: str, gone: Sequence[str]) -> int:
    """Take back ``in_progress`` tasks of other owners whose lease lapsed or who are ``gone``.

    Such a task is ``pending`` again, due at once, unless its attempts reached its maximum:
    then it is ``failed``, saying its last attempt was interrupted. Returns how many.
    """
    marks = ",".join("?" * len(gone))
    stale = f"(lease_until < ? OR lease_owner IN ({marks}))" if gone else "lease_until < ?"
    where = f"status = 'in_progress' AND (lease_owner IS NULL OR lease_owner != ?) AND {stale}"
    params = (owner, now, *gone)
    give_up = f"UPDATE lookup_tasks SET {_INTERRUPTED} WHERE {where} AND attempts >= max_attempts"  # noqa: S608 - only ? placeholders
    failed_now = conn.execute(give_up, (now, *params)).rowcount
    take_back = f"UPDATE lookup_tasks SET {_TAKEN_BACK} WHERE {where}"  # noqa: S608 - only ? placeholders
    back = conn.execute(take_back, params).rowcount
    return int(failed_now) + int(back)


def claim(
    conn: sqlite3.Connection, *, now: float, owner: str, lease_until: float, limit: int
) -> list[Task]:
    """Mark up to ``limit`` ready tasks ``in_progress`` for ``owner`` and return them.

    Ready: ``pending`` with no retry time or one that is due. Shallow first, then first in,
    first out (the seed's dispatcher). One ``UPDATE … RETURNING`` (SQLite ≥ 3.35), so two
    processes sharing the file never claim the same task: the write lock serialises them.
    """
    rows = conn.execute(
        "UPDATE lookup_tasks SET status = 'in_progress', attempts = attempts + 1,"
        " started_at = ?, lease_owner = ?, lease_until = ?"
        " WHERE id IN (SELECT id FROM lookup_tasks WHERE status = 'pending'"
        " AND (next_retry_at IS NULL OR next_retry_at <= ?) ORDER BY depth, id LIMIT ?)"
        " RETURNING id, datasource, package, version_constraint, depth, attempts, max_attempts,"
        " base_url, checkout_root, wanted, followed",
        (now, owner, lease_until, now, limit),
    ).fetchall()
    tasks = [
        Task(
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            r[5],
            r[6],
            r[7],
            r[8],
            wanted=tuple(_json_list(r[9])),
            followed_versions=tuple(v for v in _json_list(r[10], "versions") if v is not None),
        )
        for r in rows
    ]
    # RETURNING gives rows in no promised order.
    return sorted(tasks, key=lambda t: (t.depth, t.id))


def still_claimed(conn: sqlite3.Connection, ident: int, *, owner: str) -> bool:
    """Whether ``owner`` still holds the task ``ident`` (the seed's check before the work).

    False once another process took it over (this one stalled past its lease) or finished
    it: the work is then not done twice.
    """
    row = conn.execute(
        "SELECT 1 FROM lookup_tasks WHERE id = ? AND lease_owner = ? AND status = 'in_progress'",
        (ident, owner),
    ).fetchone()
    return row is not None


def open_count(conn: sqlite3.Connection) -> int:
    """Tasks ``pending`` or ``in_progress`` (what the progress bar shows as left)."""
    row = conn.execute(
        "SELECT count(*) FROM lookup_tasks WHERE status IN ('pending', 'in_progress')"
    ).fetchone()
    return int(row[0])


def renew(conn: sqlite3.Connection, *, owner: str, ids: Sequence[int], until: float) -> None:
    """Extend ``owner``'s leases on the tasks ``ids`` it is still working on."""
    conn.executemany(
        "UPDATE lookup_tasks SET lease_until = ?"
        " WHERE id = ? AND lease_owner = ? AND status = 'in_progress'",
        [(until, ident, owner) for ident in ids],
    )


def complete(
    conn: sqlite3.Connection,
    ident: int,
    *,
    owner: str,
    result: str,
    now: float,
    handled: Sequence[str | None] = (),
    versions: Sequence[str] = (),
) -> TaskStatus | None:
    """Mark ``owner``'s task ``ident`` completed with ``result``; its status, or ``None``.

    ``handled`` are the constraints this attempt resolved (its own always counts), ``versions``
    the versions whose
    dependencies it enqueued (added to ``followed``). A constraint it was reached with
    meanwhile (``wanted``, not handled) leaves it ``pending`` (due at once, attempts reset)
    to follow that one too. ``None`` when the task is no longer ``owner``'s.
    """
    row = conn.execute(
        "SELECT followed, wanted, version_constraint FROM lookup_tasks"
        " WHERE id = ? AND lease_owner = ? AND status = 'in_progress'",
        (ident, owner),
    ).fetchone()
    if row is None:
        return None
    # The constraint it was claimed with is resolved by any attempt that completes it.
    mine = [*_json_list(row[0], "constraints"), row[2], *handled]
    constraints = list(dict.fromkeys(mine))
    known = [v for v in _json_list(row[0], "versions") if v is not None]
    followed = json.dumps(
        {"constraints": constraints, "versions": list(dict.fromkeys([*known, *versions]))}
    )
    left = [c for c in _json_list(row[1]) if c not in constraints]
    if left:
        conn.execute(
            "UPDATE lookup_tasks SET status = 'pending', origin = 'warm', result = ?,"
            " version_constraint = ?, wanted = ?, followed = ?, attempts = 0,"
            " error_message = NULL, next_retry_at = NULL, lease_owner = NULL, lease_until = NULL"
            " WHERE id = ?",
            (result, left[0], json.dumps(left[1:]) if left[1:] else None, followed, ident),
        )
        return "pending"
    conn.execute(
        "UPDATE lookup_tasks SET status = 'completed', origin = 'warm', result = ?,"
        " error_message = NULL, completed_at = ?, next_retry_at = NULL, lease_owner = NULL,"
        " lease_until = NULL, followed = ?, wanted = NULL WHERE id = ?",
        (result, now, followed, ident),
    )
    return "completed"


def fail(
    conn: sqlite3.Connection,
    ident: int,
    *,
    owner: str,
    error: str,
    now: float,
    final: bool = False,
) -> TaskStatus | None:
    """Record a failed attempt of ``owner``'s task ``ident``; the status it is left in.

    ``pending`` with ``next_retry_at`` = now + ``backoff(attempts)`` while attempts remain,
    else (or when ``final``: retrying cannot help) ``failed``. ``None`` when the task is no
    longer ``owner``'s (its lease was taken over).
    """
    row = conn.execute(
        "SELECT attempts, max_attempts FROM lookup_tasks"
        " WHERE id = ? AND lease_owner = ? AND status = 'in_progress'",
        (ident, owner),
    ).fetchone()
    if row is None:
        return None
    attempts, limit = int(row[0]), int(row[1])
    done = final or attempts >= limit
    status: TaskStatus = "failed" if done else "pending"
    conn.execute(
        "UPDATE lookup_tasks SET status = ?, error_message = ?, completed_at = ?,"
        " next_retry_at = ?, lease_owner = NULL, lease_until = NULL WHERE id = ?",
        (status, error, now if done else None, None if done else now + backoff(attempts), ident),
    )
    return status


_RETRIED = (
    "status = 'pending', origin = 'warm', attempts = 0, max_attempts = ?, next_retry_at = NULL,"
    " completed_at = NULL"
)


def retry(conn: sqlite3.Connection, *, package: str | None, max_attempts: int) -> list[int]:
    """Put failed tasks (of ``package``, any datasource; ``None``: all) back to pending.

    Attempts are reset (``max_attempts`` is the new limit) and the retry is due at once; the
    last error is kept until the task ends again. Returns their ids.
    """
    where = "status = 'failed'" + (" AND package = ?" if package is not None else "")
    sql = f"UPDATE lookup_tasks SET {_RETRIED} WHERE {where} RETURNING id"  # noqa: S608 - only ? placeholders
    params = (max_attempts,) if package is None else (max_attempts, package)
    rows = conn.execute(sql, params).fetchall()
    return sorted(int(r[0]) for r in rows)


def reopen_deeper(conn: sqlite3.Connection, *, max_depth: int, max_attempts: int) -> list[int]:
    """Put tasks failed for reaching a lower depth limit back to pending; their ids.

    A task failed with "depth N reaches the limit of L" (``warm``'s reason) at a depth below
    ``max_depth`` is within this warm's limit: a larger ``--cache-max-depth`` takes it up.
    """
    rows = conn.execute(
        f"UPDATE lookup_tasks SET {_RETRIED} WHERE status = 'failed' AND depth < ?"  # noqa: S608 - only ? placeholders
        " AND error_message LIKE 'depth % reaches the limit of %' RETURNING id",
        (max_attempts, max_depth),
    ).fetchall()
    return sorted(int(r[0]) for r in rows)


def summary(conn: sqlite3.Connection) -> TaskSummary:
    """Counts per status (every status named, 0 when none), oldest pending, next retry due."""
    counts: dict[str, int] = dict.fromkeys(STATUSES, 0)
    for status, count in conn.execute(
        "SELECT status, count(*) FROM lookup_tasks GROUP BY status"
    ).fetchall():
        counts[str(status)] = int(count)
    oldest, upcoming = conn.execute(
        "SELECT min(created_at), min(next_retry_at) FROM lookup_tasks WHERE status = 'pending'"
    ).fetchone()
    (unknown,) = conn.execute(
        "SELECT count(*) FROM lookup_tasks WHERE status = 'completed'"
        " AND result LIKE '%\"dependenciesUnknown\"%'"
    ).fetchone()
    return TaskSummary(counts, oldest, upcoming, int(unknown))


def failed(conn: sqlite3.Connection) -> list[FailedTask]:
    """Tasks failed for good, most recently failed first (then by package)."""
    rows = conn.execute(
        "SELECT package, datasource, error_message, attempts, completed_at, triggered_by, depth"
        " FROM lookup_tasks WHERE status = 'failed' ORDER BY completed_at DESC, package, datasource"
    ).fetchall()
    return [FailedTask(str(r[0]), str(r[1]), r[2], int(r[3]), r[4], r[5], int(r[6])) for r in rows]
