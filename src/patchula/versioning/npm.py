"""npm semver versions and ranges, evaluated on parsed tuples (npm's node-semver semantics).

A range is parsed once, exactly as node-semver 7.8 (``classes/range.js``, ``internal/re.js``)
desugars it with default options (not loose, ``includePrerelease`` false): the same regular
expressions rewrite hyphen ranges, x-ranges, ``~``, ``^`` (0.x rules included), ``*`` and
``""`` into sets of primitive comparators, which are then compiled to precedence keys. Matching
a version is tuple comparison. A prerelease satisfies a comparator set only when a comparator
of that set has a prerelease on the same ``[major, minor, patch]``
(github.com/npm/node-semver#prerelease-tags).

Versions are parsed as ``semver.clean`` does (surrounding spaces and leading ``=``/``v``
dropped, then strict semver 2.0.0), with node-semver's bounds: at most 256 characters and
components no larger than ``Number.MAX_SAFE_INTEGER``. The one deliberate difference from
node-semver: numeric prerelease identifiers of 16 digits and more compare exactly (semver
2.0.0 §11) rather than as JavaScript doubles.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any, NamedTuple

from patchula.versioning.base import has_long_number

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from patchula.models import UpdateType

ID = "npm"

# node-semver ``internal/constants.js``.
MAX_LENGTH = 256
MAX_SAFE_INTEGER = 2**53 - 1

# What JavaScript's ``\s`` and ``String.prototype.trim`` treat as white space (ECMA-262
# WhiteSpace and LineTerminator); Python's ``\s`` and ``str.strip`` differ (``\x1c``-``\x1f``,
# ``\x85``; no ``\ufeff``), so node-semver's whitespace rules are spelled out.
_SPACE = "\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_S = f"[{_SPACE}]"
_SPACE_RUN = re.compile(f"{_S}+")
_TRIM = re.compile(f"\\A{_S}+|{_S}+\\Z")


def _trim(text: str) -> str:
    return _TRIM.sub("", text)


# What ``semver.clean`` strips before parsing: surrounding spaces and leading ``=`` / ``v``.
_LENIENT_PREFIX = re.compile(f"\\A[=v{_SPACE}]+")


def _safe(source: str) -> str:
    """Apply node-semver's ``makeSafeRegex``: bound the greedy tokens it bounds."""
    for token, most in (("\\s", 1), ("\\d", MAX_LENGTH), ("[a-zA-Z0-9-]", MAX_LENGTH - 6)):
        source = source.replace(f"{token}*", f"{token}{{0,{most}}}")
        source = source.replace(f"{token}+", f"{token}{{1,{most}}}")
    return source


def _compile(source: str, *, safe: bool = True) -> re.Pattern[str]:
    # ``$`` in JavaScript (no ``m`` flag) is only the end; Python's also matches before a final
    # newline. ``\d`` is ASCII in JavaScript; ``\s`` follows ECMA-262 (``_S``).
    text = (_safe(source) if safe else source).replace("$", r"\Z")
    return re.compile(
        text.replace("[v=\\s]", f"[v={_SPACE}]").replace("\\s", _S).replace("\\d", "[0-9]")
    )


# The sources of node-semver ``internal/re.js``, token for token.
_NUMERIC = r"0|[1-9]\d*"
_NUMERIC_LOOSE = r"\d+"
_NON_NUMERIC = r"\d*[a-zA-Z-][a-zA-Z0-9-]*"
_MAIN = rf"({_NUMERIC})\.({_NUMERIC})\.({_NUMERIC})"
_MAIN_LOOSE = rf"({_NUMERIC_LOOSE})\.({_NUMERIC_LOOSE})\.({_NUMERIC_LOOSE})"
_PRE_ID = rf"(?:{_NON_NUMERIC}|{_NUMERIC})"
_PRE_ID_LOOSE = rf"(?:{_NON_NUMERIC}|{_NUMERIC_LOOSE})"
_PRE = rf"(?:-({_PRE_ID}(?:\.{_PRE_ID})*))"
_PRE_LOOSE = rf"(?:-?({_PRE_ID_LOOSE}(?:\.{_PRE_ID_LOOSE})*))"
_BUILD_ID = r"[a-zA-Z0-9-]+"
_BUILD = rf"(?:\+({_BUILD_ID}(?:\.{_BUILD_ID})*))"
_FULL_PLAIN = rf"v?{_MAIN}{_PRE}?{_BUILD}?"
_LOOSE_PLAIN = rf"[v=\s]*{_MAIN_LOOSE}{_PRE_LOOSE}?{_BUILD}?"
_GTLT = r"((?:<|>)?=?)"
_XID = rf"{_NUMERIC}|x|X|\*"
_XRANGE_PLAIN = rf"[v=\s]*({_XID})(?:\.({_XID})(?:\.({_XID})(?:{_PRE})?{_BUILD}?)?)?"

