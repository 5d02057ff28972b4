"""Pure digest decisions for content-addressed references (images ``sha256:…``, git commits).

A reference may pin a digest beside its tag (``python:3.12@sha256:…``; a GitHub action's
``@<commit sha> # v4.2.2``) or name a tag that is not a version (``latest``, ``stable``; a
branch ``main``): the registry's current digest of that tag then decides whether the row is
current, as Renovate's ``digest`` updates do. A digest that could not be read is never taken as
"unchanged": the row says it could not be read. The words are the datasource's
(``models.DigestTerms``): an image's "digest" and "mutable tag", GitHub's "commit" and "branch".
"""

from __future__ import annotations

from msgspec.structs import replace

from patchula.errors import LookupFailed, NotCached
from patchula.models import IMAGE_DIGESTS, DigestTerms, Finding, Status

# What a digest lookup ended in: the digest, ``None`` (the registry gave none) or the failure.
DigestRead = str | LookupFailed | None


def _unread_status(read: DigestRead) -> Status:
    """``error`` for a failed digest lookup, ``unknown`` for none given or none cached.

    ``NotCached`` (``--offline``) failed nothing upstream: the digest is just not known.
    """
    failed = isinstance(read, LookupFailed) and not isinstance(read, NotCached)
    return "error" if failed else "unknown"


def _unread(tag: str, read: DigestRead, terms: DigestTerms, kind: str = "tag") -> str:
    """Why the digest of ``tag`` (a ``kind``) is not known (``read`` is a failure or ``None``)."""
    what = f"the {terms.digest} of {kind} {tag} could not be read"
    if isinstance(read, LookupFailed):
        # The failure first: a host found unreachable starts the reason as every other row of
        # that host does, so the report groups and counts it with them.
        return f"{read.reason}; {what}"
    return f"{what}: {terms.absent}"


def track_tag(
    tag: str,
    pinned: str | None,
    read: DigestRead,
    *,
    terms: DigestTerms = IMAGE_DIGESTS,
    kind: str | None = None,
) -> Finding:
    """The verdict of a reference whose tag is not a version: it tracks the tag's digest.

    ``pinned`` is the digest the reference pins (``None``: none), ``read`` what the tag points
    at now. ``terms`` are the datasource's words; ``kind`` what the ref is (default
    ``terms.ref``: an image's "mutable tag"; a GitHub ref is a "branch", or a "tag" its tag
    list names). Unpinned: ``up-to-date`` ("tracks the mutable tag latest (now sha256:…)",
    "tracks the branch main (now <commit>)"), there is nothing to move to. Pinned:
    ``up-to-date`` while the ref still points at it, else ``outdated`` with update type
    ``digest``. An unread digest is ``error`` (the lookup failed) or ``unknown`` (the registry
    gave none, or ``--offline`` found none cached), never "unchanged".
    """
    named = kind or terms.ref
    base = Finding(status="unknown", current=tag, current_source="dist-tag", digest=pinned)
    if not isinstance(read, str):
        status = _unread_status(read)
        return replace(base, status=status, reason=_unread(tag, read, terms, kind or "tag"))
    base = replace(base, current_digest=read)
    if pinned is None or pinned == read:
        return replace(base, status="up-to-date", reason=f"tracks the {named} {tag} (now {read})")
    return replace(
        base,
        status="outdated",
        update_type="digest",
        eligible=tag,
        new_digest=read,
        reason=f"the {named} {tag} moved: pinned {pinned}, now {read}",
    )


def unknown_pin(pinned: str, terms: DigestTerms) -> Finding:
    """The verdict of a pin without a tag that no version of the catalog has as its digest.

    ``unknown`` ("no tag points at the pinned commit <sha>"), never "up to date": the pin may
    be a commit between releases or on a branch, and nothing says how old it is.
    """
    reason = f"no tag points at the pinned {terms.digest} {pinned}"
    return Finding(status="unknown", reason=reason, digest=pinned)


def pinned_digest(
    finding: Finding,
    tag: str,
    pinned: str,
    current: DigestRead,
    new: DigestRead = None,
    *,
    terms: DigestTerms = IMAGE_DIGESTS,
    mismatch: str | None = None,
    platform: str | None = None,
) -> Finding:
    """``finding`` (the verdict of version tag ``tag``) with the digest ``pinned`` beside it judged.

    ``current`` is what ``tag`` points at now; ``new`` what the eligible tag points at (read
    only when a newer tag is proposed; pass ``None`` otherwise). The same digest leaves the tag's
    verdict as it is. A different one is a ``digest`` update: an ``up-to-date`` or
    ``held-back`` row becomes ``outdated`` with update type ``digest`` (the move is there to take
    now); an ``outdated`` row keeps its tag update type (a tag update takes precedence) and says
    the digest moved. A current digest that could not be read makes an ``up-to-date`` row
    ``error`` (a failed lookup) or ``unknown`` (no digest given or cached), never "digest
    unchanged".

    ``terms`` word the notes (``terms.mismatch``: "the digest of tag 3.13 moved: …"; GitHub:
    "the comment says v4.2.2, but the pinned commit … is not v4.2.2's (…)"); ``mismatch``
    replaces that template (``{tag}``, ``{pinned}``, ``{now}``) for a tag found from the pin.
    A GitHub pin whose comment names another commit's tag is thus ``outdated`` with update
    type ``digest`` (or its tag update): Renovate re-pins it to the commit of the tag the
    comment names.

    ``platform`` (``os/architecture``) says ``pinned`` is that platform's manifest inside the
    image index ``current`` names: the tag has not moved for the pin (Renovate keeps
    architecture-specific digests, renovatebot/renovate#16554), and ``new`` is the eligible
    tag's manifest for the same platform. ``current_digest`` is then the pinned manifest.
    """
    notes: list[str] = []
    status, update_type = finding.status, finding.update_type
    if platform is not None and isinstance(current, str):
        notes.append(f"pinned to the {platform} manifest of tag {tag}'s index (now {current})")
        current = pinned
    if isinstance(current, str):
        if current != pinned:
            template = terms.mismatch if mismatch is None else mismatch
            notes.append(template.format(tag=tag, pinned=pinned, now=current))
            if status in {"up-to-date", "held-back"}:
                status, update_type = "outdated", "digest"
    else:
        notes.append(_unread(tag, current, terms))
        if status == "up-to-date":
            status = _unread_status(current)
    eligible = finding.eligible
    proposed = eligible is not None and eligible != tag
    if proposed and not isinstance(new, str):
        notes.append(_unread(str(eligible), new, terms))
    new_digest = new if proposed and isinstance(new, str) else None
    if update_type == "digest" and not proposed and isinstance(current, str):
        # Only the digest moved: the proposal is the same tag at what it points at now
        # (Renovate's digest update), so eligible and the digest to pin say it.
        eligible, new_digest = tag, current
    return replace(
        finding,
        status=status,
        update_type=update_type,
        reason="; ".join([*([finding.reason] if finding.reason else []), *notes]) or None,
        eligible=eligible,
        digest=pinned,
        current_digest=current if isinstance(current, str) else None,
        new_digest=new_digest,
    )
