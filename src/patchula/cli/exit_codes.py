"""The one exit-code table of design.md §3: a report and ``--fail-on`` → the process exit code.

0 nothing matched ``--fail-on``, 1 findings matched ``--fail-on``, 2 usage or configuration
error, 3 some lookups failed (or, ``--offline``, were not in the cache).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from patchula.report.model import ScanReport

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_LOOKUP_FAILED = 3


def exit_code(report: ScanReport, fail_on: str) -> int:
    """Map a report to the process exit code (the one table of design.md §3).

    Failed lookups (an ``error`` row, or a row with a ``failedLookup``: part of its lookup
    failed, such as the publish times its release-age wait needed), lookups ``--offline`` found
    no cached answer for (``summary.notCached``),
    unreadable manifests or targets, and a target list known to be incomplete (an owner not
    listed, merged shards that cut different lists: ``targets``) (3) win over findings (1).
    ``fail_on``: ``none`` never fails on findings;
    ``major`` fails when an outdated dependency's eligible update is major; ``outdated`` when any
    dependency is outdated; ``held-back`` when any is outdated or held back.
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
    return EXIT_FINDINGS if hits else EXIT_OK