_FULL = _compile(rf"^{_FULL_PLAIN}$")


class _RangePatterns(NamedTuple):
    """The regexes of node-semver's range desugaring, by their ``internal/re.js`` names."""

    xrange: re.Pattern[str]
    tilde_trim: re.Pattern[str]
    tilde: re.Pattern[str]
    caret_trim: re.Pattern[str]
    caret: re.Pattern[str]
    comparator: re.Pattern[str]
    comparator_trim: re.Pattern[str]
    hyphen: re.Pattern[str]
    star: re.Pattern[str]
    gte0: re.Pattern[str]
    build: re.Pattern[str]
    build_strip: re.Pattern[str]


@functools.cache
def _ranges() -> _RangePatterns:
    """The range regexes, compiled when the first range is parsed (about 11 ms at import).

    Versions (``_parse``) need only ``_FULL``: a scan of exact pins never compiles these.
    """
    return _RangePatterns(
        xrange=_compile(rf"^{_GTLT}\s*{_XRANGE_PLAIN}$"),
        tilde_trim=_compile(r"(\s*)(?:~>?)\s+"),
        tilde=_compile(rf"^(?:~>?){_XRANGE_PLAIN}$"),
        caret_trim=_compile(r"(\s*)(?:\^)\s+"),
        caret=_compile(rf"^(?:\^){_XRANGE_PLAIN}$"),
        comparator=_compile(rf"^{_GTLT}\s*({_FULL_PLAIN})$|^$"),
        comparator_trim=_compile(rf"(\s*){_GTLT}\s*({_LOOSE_PLAIN}|{_XRANGE_PLAIN})"),
        hyphen=_compile(rf"^\s*({_XRANGE_PLAIN})\s+-\s+({_XRANGE_PLAIN})\s*$"),
        star=_compile(r"(<|>)?=?\s*\*"),
        gte0=_compile(r"^\s*>=\s*0\.0\.0\s*$"),
        build=_compile(_BUILD),
        # ``BUILDSTRIPRE`` in range.js is built from the unbounded source.
        build_strip=_compile(_BUILD, safe=False),
    )


_DIGITS = re.compile(r"[0-9]+")

# A parsed version: (major, minor, patch, prerelease identifiers); build metadata dropped.
Version = tuple[int, int, int, tuple[int | str, ...]]
# A precedence key: (major, minor, patch, pre) where a release's ``pre`` is ``(1,)``, above every
# prerelease's ``(0, identifier keys...)``.
Key = tuple[Any, ...]


def _semver(text: str) -> Version | None:
    """node-semver's ``new SemVer(text)`` (strict), or ``None`` where it throws."""
    if len(text) > MAX_LENGTH:
        return None
    match = _FULL.match(_trim(text))
    if match is None:
        return None
    major, minor, patch = int(match[1]), int(match[2]), int(match[3])
    if max(major, minor, patch) > MAX_SAFE_INTEGER:
        return None
    pre: tuple[int | str, ...] = ()
    if match[4]:
        pre = tuple(int(i) if _DIGITS.fullmatch(i) else i for i in match[4].split("."))
    return (major, minor, patch, pre)


def _identifier_key(identifier: int | str) -> tuple[int, int, str]:
    # semver §11: numeric identifiers sort numerically and below alphanumeric ones (ASCII order).
    if isinstance(identifier, int):
        return (0, identifier, "")
    return (1, 0, identifier)


def _key(version: Version) -> Key:
    major, minor, patch, pre = version
    pre_key: tuple[Any, ...] = (0, *(_identifier_key(i) for i in pre)) if pre else (1,)
    return (major, minor, patch, pre_key)


# Versions are parsed again and again while sorting and comparing catalogs; they are immutable
# strings, so memoise.
@functools.lru_cache(maxsize=65536)
def _parse(version: str) -> Version | None:
    cleaned = _LENIENT_PREFIX.sub("", _trim(version))
    if not cleaned or has_long_number(cleaned):
        return None
    return _semver(cleaned)


@functools.lru_cache(maxsize=65536)
def _keyed(version: str) -> tuple[Version, Key] | None:
    """The parsed version and its precedence key, or ``None`` when invalid."""
    parsed = _parse(version)
    return None if parsed is None else (parsed, _key(parsed))


