"""Package names and module paths by each ecosystem's own rules: what may be looked up at all.

A name a manager extracts goes into a registry URL. One that its ecosystem could never publish
(``..`` elements, characters outside the allowed set, a lone surrogate) is reported as a
problem instead of being requested, so it can never step out of a configured base path.
Imports nothing of ours: managers' results are checked by the scan, datasources check again.
"""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")

# The longest package name (module path, image name) any ecosystem looks up. No registry has
# longer ones: npm allows 214 characters (validate-npm-package-name), crates.io 64, an image
# name at most 255 (distribution/reference ``NameTotalLengthMax``); PEP 508, PyPI and Go's
# ``module.CheckPath`` set no limit, but their real names are far shorter (pip would fail on
# the URL of a 200 kB one). A longer name from a manifest is a problem at its line, never a
# request, nor a row that prints it in full.
MAX_NAME_LENGTH = 256
# How much of an over-long name a message shows.
_SHOWN_LENGTH = 60


def has_lone_surrogate(text: str) -> bool:
    r"""Return whether ``text`` holds a surrogate code point (not encodable as UTF-8).

    JSON ``\ud800`` escapes without their pair decode to such strings (RFC 8259 §8.2 calls
    them unpredictable); they cannot be written to a URL, a UTF-8 report or SQLite.
    """
    # ASCII text (nearly every name) holds none: ``isascii`` answers in C without a regex.
    return not text.isascii() and _SURROGATE.search(text) is not None


def shown_name(name: str) -> str:
    """Return ``repr(name)``, cut after 60 characters with the full length said when longer.

    ``'aaaa…' (200,000 characters)``: a message about a hostile name stays short.
    """
    if len(name) <= _SHOWN_LENGTH:
        return repr(name)
    return f"{name[:_SHOWN_LENGTH]!r}… ({len(name):,} characters)"


def length_problem(name: str) -> str | None:
    """Why ``name`` is too long to be any package name (``MAX_NAME_LENGTH``), or ``None``."""
    if len(name) > MAX_NAME_LENGTH:
        return f"longer than {MAX_NAME_LENGTH} characters, the most any registry's names have"
    return None


