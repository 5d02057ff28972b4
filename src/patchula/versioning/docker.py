"""Container image tags read as versions, after Renovate's ``docker`` versioning.

A tag (``3.12-slim-bookworm``, ``20.11.1-alpine3.19``, ``v1.22.5``) is an optional leading
``v``, a version part of numbers joined by ``.``, an optional prerelease glued to it
(``3.13.0rc1``, ``17beta2``) and an optional suffix after the first ``-``. A first suffix piece
``alpha``, ``beta``, ``rc``, ``pre``, ``preview`` or ``snapshot`` (with a number: ``rc1``,
``beta.1``) is a prerelease too; the rest of the suffix names the variant (``slim``,
``alpine3.19``). A build number after the version, glued with ``_`` (Eclipse Temurin's
``17.0.10_7-jdk``) or as a first suffix piece of digits alone (``1.2.3-4``, ``4.16.1-20231219``),
orders a tag after its release (``_build``). Java 8's update tags (``8u402-b06-jdk``,
``8u402``) read as ``8.0.402`` with the build ``-b06`` (``_java_update``). A last suffix piece
``rN`` is a packaging revision, ordered after the build (Bitnami's ``7.2.4-debian-12-r9``: the
variant is ``debian-12``; ``_revision``). Tags are compared only within one compatibility
class: same kind, same number of written components, a build and a revision written alike or
none, same variant and with or without a leading ``v`` alike
(``is_compatible``, Renovate's ``isCompatible``, which ignores the ``v``). A prerelease current
may move to prereleases of its own release only (``admits_prerelease``), else to stable tags.

Two kinds of tag hold numbers: versions and dates. A tag whose first component is a year
(4 digits, 1970-2199: ``2024.03.29``, ``2024.3.1``), a compact date (``20240329``,
``202403291230``) or ``YYYY-MM-DD`` is a date; dates sort above every version and are
compared only with dates. A word then a compact date (``jammy-20240227``: a date-stamped
snapshot of the ``jammy`` tag, ``_snapshot``) is a date compared only with snapshots of the
same word and variant. Commit hashes (7-40 lower-case hex digits with a letter, as
Renovate, or 64), ``latest``, ``stable``, ``edge``, ``mainline`` and other words are not versions.

Sources: renovatebot/renovate ``lib/modules/versioning/docker/index.ts`` and its spec (the
rules above, "shorter is bigger": ``3.12`` sorts above ``3.12.1`` because that tag follows the
newest ``3.12.x``); the OCI distribution spec for the tag grammar (``[A-Za-z0-9_][A-Za-z0-9_.-]
{0,127}``). ``compare`` is 0 for tags of one version (``18.04`` and ``18.4``, ``v1.2`` and
``1.2``), yet each tag is its own pin: ``matches`` is equality of the tag text.
"""

from __future__ import annotations

import functools
import re
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from patchula.versioning.base import has_long_number

if TYPE_CHECKING:
    from collections.abc import Iterable

    from patchula.models import UpdateType

ID = "docker"

TAG_SCHEME = True
"""Read by the policy: versions are image tags, so a constraint names one tag (no ranges, and
without a tag there is no version to compare) and registries name no latest (latest is the
newest tag compatible with current)."""

Kind = Literal["version", "date"]

_TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
# Renovate ignores tags that look like a commit (``commitHashPattern``), unless all digits;
# 64 digits too: SHA-256 commits (git's object format) and content-addressed tags.
_COMMIT = re.compile(r"[0-9a-f]{7,40}|[0-9a-f]{64}")
_VERSION_PART = re.compile(
    r"(?P<release>[0-9]+(?:\.[0-9]+)*)(?:_(?P<build>[0-9]+))?(?P<pre>[A-Za-z][A-Za-z0-9]*)?"
)
# A version-shaped start (``1.2``, ``v17.0.10_7``): what ``looks_like_version`` asks of a tag.
_VERSION_START = re.compile(r"v?[0-9]+(?:[._][0-9]+)+")
_PRERELEASE_PIECE = re.compile(
    r"(?:alpha|beta|rc|pre|preview|snapshot)(?:\.?[0-9]+)*", re.IGNORECASE
)
# Java 8 and older (``8u402``): ``MAJOR u UPDATE``, read as ``MAJOR.0.UPDATE``; its build is
# written ``-bNN`` (``8u402-b06-jdk``), as OpenJDK names its update releases (``jdk8u402-b06``).
_JAVA_UPDATE = re.compile(r"(?P<major>[0-9]+)u(?P<update>[0-9]+)")
_JAVA_BUILD = re.compile(r"b(?P<build>[0-9]+)")
# A packaging revision as the last suffix piece (Bitnami's ``7.2.4-debian-12-r9``).
_REVISION = re.compile(r"r(?P<revision>[0-9]+)")
_DASH_DATE = re.compile(r"(?P<y>[0-9]{4})-(?P<m>[0-9]{2})-(?P<d>[0-9]{2})(?:-(?P<rest>.+))?")
_SEGMENTS = re.compile(r"[0-9]+|[A-Za-z]+")
_MIN_YEAR, _MAX_YEAR = 1970, 2199
_YEAR_DIGITS = 4
# A compact date: YYYYMMDD, optionally with hhmm or hhmmss.
_COMPACT_DATE_DIGITS = (8, 12, 14)
_MAJOR, _MINOR = 0, 1


class _Tag(msgspec.Struct, frozen=True):
    kind: Kind
    form: str  # how the numbers are written: "dotted", "compact", "dash"; "v…" with a ``v``
    written: int  # number of components as written (``20240329`` is one)
    release: tuple[int, ...]  # numbers to order by (a compact date is year, month, day, ...)
    pre: tuple[int | str, ...] | None  # prerelease segments, ``None`` for a stable tag
    suffix: str  # the variant after the version (``slim-bookworm``), ``""`` for none
    build: int | None = None  # the build number after ``_`` or ``-`` (``17.0.10_7``, ``1.2.3-4``)
    revision: int | None = None  # the packaging revision ``-rN`` ending the tag (``-debian-12-r9``)

    @property
    def numbers(self) -> tuple[int, ...]:
        """The release, build and revision: what orders two tags and names their update type."""
        extra = tuple(n for n in (self.build, self.revision) if n is not None)
        return (*self.release, *extra) if extra else self.release


def _segments(label: str) -> tuple[int | str, ...]:
    """``rc.10`` → ``("rc", 10)``: numbers compare numerically (``rc10`` above ``rc9``)."""
    return tuple(int(s) if s.isdigit() else s.lower() for s in _SEGMENTS.findall(label))


def _compact_date(digits: str) -> tuple[int, ...] | None:
    if len(digits) not in _COMPACT_DATE_DIGITS:
        return None
    fields = [int(digits[i : i + 2]) for i in range(4, len(digits), 2)]
    parts = (int(digits[:4]), *fields)
    return parts if _real_instant(parts) else None


def _real_instant(parts: tuple[int, ...]) -> bool:
    year, month, day, hour, minute, second = (*parts, 0, 0, 0)[:6]
    if not _MIN_YEAR <= year <= _MAX_YEAR:
        return False
    try:
        # Only checks that the fields name a real instant; no time zone is involved.
        datetime(year, month, day, hour, minute, second)  # noqa: DTZ001
    except ValueError:
        return False
    return True


def _split_suffix(rest: str, pre: str | None) -> tuple[tuple[int | str, ...] | None, str]:
    """Return (prerelease segments, variant) of what follows the first ``-``."""
    pieces = rest.split("-") if rest else []
    if pre is None and pieces and _PRERELEASE_PIECE.fullmatch(pieces[0]):
        return _segments(pieces[0]), "-".join(pieces[1:])
    return (_segments(pre) if pre is not None else None), "-".join(pieces)