# --- node-semver's range desugaring (classes/range.js), default options -------------------


def _is_x(part: str | None) -> bool:
    return not part or part.lower() == "x" or part == "*"


def _each_word(replace: Callable[[str], str]) -> Callable[[str], str]:
    """Apply ``replace`` to each white-space separated word, as node-semver's replacers do."""

    def apply(comp: str) -> str:
        return " ".join(replace(word) for word in _SPACE_RUN.split(_trim(comp)))

    return apply


def _replace_tilde(comp: str) -> str:
    def tilde(match: re.Match[str]) -> str:
        major, minor, patch, pre = match[1], match[2], match[3], match[4]
        if _is_x(major):
            return ""
        if _is_x(minor):
            return f">={major}.0.0 <{int(major) + 1}.0.0-0"
        if _is_x(patch):
            return f">={major}.{minor}.0 <{major}.{int(minor) + 1}.0-0"
        if pre:
            return f">={major}.{minor}.{patch}-{pre} <{major}.{int(minor) + 1}.0-0"
        return f">={major}.{minor}.{patch} <{major}.{int(minor) + 1}.0-0"

    return _ranges().tilde.sub(tilde, comp, count=1)


def _replace_caret(comp: str) -> str:
    def caret(match: re.Match[str]) -> str:
        major, minor, patch, pre = match[1], match[2], match[3], match[4]
        if _is_x(major):
            return ""
        if _is_x(minor):
            return f">={major}.0.0 <{int(major) + 1}.0.0-0"
        if _is_x(patch):
            if major == "0":
                return f">={major}.{minor}.0 <{major}.{int(minor) + 1}.0-0"
            return f">={major}.{minor}.0 <{int(major) + 1}.0.0-0"
        low = f">={major}.{minor}.{patch}-{pre}" if pre else f">={major}.{minor}.{patch}"
        if major == "0":
            if minor == "0":
                return f"{low} <{major}.{minor}.{int(patch) + 1}-0"
            return f"{low} <{major}.{int(minor) + 1}.0-0"
        return f"{low} <{int(major) + 1}.0.0-0"

    return _ranges().caret.sub(caret, comp, count=1)


def _replace_xrange(comp: str) -> str:
    comp = _trim(comp)

    def xrange(match: re.Match[str]) -> str:
        gtlt, major, minor, patch = match[1], match[2], match[3], match[4]
        if (_is_x(major) and not _is_x(minor)) or (_is_x(minor) and patch and not _is_x(patch)):
            return comp  # ``invalidXRangeOrder``: left for the comparator parser to refuse
        x_major = _is_x(major)
        x_minor = x_major or _is_x(minor)
        any_x = x_minor or _is_x(patch)
        if gtlt == "=" and any_x:
            gtlt = ""
        if x_major:
            return "<0.0.0-0" if gtlt in {">", "<"} else "*"
        if gtlt and any_x:
            m_num = 0 if x_minor else int(minor)
            p_num = 0
            M_num = int(major)  # noqa: N806 - node-semver's M/m/p
            if gtlt == ">":
                # >1 => >=2.0.0, >1.2 => >=1.3.0
                gtlt = ">="
                if x_minor:
                    M_num, m_num = M_num + 1, 0  # noqa: N806
                else:
                    m_num += 1
            elif gtlt == "<=":
                # <=0.7.x is <0.8.0-0: any 0.7.x passes.
                gtlt = "<"
                if x_minor:
                    M_num += 1  # noqa: N806
                else:
                    m_num += 1
            pre = "-0" if gtlt == "<" else ""
            return f"{gtlt}{M_num}.{m_num}.{p_num}{pre}"
        if x_minor:
            return f">={major}.0.0 <{int(major) + 1}.0.0-0"
        if any_x:
            return f">={major}.{minor}.0 <{major}.{int(minor) + 1}.0-0"
        return match[0]

    return _ranges().xrange.sub(xrange, comp, count=1)


def _hyphen(match: re.Match[str]) -> str:
    groups = match.groups()
    start, f_major, f_minor, f_patch = groups[0:4]
    end, t_major, t_minor, t_patch, t_pre = groups[6:11]
    if _is_x(f_major):
        low = ""
    elif _is_x(f_minor):
        low = f">={f_major}.0.0"
    elif _is_x(f_patch):
        low = f">={f_major}.{f_minor}.0"
    else:
        low = f">={start}"
    if _is_x(t_major):
        high = ""
    elif _is_x(t_minor):
        high = f"<{int(t_major) + 1}.0.0-0"
    elif _is_x(t_patch):
        high = f"<{t_major}.{int(t_minor) + 1}.0-0"
    elif t_pre:
        high = f"<={t_major}.{t_minor}.{t_patch}-{t_pre}"
    else:
        high = f"<={end}"
    return _trim(f"{low} {high}")


