"""The one exit-code table of design.md §3: a report and ``--fail-on`` → the process exit code.

0 nothing matched ``--fail-on``, 1 findings matched ``--fail-on`` (under a gate, a dependency
that could not be judged, status ``unknown``, matches too unless ``--allow-unknown``), 2 usage
or configuration error, 3 some lookups failed (or, ``--offline``, were not in the cache).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from patchula.errors import NOT_CACHED

if TYPE_CHECKING:
    from patchula.report.model import DependencyReport, ScanReport

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_LOOKUP_FAILED = 3
_NAMED = 3  # unknown rows a gate note names one by one


def unjudged(report: ScanReport, fail_on: str, *, allow_unknown: bool) -> list[DependencyReport]:
    """The ``unknown`` rows the ``fail_on`` gate counts as matching.

    None when no gate is set (``none``) or with ``allow_unknown``.
    A gate passes only on what it could judge: a row whose status is ``unknown`` (a pin the
    registry does not list, a version with no files, a tag that is no version, a pinned commit
    no tag points at …) may be as far behind as any, so under ``major``, ``outdated`` or
    ``held-back`` it fails the gate as a finding would, like a failed audit check fails
    ``pip-audit --strict``. ``allow_unknown`` (``--allow-unknown``) lets such rows pass. Rows
    that already make the run exit 3 (not in the cache under ``--offline``, a failed part of
    the lookup) are not counted here: no flag lets those pass.
    """
    if fail_on == "none" or allow_unknown:
        return []
    return [
        d
        for r in report.repositories
        for d in r.dependencies
        # Not in the cache (``--offline``) or a part of the lookup failed: exit 3 already.
        if d.status == "unknown" and d.failed_lookup is None and NOT_CACHED not in (d.reason or "")
    ]


def exit_code(report: ScanReport, fail_on: str, *, allow_unknown: bool = False) -> int:
    """Map a report to the process exit code (the one table of design.md §3).

    Failed lookups (an ``error`` row, or a row with a ``failedLookup``: part of its lookup
    failed, such as the publish times its release-age wait needed), lookups ``--offline`` found
    no cached answer for (``summary.notCached``),
    unreadable manifests or targets, and a target list known to be incomplete (an owner not
    listed, merged shards that cut different lists: ``targets``) (3) win over findings (1).
    ``fail_on``: ``none`` never fails on findings;
    ``major`` fails when an outdated dependency's eligible update is major; ``outdated`` when any
    dependency is outdated; ``held-back`` when any is outdated or held back. Under each of those
    three, an ``unknown`` row matches too unless ``allow_unknown`` (see ``unjudged``).
    """
    deps = [d for r in report.repositories for d in r.dependencies]
    targets = report.targets
    if (
        report.summary.not_cached
        or (
            targets is not None
            and (targets.unlisted or targets.mismatched or targets.missing_shards)
        )
        or any(d.status == "error" or d.failed_lookup is not None for d in deps)
        or any(p.severity == "error" for r in report.repositories for p in r.problems)
    ):
        return EXIT_LOOKUP_FAILED
    if fail_on == "major":
        hits = [d for d in deps if d.status == "outdated" and d.update_type == "major"]
    elif fail_on == "outdated":
        hits = [d for d in deps if d.status == "outdated"]
    elif fail_on == "held-back":
        hits = [d for d in deps if d.status in {"outdated", "held-back"}]
    else:
        hits = []
    hits += unjudged(report, fail_on, allow_unknown=allow_unknown)
    return EXIT_FINDINGS if hits else EXIT_OK


def unjudged_note(report: ScanReport, fail_on: str, *, allow_unknown: bool) -> str | None:
    """The stderr sentence naming the ``unknown`` rows that matched ``--fail-on`` (or ``None``).

    At most three rows are named (``name (file:line): reason``), then how many more.
    """
    rows = unjudged(report, fail_on, allow_unknown=allow_unknown)
    if not rows:
        return None
    named = rows[:_NAMED]
    shown = "; ".join(f"{d.name} ({_where(d)}): {d.reason or 'no reason'}" for d in named)
    more = f"; and {len(rows) - _NAMED} more" if len(rows) > _NAMED else ""
    noun = "dependency" if len(rows) == 1 else "dependencies"
    verb = "matches" if len(rows) == 1 else "match"
    return (
        f"{len(rows)} {noun} could not be judged (status unknown) and {verb} --fail-on "
        f"{fail_on}: {shown}{more}; --allow-unknown lets them pass"
    )


def _where(dep: DependencyReport) -> str:
    return dep.file if dep.line is None else f"{dep.file}:{dep.line}"