# Tags are parsed again and again while sorting one tag list; memoise.
@functools.lru_cache(maxsize=65536)
def _parse(tag: str) -> _Tag | None:
    if not is_valid_constraint(tag):
        return None
    if _COMMIT.fullmatch(tag) and not tag.isdigit():
        return None
    text = tag.removeprefix("v")
    v = "v" if text != tag else ""
    dash_date = _DASH_DATE.fullmatch(text)
    if dash_date is not None:
        parts = (int(dash_date["y"]), int(dash_date["m"]), int(dash_date["d"]))
        if _real_instant(parts):
            pre, suffix = _split_suffix(dash_date["rest"] or "", None)
            return _Tag("date", f"{v}dash", 3, parts, pre, suffix)
    head, _, rest = text.partition("-")
    java = _JAVA_UPDATE.fullmatch(head)
    if java is not None:
        return _java_update(v, java, rest)
    match = _VERSION_PART.fullmatch(head)
    if match is None:
        return _snapshot(tag)
    written = match["release"].split(".")
    numbers = tuple(int(n) for n in written)
    build, glued = _build(match["build"], match["pre"], rest)
    if glued == "-":
        rest = rest.partition("-")[2]
    pre, suffix = _split_suffix(rest, match["pre"])
    suffix, revision = _revision(suffix)
    glued += "-r" if revision is not None else ""
    compact = _compact_date(written[0])
    if compact is not None:
        form = f"{v}compact{glued}"
        release = compact + numbers[1:]
        return _Tag("date", form, len(written), release, pre, suffix, build, revision)
    kind: Kind = "version"
    if len(written[0]) == _YEAR_DIGITS and _MIN_YEAR <= numbers[0] <= _MAX_YEAR:
        kind = "date"
    return _Tag(kind, f"{v}dotted{glued}", len(written), numbers, pre, suffix, build, revision)


def _java_update(v: str, match: re.Match[str], rest: str) -> _Tag:
    """A Java 8 (or older) update tag: ``8u402-b06-jdk``, ``8u402-b06-jre-jammy``, ``8u402``.

    ``MAJOR u UPDATE`` is Java's own name of an update release of a line before Java 9
    (``java -version`` says ``1.8.0_402``; JEP 223 replaced the scheme from 9 on): read as
    ``MAJOR.0.UPDATE``, so an update is a ``patch``. A first suffix piece ``bNN`` is the build
    (OpenJDK's ``jdk8u402-b06``, Eclipse Temurin's and AdoptOpenJDK's tags), ordered after the
    update; the rest of the suffix (``jdk``, ``jre-jammy``, ``al2``) is the variant, which a
    newer tag must share, with a build written alike or none (openjdk's ``8u342-jdk``,
    amazoncorretto's ``8u402``). Renovate's docker versioning reads ``8u402`` as major ``8``
    with the prerelease ``u402`` and proposes ``8-jdk`` or nothing (renovatebot/renovate#19678,
    open; its ``workarounds:javaLTSVersions`` regex reads no ``u``).
    """
    release = (int(match["major"]), 0, int(match["update"]))
    first, _, after = rest.partition("-")
    build_match = _JAVA_BUILD.fullmatch(first)
    build = int(build_match["build"]) if build_match is not None else None
    if build is not None:
        rest = after
    pre, suffix = _split_suffix(rest, None)
    suffix, revision = _revision(suffix)
    glued = ("-b" if build is not None else "") + ("-r" if revision is not None else "")
    return _Tag("version", f"{v}java-update{glued}", 3, release, pre, suffix, build, revision)


def _revision(suffix: str) -> tuple[str, int | None]:
    """Split a packaging revision ``rN`` off the end of the variant ``suffix``.

    Bitnami tags every rebuild of a release on one base as ``7.2.4-debian-12-r9``
    (``{version}-{os}-{os major}-r{revision}``, "Understand Bitnami's rolling tags", and the
    ``revision`` of Renovate's ``workarounds:bitnamiDockerImageVersioning``); Alpine's package
    releases are written alike (``1.2.3-r1``). The revision orders the tags of one release
    numerically (``-r10`` after ``-r9``), after its build, and the variant is what precedes it
    (``debian-12``): a newer release restarts at ``-r0``, in the same variant. Returns the
    variant and the revision (``None`` when the suffix ends in no ``rN``).
    """
    variant, dash, last = suffix.rpartition("-")
    match = _REVISION.fullmatch(last)
    if match is None:
        return suffix, None
    return (variant if dash else ""), int(match["revision"])