_replace_tildes = _each_word(_replace_tilde)
_replace_carets = _each_word(_replace_caret)


def _replace_xranges(comp: str) -> str:
    return " ".join(_replace_xrange(word) for word in _SPACE_RUN.split(comp))


def _parse_comparator(comp: str) -> str:
    comp = _ranges().build.sub("", comp, count=1)
    comp = _replace_carets(comp)
    comp = _replace_tildes(comp)
    comp = _replace_xranges(comp)
    return _ranges().star.sub("", _trim(comp), count=1)


# One compiled comparator: an operator among "", "<", "<=", ">", ">=" and the precedence key
# of its version. node-semver's ANY comparator (``""``, ``*``) is left out of a compiled set:
# it admits every version and never lets a prerelease in.
Comparator = tuple[str, Key]
# One comparator set: its comparators (ANDed) and the ``[major, minor, patch]`` of those with
# a prerelease (npm's prerelease rule).
ComparatorSet = tuple[tuple[Comparator, ...], frozenset[tuple[int, int, int]]]

_NULL_SET = "<0.0.0-0"


# node-semver's ``Comparator``: its ``value`` (operator and version, ``""`` for ANY), operator
# and version (``None`` for ANY).
_Parsed = tuple[str, str, Version | None]


def _comparator(comp: str) -> _Parsed | None:
    """node-semver's ``new Comparator(comp)``; ``None`` where it throws."""
    comp = " ".join(_SPACE_RUN.split(_trim(comp)))
    match = _ranges().comparator.match(comp)
    if match is None:
        return None
    operator = match[1] or ""
    if operator == "=":
        operator = ""
    if not match[2]:
        return "", "", None
    version = _semver(match[2])
    if version is None:
        return None
    return operator + _format(version), operator, version


def _format(version: Version) -> str:
    major, minor, patch, pre = version
    release = f"{major}.{minor}.{patch}"
    return f"{release}-{'.'.join(str(i) for i in pre)}" if pre else release


def _parse_set(part: str) -> list[_Parsed] | None:
    """node-semver's ``Range.parseRange``: the comparators of one ``||`` alternative."""
    patterns = _ranges()
    part = patterns.build_strip.sub("", part)
    part = patterns.hyphen.sub(_hyphen, part, count=1)
    part = patterns.comparator_trim.sub(lambda m: m[1] + m[2] + m[3], part)
    part = patterns.tilde_trim.sub(lambda m: m[1] + "~", part)
    part = patterns.caret_trim.sub(lambda m: m[1] + "^", part)
    words = " ".join(_parse_comparator(comp) for comp in part.split(" "))
    comps = [patterns.gte0.sub("", _trim(comp), count=1) for comp in _SPACE_RUN.split(words)]
    # Every comparator is parsed (and may throw) before the null-set check, as in range.js.
    comparators = [c for c in (_comparator(comp) for comp in comps) if c is not None]
    if len(comparators) < len(comps):
        return None
    parsed: dict[str, _Parsed] = {}
    for comparator in comparators:
        if comparator[0] == _NULL_SET:
            return [comparator]
        parsed[comparator[0]] = comparator
    if len(parsed) > 1:
        parsed.pop("", None)
    return list(parsed.values())


@functools.lru_cache(maxsize=4096)
def _parse_range(constraint: str) -> tuple[ComparatorSet, ...] | None:
    """node-semver's ``new Range(constraint)`` compiled to keys; ``None`` where it throws."""
    if has_long_number(constraint):
        return None
    raw = _SPACE_RUN.sub(" ", _trim(constraint))
    sets: list[list[_Parsed]] = []
    for part in raw.split("||"):
        parsed = _parse_set(_trim(part))
        if parsed is None:
            return None
        sets.append(parsed)
    if len(sets) > 1:
        # Null sets go when another set remains; a lone ANY set makes the whole range ANY.
        kept = [s for s in sets if s[0][0] != _NULL_SET] or sets[:1]
        sets = next(([s] for s in kept if len(s) == 1 and s[0][0] == ""), kept)
    return tuple(_compile_set(s) for s in sets)


