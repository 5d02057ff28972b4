"""The ``package.json`` manager: npm dependency sections, aliases, dist-tags and local specs."""

from __future__ import annotations

import re

from patchula.manager.base import (
    JsonKeys,
    ReadFile,
    json_type,
    parse_json_object,
)
from patchula.models import Dependency, ExtractResult, ManifestProblem

ID = "package_json"
DATASOURCE = "npm"
VERSIONING = "npm"

SECTIONS = ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies")

# Spec prefixes that name something other than a registry version
# (https://docs.npmjs.com/cli/v11/configuring-npm/package-json#dependencies; yarn adds
# portal: and patch:, pnpm and yarn add workspace: and link:).
_PROTOCOL_SKIPS = (
    ("file:", "local file dependency"),
    ("link:", "linked local package"),
    ("workspace:", "workspace protocol"),
    ("portal:", "portal protocol"),
    ("patch:", "patched dependency"),
    ("git+", "git dependency"),
    ("git://", "git dependency"),
    ("git@", "git dependency"),
    ("github:", "git dependency"),
    ("gitlab:", "git dependency"),
    ("bitbucket:", "git dependency"),
    ("gist:", "git dependency"),
    ("http://", "URL tarball dependency"),
    ("https://", "URL tarball dependency"),
)
_LOCAL_PATH_PREFIXES = ("./", "../", "/", "~/", ".\\", "..\\")
_TARBALL_SUFFIXES = (".tgz", ".tar.gz", ".tar")
_GITHUB_SHORTHAND = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+(?:#.*)?")
_ALIAS = re.compile(r"npm:((?:@[^/@\s]+/)?[^@\s]+)(?:@(.*))?", re.DOTALL)
# A semver range as node-semver's `validRange` reads it: comparator sets of (partial) versions
# with ^ ~ < > = operators, hyphen ranges and `||`. Yarn 2+ and pnpm read `npm:<range>` as that
# range of the dependency's own name (yarn's NpmSemverResolver); a package name never matches
# (a name's first part cannot be followed by anything but `-prerelease`). `npm:x` stays the
# package `x` (npm's reading): a range here needs a digit or a `*`.
_PART = r"(?:0|[1-9]\d*|[xX*])"
_PARTIAL = rf"v?{_PART}(?:\.{_PART}){{0,2}}(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?"
_COMPARATOR = rf"(?:[\^~]|[<>]=?|=)?\s*{_PARTIAL}"
_SEMVER_RANGE = re.compile(rf"\s*{_COMPARATOR}(?:\s*(?:\|\||-|\s)\s*{_COMPARATOR})*\s*", re.ASCII)


_DROPPED = "ignored, as npm does"


def matches(path: str) -> bool:
    """Return whether ``path`` is a ``package.json`` outside ``node_modules``."""
    parts = path.split("/")
    return parts[-1] == "package.json" and "node_modules" not in parts[:-1]


def extract(path: str, text: str, read: ReadFile) -> ExtractResult:  # noqa: ARG001 - no includes
    """Extract the dependencies of one ``package.json`` (npm docs, "package.json").

    Reads ``dependencies``, ``devDependencies``, ``optionalDependencies`` and
    ``peerDependencies`` (``dep_type`` is the section name), one row per section entry, and
    ``name`` into ``project_name``. ``npm:`` aliases look up their target; ``file:``,
    ``link:``, ``workspace:``, git, GitHub shorthand and URL specs are skipped with a reason;
    dist-tags such as ``latest`` are kept with the tag as constraint; ``""`` and ``"*"`` become
    ``"*"``. Bad JSON and wrong types are problems, never exceptions; a section that is not an
    object and an entry whose value is not a string are dropped with a warning, as npm does.
    """
    data, problem = parse_json_object(path, text)
    if problem is not None:
        return ExtractResult(problems=(problem,))
    keys_of = JsonKeys(text)

    def line(*keys: str) -> int | None:
        return keys_of.line(keys)

    problems: list[ManifestProblem] = []
    project_name = data.get("name")
    if project_name is not None and not isinstance(project_name, str):
        message = f"`name` must be a string, got {json_type(project_name)}"
        problems.append(ManifestProblem(path, line("name"), message))
        project_name = None
    dependencies: list[Dependency] = []
    for section in SECTIONS:
        entries = data.get(section)
        if entries is None:
            continue
        # npm warns and drops what is not a dependency (normalize-package-data's
        # nonObjectDependencies and nonStringDependency warnings) and installs the rest: a
        # warning here too, so the manifest does not count as unreadable.
        if not isinstance(entries, dict):
            message = f"`{section}` must be an object, got {json_type(entries)}; {_DROPPED}"
            problems.append(ManifestProblem(path, line(section), message, "warning"))
            continue
        for name, value in entries.items():
            where = line(section, name)
            if isinstance(value, str):
                dependencies.append(_dependency(path, where, section, name, value))
            else:
                message = (
                    f"version of {name!r} in `{section}` must be a string, got"
                    f" {json_type(value)}; {_DROPPED}"
                )
                problems.append(ManifestProblem(path, where, message, "warning"))
    return ExtractResult(
        dependencies=tuple(dependencies),
        problems=tuple(problems),
        project_name=project_name or None,
    )


def _dependency(path: str, line: int | None, section: str, name: str, spec: str) -> Dependency:
    package_name, constraint, skip_reason = classify(name, spec)
    return Dependency(
        manager=ID,
        file=path,
        line=line,
        name=name,
        package_name=package_name,
        datasource=DATASOURCE,
        versioning=VERSIONING,
        dep_type=section,
        declared=spec,
        constraint=constraint,
        skip_reason=skip_reason,
    )


def classify(name: str, spec: str) -> tuple[str, str | None, str | None]:
    """Return ``(package_name, constraint, skip_reason)`` for the npm spec ``spec`` of ``name``.

    Follows npm-package-arg's reading of a dependency value: ``npm:target@range`` aliases
    (``npm:target`` alone: constraint ``None``), ``npm:<semver range>`` as that range of
    ``name`` itself (Yarn 2+ and pnpm's npm protocol), protocol and path specs (skipped), GitHub
    ``user/repo`` shorthand (skipped), ``""``/``"*"`` (constraint ``"*"``), and semver ranges
    or dist-tags (constraint = the value as written, trimmed).
    """
    value = spec.strip()
    if _is_npm_protocol_range(value):
        # `npm:^1.2.3`: the npm protocol with a range, for the dependency's own name.
        return name, value[4:].strip(), None
    if value.startswith("npm:"):
        alias = _ALIAS.fullmatch(value)
        if alias is None:
            return name, None, "invalid npm: alias"
        target, target_range = alias.group(1), alias.group(2)
        if target_range is None or not target_range.strip():
            return target, None, None
        _, constraint, skip_reason = classify(target, target_range)
        return target, constraint, skip_reason
    skip_reason = _skip_reason(value)
    if skip_reason is not None:
        return name, None, skip_reason
    # A semver range, or a dist-tag (`latest`, `next`) that the lookup resolves: either way the
    # value as written is the constraint.
    return name, value or "*", None


def _is_npm_protocol_range(value: str) -> bool:
    rest = value.removeprefix("npm:")
    if rest == value or _SEMVER_RANGE.fullmatch(rest) is None:
        return False
    return "*" in rest or any(char.isdigit() for char in rest)


def _skip_reason(value: str) -> str | None:
    lowered = value.lower()
    for prefix, reason in _PROTOCOL_SKIPS:
        if lowered.startswith(prefix):
            return reason
    if value.startswith(_LOCAL_PATH_PREFIXES) or lowered.endswith(_TARBALL_SUFFIXES):
        return "local path"
    if _GITHUB_SHORTHAND.fullmatch(value):
        return "git dependency (GitHub shorthand)"
    return None