def _build(underscored: str | None, pre: str | None, rest: str) -> tuple[int | None, str]:
    """The build number of a tag and how it is glued (``"_"``, ``"-"``; ``""``: no build).

    ``17.0.10_7-jdk``: Eclipse Temurin's (and other JDK images') ``MAJOR.MINOR.PATCH_BUILD``,
    which Renovate's ``workarounds:javaLTSVersions`` preset reads with a ``regex:`` versioning
    whose ``build`` follows ``[._+]`` (``lib/config/presets/internal/workarounds.ts``); an OCI
    tag cannot hold ``+``, so only ``_`` is read here. ``1.2.3-4``, ``4.16.1-20231219``: a first
    suffix piece of digits alone after a stable version is a build (a package revision, a
    build date) rather than a variant, which would make every rebuild a variant of its own.
    Renovate's docker versioning reads ``_7`` as a prerelease and ``-4`` as a variant; here
    both order a tag after its release, and only tags with a build glued the same way are
    compatible with it.
    """
    if underscored is not None:
        return int(underscored), "_"
    first = rest.partition("-")[0]
    if pre is None and first.isascii() and first.isdigit():
        return int(first), "-"
    return None, ""


def _snapshot(tag: str) -> _Tag | None:
    """A date-stamped snapshot of a named tag: ``jammy-20240227``, ``bookworm-20240211-slim``.

    A word (letters only: a codename such as ``jammy``, ``bookworm``) then a compact date
    (``YYYYMMDD``, optionally ``hhmm[ss]``), then an optional variant: the date orders the
    snapshots of one name (and variant), which are compatible only with each other. Each
    snapshot names one build for good (a new build gets a new date), so the newest date is the
    latest, as the image's publishers mean them. Renovate's docker versioning reads no such
    tag as a version (a version must start with a number), and its users reach for a
    ``regex:^(?<compatibility>.*)-(?<major>[0-9]+)$`` versioning: this is that rule, limited to
    real dates so that ``foo-1`` stays no version. A newer snapshot is a ``patch`` update (a
    rebuild of the same named release, whatever the calendar says).
    """
    name, _, rest = tag.partition("-")
    stamp, _, variant = rest.partition("-")
    if not name.isascii() or not name.isalpha() or not stamp.isdigit():
        return None
    date = _compact_date(stamp)
    if date is None:
        return None
    suffix = f"{name}-{variant}" if variant else name
    return _Tag("date", "snapshot", 1, date, None, suffix)


def is_valid(version: str) -> bool:
    """Return whether the tag ``version`` reads as a version or a date (not ``latest``)."""
    return _parse(version) is not None


def looks_like_version(tag: str) -> bool:
    """Return whether ``tag`` starts like a version yet reads as none (``1.2.3.Final``).

    Numbers joined by ``.`` or ``_`` at its start (``v`` allowed), and not a commit hash: such
    a tag most likely names one release for good, so tracking its digest says nothing about
    newer releases. Read by the scan (``scan._tracked``): its row is ``unknown``, never
    "up to date".
    """
    if is_valid(tag) or (_COMMIT.fullmatch(tag) and not tag.isdigit()):
        return False
    return _VERSION_START.match(tag) is not None


def release_of(version: str) -> tuple[int, ...] | None:
    """The numbers of the version tag ``version`` (``20.11.1-alpine`` → ``(20, 11, 1)``).

    ``None`` for a date, a prerelease or a tag that is no version: for schemes that narrow
    which stable tags are stable (``node_image``, ``ubuntu_image``).
    """
    parsed = _parse(version)
    if parsed is None or parsed.kind != "version" or parsed.pre is not None:
        return None
    return parsed.release