def scrub_surrogates(text: str) -> str:
    """Return ``text`` with every surrogate code point replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


# npm: validate-npm-package-name (npm/validate-npm-package-name, "validForOldPackages", since
# legacy upper-case and special-character names still exist on the registry and can be looked
# up): at most 214 characters, no leading "." or "_", no surrounding spaces, and every part of
# ``[@scope/]name`` unchanged by JavaScript's encodeURIComponent.
NPM_MAX_LENGTH = 214
_NPM_URL_SAFE = re.compile(r"[A-Za-z0-9\-_.!~*'()]+")
_NPM_RESERVED = frozenset({"node_modules", "favicon.ico"})


def npm_name_problem(name: str) -> str | None:
    """Why ``name`` is not a valid npm package name, or ``None`` when it is."""
    if not name:
        return "name is empty"
    if len(name) > NPM_MAX_LENGTH:
        return f"name is longer than {NPM_MAX_LENGTH} characters"
    if name.startswith((".", "_")):
        return "name starts with a dot or an underscore"
    if name.lower() in _NPM_RESERVED:
        return f"{name!r} is a reserved name"
    scope, slash, bare = name.partition("/")
    if slash:
        if not scope.startswith("@") or len(scope) == 1:
            return "a name with a slash must be @scope/name"
        parts = [scope[1:], bare]
    else:
        if name.startswith("@"):
            return "a scoped name must be @scope/name"
        parts = [name]
    for part in parts:
        if part in {".", ".."} or part.startswith("."):
            return "a name part starts with a dot"
        if _NPM_URL_SAFE.fullmatch(part) is None:
            return "name contains characters that are not URL-safe"
    return None


# Go: golang.org/x/mod/module CheckPath. Path elements use ASCII letters, digits and "-._~";
# none is empty, none starts or ends with a dot; the first element is a host name (lower-case
# letters, digits, "-" and ".", with at least one dot, not starting with "-").
_GO_ELEMENT = re.compile(r"[A-Za-z0-9\-._~]+")
_GO_FIRST = re.compile(r"[a-z0-9\-.]+")
_GO_MAJOR = re.compile(r"v(\d+)")
# Windows reserved file names (module.CheckPath refuses them as the part before the first dot).
_GO_RESERVED = frozenset(
    {"con", "prn", "aux", "nul"} | {f"com{n}" for n in range(10)} | {f"lpt{n}" for n in range(10)}
)
# A major version suffix this long is no real module (and its int() would be slow or refused).
_GO_MAX_MAJOR_DIGITS = 9


def go_module_path_problem(path: str) -> str | None:
    """Why ``path`` is not a valid Go module path (``module.CheckPath``), or ``None``."""
    if not path:
        return "module path is empty"
    if path.startswith("-"):
        return "module path starts with a dash"
    if "//" in path:
        return "module path has a double slash"
    if path.endswith("/"):
        return "module path has a trailing slash"
    elements = path.split("/")
    for element in elements:
        problem = _go_element_problem(element)
        if problem is not None:
            return problem
    first = elements[0]
    if "." not in first:
        return f"missing dot in first path element {first!r}"
    if _GO_FIRST.fullmatch(first) is None:
        return f"invalid character in first path element {first!r}"
    if len(elements) > 1:
        major = _GO_MAJOR.fullmatch(elements[-1])
        if major is not None and (
            len(major[1]) > _GO_MAX_MAJOR_DIGITS or major[1].startswith("0") or major[1] == "1"
        ):
            return f"invalid major version suffix {elements[-1]!r}"
    return None


def _go_element_problem(element: str) -> str | None:
    if element.strip(".") == "":
        return f"invalid path element {element!r}"
    if element.startswith("."):
        return f"leading dot in path element {element!r}"
    if element.endswith("."):
        return f"trailing dot in path element {element!r}"
    if _GO_ELEMENT.fullmatch(element) is None:
        return f"invalid character in path element {element!r}"
    if element.split(".", 1)[0].lower() in _GO_RESERVED:
        return f"disallowed path element {element!r}"
    return None


# Cargo: crates.io's rules for a publishable crate name (Cargo's ``validate_package_name`` plus
# the registry's ASCII-only limit): ASCII letters, digits, "-" and "_", starting with a letter,
# at most 64 characters.
CRATE_MAX_LENGTH = 64
_CRATE = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


def crate_name_problem(name: str) -> str | None:
    """Why ``name`` is not a valid crates.io crate name, or ``None``."""
    if not name:
        return "crate name is empty"
    if len(name) > CRATE_MAX_LENGTH:
        return f"crate name is longer than {CRATE_MAX_LENGTH} characters"
    if _CRATE.fullmatch(name) is None:
        return "crate name must be ASCII letters, digits, - and _, starting with a letter"
    return None


# PyPI: PEP 508 names (the "Names" section of the core metadata specification).
_PEP508_NAME = re.compile(r"[A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9]", re.IGNORECASE)


def python_name_problem(name: str) -> str | None:
    """Why ``name`` is not a valid Python project name (PEP 508), or ``None``."""
    if _PEP508_NAME.fullmatch(name) is None:
        return "not a valid Python project name (PEP 508)"
    return None


_CHECKS = {
    "npm": npm_name_problem,
    "goproxy": go_module_path_problem,
    "crates": crate_name_problem,
    "pypi": python_name_problem,
}


def name_problem(datasource: str, name: str) -> str | None:
    """Why ``name`` cannot be looked up on ``datasource`` (by its ecosystem's rules), or ``None``.

    A datasource without rules here accepts any name without a lone surrogate of at most
    ``MAX_NAME_LENGTH`` characters.
    """
    too_long = length_problem(name)
    if too_long is not None:
        return too_long
    if has_lone_surrogate(name):
        return "invalid Unicode: lone surrogate"
    check = _CHECKS.get(datasource)
    return None if check is None else check(name)
