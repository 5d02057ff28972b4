"""Pure digest decisions for content-addressed references (container images, ``sha256:…``).

A reference may pin a digest beside its tag (``python:3.12@sha256:…``) or name a tag that is
not a version (``latest``, ``stable``): the registry's current digest of that tag then decides
whether the row is current, as Renovate's ``digest`` updates do. A digest that could not be read
is never taken as "unchanged": the row says it could not be read.
"""

from __future__ import annotations

from dataclasses import replace

from patchula.errors import LookupFailed
from patchula.models import Finding, Status

# What a digest lookup ended in: the digest, ``None`` (the registry gave none) or the failure.
DigestRead = str | LookupFailed | None


def _unread(tag: str, read: DigestRead) -> str:
    """Why the digest of ``tag`` is not known (``read`` is a failure or ``None``)."""
    if isinstance(read, LookupFailed):
        # The failure first: a host found unreachable starts the reason as every other row of
        # that host does, so the report groups and counts it with them.
        return f"{read.reason}; the digest of tag {tag} could not be read"
    return f"the digest of tag {tag} could not be read: the registry gave none"


def track_tag(tag: str, pinned: str | None, read: DigestRead) -> Finding:
    """The verdict of a reference whose tag is not a version: it tracks the tag's digest.

    ``pinned`` is the digest the reference pins (``None``: none), ``read`` what the tag points
    at now. Unpinned: ``up-to-date`` ("tracks the mutable tag latest (now sha256:…)"), there
    is nothing to move to. Pinned: ``up-to-date`` while the tag still points at it, else
    ``outdated`` with update type ``digest``. An unread digest is ``error`` (the lookup failed)
    or ``unknown`` (the registry gave none), never "unchanged".
    """
    base = Finding(status="unknown", current=tag, current_source="dist-tag", digest=pinned)
    if not isinstance(read, str):
        status: Status = "error" if isinstance(read, LookupFailed) else "unknown"
        return replace(base, status=status, reason=_unread(tag, read))
    base = replace(base, current_digest=read)
    if pinned is None or pinned == read:
        return replace(
            base, status="up-to-date", reason=f"tracks the mutable tag {tag} (now {read})"
        )
    return replace(
        base,
        status="outdated",
        update_type="digest",
        reason=f"the mutable tag {tag} moved: pinned {pinned}, now {read}",
    )


def pinned_digest(
    finding: Finding, tag: str, pinned: str, current: DigestRead, new: DigestRead = None
) -> Finding:
    """``finding`` (the verdict of version tag ``tag``) with the digest ``pinned`` beside it judged.

    ``current`` is what ``tag`` points at now; ``new`` what the eligible tag points at (read
    only when a newer tag is proposed; pass ``None`` otherwise). The same digest leaves the tag's
    verdict as it is. A different one is a ``digest`` update: an ``up-to-date`` or
    ``held-back`` row becomes ``outdated`` with update type ``digest`` (the move is there to take
    now); an ``outdated`` row keeps its tag update type (a tag update takes precedence) and says
    the digest moved. A current digest that could not be read makes an ``up-to-date`` row
    ``error`` (a failed lookup) or ``unknown`` (no digest given), never "digest unchanged".
    """
    notes: list[str] = []
    status, update_type = finding.status, finding.update_type
    if isinstance(current, str):
        if current != pinned:
            notes.append(f"the digest of tag {tag} moved: pinned {pinned}, now {current}")
            if status in {"up-to-date", "held-back"}:
                status, update_type = "outdated", "digest"
    else:
        notes.append(_unread(tag, current))
        if status == "up-to-date":
            status = "error" if isinstance(current, LookupFailed) else "unknown"
    eligible = finding.eligible
    proposed = eligible is not None and eligible != tag
    if proposed and not isinstance(new, str):
        notes.append(_unread(str(eligible), new))
    return replace(
        finding,
        status=status,
        update_type=update_type,
        reason="; ".join([*([finding.reason] if finding.reason else []), *notes]) or None,
        digest=pinned,
        current_digest=current if isinstance(current, str) else None,
        new_digest=new if proposed and isinstance(new, str) else None,
    )