def is_stable(version: str) -> bool:
    """Return whether ``version`` is a valid tag without a prerelease (``3.13-rc`` is not)."""
    parsed = _parse(version)
    return parsed is not None and parsed.pre is None


def is_compatible(current: str, other: str) -> bool:
    """Return whether a user on tag ``current`` could move to tag ``other``.

    Both are valid, of the same kind and written form, with as many components and the same
    variant suffix: ``3.12-slim`` → ``3.13-slim``, never ``3.13.1-slim`` or ``3.13``
    (Renovate's ``isCompatible``); ``v1.2`` → ``v1.3`` and ``1.2`` → ``1.3``, never across,
    so that one version published as ``1.3`` and ``v1.3`` is proposed in the form in use.
    Stability is not considered: ``3.13-rc-slim`` is compatible with ``3.12-slim`` and the
    policy leaves it out as a prerelease.
    """
    a, b = _parse(current), _parse(other)
    if a is None or b is None:
        return False
    return (a.kind, a.form, a.written, a.suffix) == (b.kind, b.form, b.written, b.suffix)


def is_other_variant(current: str, other: str) -> bool:
    """Return whether ``other`` is the same kind of version tag as ``current`` in another variant.

    Both version tags (not dates or snapshots) written alike (form, components, build and
    revision) with different suffixes: ``7.4.1-debian-12-r3`` for ``7.2.4-debian-11-r40``,
    ``22-alpine3.20`` for ``20-alpine3.18``. Read by the policy (``policy.memo``): a row never
    moves across variants, so when the newest release is tagged only in another one (a
    retired base image) the row says so instead of looking up to date in silence.
    """
    a, b = _parse(current), _parse(other)
    if a is None or b is None or a.kind != "version" or b.kind != "version":
        return False
    return (a.form, a.written) == (b.form, b.written) and a.suffix != b.suffix


def finer_line(current: str, other: str) -> tuple[int, ...] | None:
    """The line at ``current``'s precision that the more precise tag ``other`` belongs to.

    ``current`` is a floating tag: a stable version tag written with fewer components than
    ``other`` (``v1`` beside ``v2.0.0``, ``4.2-alpine`` beside ``4.3.1-alpine``), of the same
    written form (a leading ``v`` or none), the same variant and neither with a build or a
    revision. Returns ``other``'s release cut to ``current``'s components (``v2.0.0`` for
    ``v1``: ``(2,)``), ``None`` when ``other`` is no such tag. Read by the policy
    (``policy.memo``): a floating ``v1`` whose newer line has no floating tag of its own (no
    ``v2``, only ``v2.0.0``) is measured against that line's precise tags instead of looking
    up to date (GitHub's "Using tags for release management" moves a major tag ``v1`` along
    its releases; a repository that never made ``v2`` has only ``v2.0.0`` to offer).
    """
    a, b = _parse(current), _parse(other)
    if (
        a is None
        or b is None
        or a.kind != "version"
        or b.kind != "version"
        or a.pre is not None
        or b.pre is not None
        or a.build is not None
        or b.build is not None
        or a.revision is not None
        or b.revision is not None
        or a.form != b.form
        or a.suffix != b.suffix
        or b.written <= a.written
    ):
        return None
    return b.release[: a.written]


def line_tag(current: str, line: tuple[int, ...]) -> str:
    """The floating tag of ``line`` written as ``current`` is: ``("v1", (2,))`` → ``v2``.

    The leading ``v`` and the variant suffix of ``current`` (``4.2-alpine``, ``(4, 3)`` →
    ``4.3-alpine``); for a note naming a tag that may not exist.
    """
    parsed = _parse(current)
    numbers = ".".join(str(n) for n in line)
    if parsed is None:
        return numbers
    prefix = "v" if parsed.form.startswith("v") else ""
    return f"{prefix}{numbers}" + (f"-{parsed.suffix}" if parsed.suffix else "")