def _compile_set(comparators: list[_Parsed]) -> ComparatorSet:
    compiled: list[Comparator] = []
    pre_releases: set[tuple[int, int, int]] = set()
    for _value, operator, version in comparators:
        if version is None:
            continue
        compiled.append((operator, _key(version)))
        if version[3]:
            pre_releases.add(version[:3])
    return tuple(compiled), frozenset(pre_releases)


def _test(sets: tuple[ComparatorSet, ...], version: Version, key: Key) -> bool:
    """node-semver's ``Range.test``/``testSet`` with ``includePrerelease`` false."""
    for comparators, pre_releases in sets:
        if version[3] and version[:3] not in pre_releases:
            continue
        for operator, bound in comparators:
            if operator == ">=":
                if key < bound:
                    break
            elif operator == "<":
                if key >= bound:
                    break
            elif operator == ">":
                if key <= bound:
                    break
            elif operator == "<=":
                if key > bound:
                    break
            elif key != bound:
                break
        else:
            return True
    return False


# --- the Versioning functions --------------------------------------------------------------


def is_valid(version: str) -> bool:
    """Return whether ``version`` is a semver version (``v1.2.3`` and ``=1.2.3`` allowed)."""
    return _parse(version) is not None


def is_stable(version: str) -> bool:
    """Return whether ``version`` is valid and has no prerelease part (build metadata ignored)."""
    parsed = _parse(version)
    return parsed is not None and not parsed[3]


@functools.lru_cache(maxsize=65536)
def sort_key(version: str) -> Any:  # noqa: ANN401 - the protocol leaves the key opaque
    """Return a semver precedence key; invalid versions get ``(0, version)`` and sort first.

    A valid key is ``(1, major, minor, patch, pre)`` where a release's ``pre`` is ``(1,)``, above
    every prerelease's ``(0, identifiers...)``; build metadata is ignored.
    """
    keyed = _keyed(version)
    if keyed is None:
        return (0, version)
    return (1, *keyed[1])


def compare(a: str, b: str) -> int:
    """Return -1, 0 or 1 as ``a`` has lower, equal or higher precedence (build metadata ignored)."""
    key_a, key_b = sort_key(a), sort_key(b)
    return int(key_a > key_b) - int(key_a < key_b)


def is_valid_constraint(constraint: str) -> bool:
    """Return whether ``constraint`` is a semver range (``""`` and ``*`` mean any version)."""
    return _parse_range(constraint) is not None


def exact_pin(constraint: str) -> str | None:
    """Return the version a lone ``1.2.3``, ``=1.2.3`` or ``v1.2.3`` pins, else ``None``.

    The version comes back normalised (``1.2.3``), without build metadata, as ``semver.clean``
    gives it.
    """
    parsed = _parse(constraint)
    return None if parsed is None else _format(parsed)


def matches(version: str, constraint: str) -> bool:
    """Return whether ``version`` satisfies the range ``constraint`` (npm's prerelease rule)."""
    keyed, sets = _keyed(version), _parse_range(constraint)
    if keyed is None or sets is None:
        return False
    return _test(sets, *keyed)


def max_satisfying(versions: Iterable[str], constraint: str) -> str | None:
    """Return the highest version in ``versions`` that satisfies ``constraint``.

    The first of equal versions (``1.2.3``, ``1.2.3+build``) wins, as in node-semver. npm
    prefers the ``latest`` dist-tag when it satisfies the range; that choice belongs to the
    policy, which has the catalog.
    """
    sets = _parse_range(constraint)
    if sets is None:
        return None
    best: str | None = None
    best_key: Any = None
    for version in versions:
        keyed = _keyed(version)
        if keyed is None:
            continue
        key = keyed[1]
        if (best is None or key > best_key) and _test(sets, *keyed):
            best, best_key = version, key
    return best


def update_type(current: str, new: str) -> UpdateType | None:
    """Return the first of major/minor/patch that differs when ``new`` is newer than ``current``.

    A move within one ``[major, minor, patch]`` (``1.2.3-beta.1`` → ``1.2.3``) is ``patch``.
    Returns ``None`` when either version is invalid or ``new`` is not newer.
    """
    old_parsed, new_parsed = _parse(current), _parse(new)
    if old_parsed is None or new_parsed is None or sort_key(new) <= sort_key(current):
        return None
    if old_parsed[0] != new_parsed[0]:
        return "major"
    if old_parsed[1] != new_parsed[1]:
        return "minor"
    return "patch"


def is_compatible(current: str, other: str) -> bool:  # noqa: ARG001 - the protocol's shape
    """Return ``True``: every npm version is a candidate; ranges decide the rest.

    npm ranges, not tag shapes, decide which versions a user can move to.
    """
    return True