def admits_prerelease(current: str, other: str) -> bool:
    """Return whether a user on the prerelease tag ``current`` may move to the prerelease ``other``.

    Only a prerelease of current's own release (same major, minor and patch): ``18beta1`` may
    move to ``18rc1``, never to ``19beta1`` — past its release only to a stable tag (``18``).
    Renovate's ``ignoreUnstable`` (``lib/workers/repository/process/lookup/filter.ts``: an
    unstable candidate must share current's major, minor and patch; the docker versioning
    does not allow unstable major upgrades). Read by the policy (``policy.memo``).
    """
    a, b = _parse(current), _parse(other)
    if a is None or b is None:
        return False
    return a.kind == b.kind and a.release[:3] == b.release[:3]


def _release_key(release: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    # The closing (1, 0) sorts above any number: a shorter release is bigger than one it is a
    # prefix of (``3.12`` above ``3.12.1``), as Renovate orders them.
    return (*((0, n) for n in release), (1, 0))


@functools.lru_cache(maxsize=65536)
def sort_key(version: str) -> Any:  # noqa: ANN401 - the protocol leaves the key opaque
    """Return an ordering key; invalid tags get ``(0, tag)`` and sort first.

    A valid key is ``(1, kind, release, prerelease, variant)``: versions below dates; the
    release (then its build and revision: ``8u402-b06`` is ``8.0.402`` build 6, ``-r9``
    revision 9) numerically by component, a shorter one above the longer ones it prefixes; a
    prerelease below its release; no variant above a variant, variants in ASCII order. A
    leading ``v`` and leading zeros do not count (``v18.04`` equals ``18.4``).
    """
    parsed = _parse(version)
    if parsed is None:
        return (0, version)
    pre: tuple[Any, ...] = (
        (1,)
        if parsed.pre is None
        else (0, *((0, s) if isinstance(s, int) else (1, s) for s in parsed.pre))
    )
    variant = (1, "") if not parsed.suffix else (0, parsed.suffix)
    kind = 0 if parsed.kind == "version" else 1
    return (1, kind, _release_key(parsed.numbers), pre, variant)


def compare(a: str, b: str) -> int:
    """Return -1, 0 or 1 as tag ``a`` sorts before, equal to (one version) or after ``b``."""
    key_a, key_b = sort_key(a), sort_key(b)
    return int(key_a > key_b) - int(key_a < key_b)


def is_valid_constraint(constraint: str) -> bool:
    """Return whether ``constraint`` is a tag by the OCI grammar (a tag pins; no ranges)."""
    return _TAG.fullmatch(constraint) is not None and not has_long_number(constraint)


def exact_pin(constraint: str) -> str | None:
    """Return the tag itself: an image tag is a pin, also when it is not a version."""
    return constraint if is_valid_constraint(constraint) else None


def matches(version: str, constraint: str) -> bool:
    """Return whether ``version`` is the tag ``constraint`` (tags have no ranges)."""
    return version == constraint and is_valid_constraint(constraint)


def max_satisfying(versions: Iterable[str], constraint: str) -> str | None:
    """Return the tag ``constraint`` when ``versions`` lists it, else ``None``."""
    return constraint if any(matches(v, constraint) for v in versions) else None


def update_type(current: str, new: str) -> UpdateType | None:
    """Return major/minor/patch by the first component that differs when ``new`` is newer.

    Components count from the left (a date's year, month, day); a tag that only moves a
    prerelease forward (``3.13-rc1`` → ``3.13``) and a newer snapshot (``jammy-20240227`` →
    ``jammy-20251001``) are ``patch``. ``None`` when either tag is
    not a version, the kinds differ, ``new`` is not newer, or only the variant differs.
    """
    old, fresh = _parse(current), _parse(new)
    if old is None or fresh is None or old.kind != fresh.kind or compare(new, current) <= 0:
        return None
    if old.form == fresh.form == "snapshot":
        return "patch"  # a newer build of the same named release (``_snapshot``)
    before, after = old.numbers, fresh.numbers
    for position in range(max(len(before), len(after))):
        if before[position : position + 1] != after[position : position + 1]:
            if position == _MAJOR:
                return "major"
            return "minor" if position == _MINOR else "patch"
    return "patch" if old.pre != fresh.pre else None
