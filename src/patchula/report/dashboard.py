"""The Markdown dependency dashboard: a ``ScanReport`` as GitHub-flavoured Markdown.

Rendered from the report model alone, so a report read back from JSON renders the same way.
What a checkout or registry wrote (names, versions, files, reasons) is always shown inside a
code span, where Markdown renders no HTML, link, emphasis or autolink; the only HTML is
``<details>``/``<summary>``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote, urlsplit

import msgspec
from pydantic import TypeAdapter, ValidationError

from patchula.names import scrub_surrogates
from patchula.report.model import DependencyReport, RepositoryReport, ScanReport
from patchula.report.render import (
    IGNORED_NAMED,
    NotDone,
    evaluated,
    manifest_severities,
    missing_shards_words,
    short_digest,
    shorten_digests,
    unread_words,
)
from patchula.report.render import _down_hosts as down_hosts
from patchula.report.render import _host_lines as host_lines
from patchula.report.render import _not_done_by as not_done_by
from patchula.report.render import _plain_text as plain_text

# GitHub refuses an issue or pull-request comment longer than this many characters (its API
# answers 422 "Body is too long (maximum is 65536 characters)").
COMMENT_LIMIT = 65_536
# A section with more rows than this is collapsed into ``<details>``; up-to-date rows always.
COLLAPSE_ROWS = 10
# Longest value shown in one cell, in characters: one hostile reason cannot fill the comment.
MAX_CELL = 300
# Room kept for the truncation note at the top when rows have to be cut.
_NOTE_ROOM = 800

_UPDATE_TYPES = ("major", "minor", "patch", "digest")


def render_markdown(report: ScanReport, *, limit: int | None = COMMENT_LIMIT) -> str:
    """Return the dependency dashboard of ``report`` as GitHub-flavoured Markdown.

    Layout: title, ``evaluatedAt``, the release-age policy in force (``report.options``),
    totals per ecosystem and status, libyears and the age of the release lists; then per
    repository its updates by update type (major, minor, patch, digest; the package linked to
    its public page when the lookup used that public registry), releases held back by the
    policy (of held-back and outdated rows) with ``releasedAt``, ``eligibleAt`` and the
    catalog's fetch time, unknown verdicts, errors (rows of an unreachable or rate-limited host
    as one line per host), skipped rows, manifest problems, and up-to-date rows counted in a
    collapsed list; rows of versions carry their notes (``_notes``). Sections longer than
    ``COLLAPSE_ROWS`` rows are collapsed. Rows are in the report's order (file, line, name), so
    the output is deterministic.

    ``limit`` bounds the text in characters (default ``COMMENT_LIMIT``, GitHub's comment
    limit; ``None``: unbounded). When the dashboard is longer, rows are cut, the least urgent
    first (up to date, skipped, digest, patch, minor, held back, unknown, major, problems,
    errors), then whole repositories from the end; each cut is said where it happened and in
    a note at the top. The result ends with a newline; lone surrogates are written as U+FFFD.
    """
    repos = [_repository(repo, report) for repo in report.repositories]
    head = _head(report)
    text = _join(head, repos, note=[])
    if limit is not None and len(text) > limit:
        text = _truncated(head, repos, limit)
    return scrub_surrogates(text)


# ---------------------------------------------------------------------------- cells


# Line and paragraph separators: Markdown renders no break for them, but some viewers do.
_SEPARATORS = re.compile("[\u2028\u2029]")
_BACKTICKS = re.compile("`+")


def _clean(text: str) -> str:
    """``text`` on one line: control, bidirectional and separator characters as spaces, cut."""
    text = _SEPARATORS.sub(" ", plain_text(text)).strip()
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def code(text: str, *, cell: bool = True) -> str:
    r"""``text`` as a Markdown code span, safe in a table cell when ``cell`` (default).

    A code span renders its content literally (CommonMark 0.31 §6.1): no HTML, entity, link or
    autolink. Its fence is one backtick longer than the longest run inside, padded with a
    space when the content starts or ends with a backtick (§6.1 strips one space each side).
    In a table cell a ``|`` is written ``\|``: GFM splits cells before inline parsing and
    takes an escaped pipe as content, even inside a code span (GFM spec, "Tables", example
    200). Empty text gives an empty string.
    """
    text = _clean(text)
    if not text:
        return ""
    runs = [len(run) for run in _BACKTICKS.findall(text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    span = f"{fence}{pad}{text}{pad}{fence}"
    return span.replace("|", "\\|") if cell else span


def _row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _table(header: list[str], rows: list[list[str]]) -> tuple[list[str], list[str]]:
    """A table's header lines and row lines, dropping columns empty in every row."""
    keep = [i for i in range(len(header)) if i == 0 or any(row[i] for row in rows)]
    head = [_row(header[i] for i in keep), _row("---" for _ in keep)]
    return head, [_row(row[i] for i in keep) for row in rows]


def when(moment: datetime | None) -> str:
    """``2026-11-30 12:00Z`` (UTC, minutes), or ``unknown``."""
    if moment is None:
        return "unknown"
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M") + "Z"


_HOUR = 3600
_DAY = 86400


def age(released: datetime | None, now: datetime) -> str:
    """How long before ``now`` ``released`` was: ``5h`` under two days, ``12d``, ``1.4y``.

    ``unknown`` without a time; ``0h`` for a time after ``now`` (a registry's clock ahead).
    """
    if released is None:
        return "unknown"
    seconds = max((now - released).total_seconds(), 0)
    if seconds < 2 * _DAY:
        return f"{int(seconds // _HOUR)}h"
    days = int(seconds // _DAY)
    return f"{days}d" if days < 365 else f"{days / 365.25:.1f}y"  # noqa: PLR2004 - a year


def duration(wait: timedelta) -> str:
    """A wait as the largest whole unit: ``14d``, ``36h``, ``90m``, ``45s``, ``0``."""
    seconds = int(wait.total_seconds())
    if seconds <= 0:
        return "0"
    for unit, size in (("d", _DAY), ("h", _HOUR), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


# ---------------------------------------------------------------------------- links


class _Page(msgspec.Struct, frozen=True):
    """Where a public registry's package pages are, for names matching ``name``."""

    hosts: frozenset[str]
    name: re.Pattern[str]
    url: Callable[[re.Match[str]], str]


# The public registries and their package pages. A name that does not look like one of the
# registry's own (a hostile or odd one) gets no link rather than a guessed one; every part put
# in a URL is percent-encoded as well. Other image registries (ghcr.io, quay.io, a private
# one) have no page pattern that holds for every image, so they get none.
_PAGES: dict[str, _Page] = {
    "npm": _Page(
        frozenset({"registry.npmjs.org"}),
        re.compile(r"(?:@[A-Za-z0-9][\w.~-]*/)?[A-Za-z0-9][\w.~-]*"),
        lambda m: f"https://www.npmjs.com/package/{quote(m[0], safe='@/')}",
    ),
    "pypi": _Page(
        frozenset({"pypi.org"}),
        re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"),
        lambda m: f"https://pypi.org/project/{quote(m[0], safe='')}/",
    ),
    "crates": _Page(
        frozenset({"index.crates.io", "crates.io"}),
        re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*"),
        lambda m: f"https://crates.io/crates/{quote(m[0], safe='')}",
    ),
    "goproxy": _Page(
        frozenset({"proxy.golang.org"}),
        re.compile(r"[A-Za-z0-9][A-Za-z0-9._~-]*(?:/[A-Za-z0-9._~+-]+)*"),
        lambda m: f"https://pkg.go.dev/{quote(m[0], safe='/')}",
    ),
    "docker": _Page(
        frozenset({"registry-1.docker.io"}),
        re.compile(
            r"docker\.io/(?P<ns>[a-z0-9]+(?:[._-][a-z0-9]+)*)/(?P<repo>[a-z0-9]+(?:[._-][a-z0-9]+)*)"
        ),
        lambda m: (
            f"https://hub.docker.com/_/{quote(m['repo'], safe='')}"
            if m["ns"] == "library"
            else f"https://hub.docker.com/r/{quote(m['ns'], safe='')}/{quote(m['repo'], safe='')}"
        ),
    ),
}
_GITHUB = _Page(
    frozenset({"api.github.com"}),
    re.compile(
        r"(?P<owner>[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)/(?P<repo>[A-Za-z0-9._-]+)(?:/[^\s]*)?"
    ),
    lambda m: f"https://github.com/{quote(m['owner'], safe='')}/{quote(m['repo'], safe='')}",
)
_PAGES["github-tags"] = _GITHUB
_PAGES["github-releases"] = _GITHUB


def package_page(dep: DependencyReport) -> str | None:
    """The public web page of ``dep``'s package, or ``None``.

    Only when its release list came from the public registry over https (its catalog's
    ``sourceUrl``): a mirror's or a private registry's package has no public page to trust,
    and a row without a catalog (an error) says nothing of where it would have looked.
    """
    page = _PAGES.get(dep.datasource)
    catalog = dep.metadata.lookup.catalog
    if page is None or catalog is None:
        return None
    source = urlsplit(catalog.source_url)
    try:
        port = source.port
    except ValueError:  # not a port: not the public registry's URL either
        return None
    if source.scheme != "https" or source.hostname not in page.hosts or port is not None:
        return None
    found = page.name.fullmatch(dep.package_name)
    return page.url(found) if found is not None else None


def _package(dep: DependencyReport) -> str:
    shown = dep.name if dep.name == dep.package_name else f"{dep.name} ({dep.package_name})"
    url = package_page(dep)
    return f"[{code(shown)}]({url})" if url else code(shown)


def _where(file: str, line: int | None) -> str:
    return code(f"{file}:{line}" if line else file)


def _current(dep: DependencyReport) -> str:
    current = dep.current or ""
    return code(f"{current}@{short_digest(dep.digest)}" if dep.digest else current)


def _proposed(dep: DependencyReport) -> str:
    if dep.update_type == "digest" and not dep.new_digest and dep.current_digest:
        # The tag stays; what it points at moved (a newer build of the same tag).
        return code(f"{dep.current or ''}@{short_digest(dep.current_digest)}")
    eligible = dep.eligible or ""
    if dep.new_digest:
        return code(f"{eligible}@{short_digest(dep.new_digest)}")
    proposed = dep.proposed
    if proposed and proposed.removeprefix("v") != eligible.removeprefix("v"):
        # What to write at the declared precision (a tool's ``20`` → ``24``), with the release
        # it resolves to: a prefix is not turned into a pin (as the table shows it).
        return f"{code(proposed)} ({code(eligible)})"
    return code(eligible)


def _notes(dep: DependencyReport) -> str:
    """A row's notes: where current came from when not a lock or pin, its reason, and more.

    Every table of versions has them (updates, held back, up to date): a row resolved from
    the declared range because no lockfile was read, or whose current or latest release is
    deprecated, is not simply "up to date".
    """
    notes = [dep.reason] if dep.reason else []
    if dep.current_source == "range" and "from the range" not in (dep.reason or ""):
        # The JSON's ``currentSource``: the version was resolved from the declared range.
        notes.insert(0, "current from the range")
    if dep.major_available:
        notes.append(f"new major: {dep.major_available}")
    if dep.markers:
        notes.append(f"when {dep.markers}")
    return code(shorten_digests("; ".join(notes)))


# ---------------------------------------------------------------------------- sections


class _Section(msgspec.Struct):
    """One titled table of a repository; rows can be cut from its end, ``lead`` stays."""

    kind: str
    title: str
    head: list[str]
    rows: list[str]
    collapse: bool
    lead: list[str] = msgspec.field(default_factory=list)
    cut: int = 0

    def lines(self) -> list[str]:
        """The section's Markdown lines, with a line saying how many rows were cut."""
        body = [*self.lead, *(self.head + self.rows if self.rows else [])]
        if self.cut:
            body += ["", _cut_line(self.cut, more=True)] if self.rows else [_cut_line(self.cut)]
        if self.collapse:
            # A blank line after <summary> lets GitHub render the Markdown inside <details>.
            return [f"<details><summary>{self.title}</summary>", "", *body, "", "</details>", ""]
        return [f"### {self.title}", "", *body, ""]


def _cut_line(n: int, *, more: bool = False) -> str:
    rows = _plural(n, "row", "rows")
    return f"*{n} {'more ' if more else ''}{rows} cut (see the note at the top).*"


class _Repo(msgspec.Struct):
    """A repository's heading, count line and sections."""

    head: list[str]
    sections: list[_Section] = msgspec.field(default_factory=list)

    def lines(self) -> list[str]:
        """The repository's Markdown lines; one line for its sections when all were cut."""
        if self.sections and all(s.cut and not s.rows and not s.lead for s in self.sections):
            return [*self.head, "*Its rows are cut (see the note at the top).*", ""]
        return [*self.head, *(line for s in self.sections for line in s.lines())]


def _section(
    kind: str, title: str, header: list[str], rows: list[list[str]], *, collapse: bool = False
) -> _Section | None:
    if not rows:
        return None
    head, lines = _table(header, rows)
    return _Section(
        kind,
        f"{title} ({len(rows)})",
        head,
        lines,
        collapse=collapse or len(rows) > COLLAPSE_ROWS,
    )


_TITLES = {
    "major": "Major updates",
    "minor": "Minor updates",
    "patch": "Patch updates",
    "digest": "Digest updates",
    None: "Other updates",
}


def _repository(repo: RepositoryReport, report: ScanReport) -> _Repo:
    """A repository's heading, counts and sections (each only when it has rows)."""
    now = report.evaluated_at
    deps = repo.dependencies
    head = [f"## {code(repo.target, cell=False)}{_commit(repo.commit)}", ""]
    if repo.extraction.source == "none":  # could not be read: nothing was extracted
        head += ["Not read: no dependencies were extracted (its problem says why).", ""]
    elif not deps and not repo.problems:
        return _Repo([*head, "No dependencies found.", "", *_ignored(repo)])
    else:
        counts = Counter[str](d.status for d in deps)
        said = ", ".join(f"{counts[s]} {s.replace('-', ' ')}" for s in _STATUS_ORDER if counts[s])
        many = _plural(len(deps), "dependency", "dependencies")
        head += [f"{len(deps)} {many}: {said or 'none'}.", "", *_ignored(repo)]

    def reason(d: DependencyReport) -> str:
        return code(shorten_digests(d.reason or ""))

    def having(status: str) -> list[DependencyReport]:
        return [d for d in deps if d.status == status]

    sections: list[_Section | None] = [
        _section(
            kind or "other",
            _TITLES[kind],
            _UPDATE_HEADER,
            [
                [
                    _package(d),
                    _current(d),
                    _proposed(d),
                    _pushed(d, d.eligible, age(d.eligible_released_at, now)),
                    _where(d.file, d.line),
                    _notes(d),
                ]
                for d in having("outdated")
                if d.update_type == kind
            ],
        )
        for kind in (*_UPDATE_TYPES, None)
    ]
    sections += [
        _held_back(deps),
        _section(
            "unknown",
            "Unknown",
            ["package", "current", "file", "reason"],
            [
                [_package(d), _current(d), _where(d.file, d.line), reason(d)]
                for d in having("unknown")
            ],
        ),
        _errors(deps, down_hosts(report)),
        _section(
            "skipped",
            "Skipped",
            ["package", "file", "reason"],
            [[_package(d), _where(d.file, d.line), reason(d)] for d in having("skipped")],
        ),
        _section(
            "problems",
            "Problems",
            ["file", "severity", "message"],
            [[_where(p.file, p.line), p.severity, code(p.message)] for p in repo.problems],
        ),
        _section(
            "up-to-date",
            "Up to date",
            ["package", "current", "file", "notes"],
            [
                [_package(d), _current(d), _where(d.file, d.line), _notes(d)]
                for d in having("up-to-date")
            ],
            collapse=True,
        ),
    ]
    return _Repo(head, [s for s in sections if s is not None])


def _ignored(repo: RepositoryReport) -> list[str]:
    """The paragraph naming the files ``ignore-paths`` kept out (``[]`` when none)."""
    ignored = repo.extraction.ignored
    if not ignored:
        return []
    count = len(ignored)
    many = "" if repo.extraction.ignored_complete else "at least "
    named = ", ".join(code(path, cell=False) for path in ignored[:IGNORED_NAMED])
    more = ", …" if count > IGNORED_NAMED else ""
    word = _plural(count, "manifest", "manifests")
    said = f"{many}{count} {word} not scanned, under ignore-paths: {named}{more}"
    return [f"{said} (set `ignore-paths` to read them).", ""]


_UPDATE_HEADER = ["package", "current", "proposed", "age", "file", "notes"]
_STATUS_ORDER = ("outdated", "held-back", "unknown", "error", "skipped", "up-to-date")


def _plural(n: int, one: str, many: str) -> str:
    return one if n == 1 else many


def _commit(commit: str | None) -> str:
    return f" at {code(commit[:12], cell=False)}" if commit else ""


# The ``dateSources`` word of a date that is an image tag's last push (Docker Hub's
# ``tag_last_pushed``, ``datasource.docker.HUB_DATE``), not a first release.
_LAST_PUSH = "last-push"


def _pushed(d: DependencyReport, version: str | None, text: str) -> str:
    """``text`` (a date or an age of ``version``), marked ``(last push)`` when it is one.

    A tag's last push restarts with every re-push (a floating tag, a rebuild): the dashboard's
    "released" and "age" columns never pass it off as a first release.
    """
    if version is not None and d.date_sources and d.date_sources.get(version) == _LAST_PUSH:
        return f"{text} (last push)"
    return text


def _held_back(deps: list[DependencyReport]) -> _Section | None:
    """One row per dependency with held-back releases: the newest, when it becomes eligible.

    Its rows are every dependency with releases the policy holds back: status ``held-back``
    (nothing proposed) and also ``outdated`` ones whose newest releases wait (an older one is
    proposed). The counts of the top table and the repository line are by status, so the
    section is titled for releases, not statuses, and its first line says how it splits.
    """
    rows = []
    held = [d for d in deps if d.held_back]
    for d in held:
        newest = d.held_back[-1]
        more = len(d.held_back) - 1
        version = newest.version + (f" (+{more} older)" if more else "")
        catalog = d.metadata.lookup.catalog
        fetched = "unknown" if catalog is None else when(catalog.fetched_at)
        if catalog is not None and catalog.reused:
            fetched += " (reused)"
        rows.append(
            [
                _package(d),
                _current(d),
                _proposed(d) if d.status == "outdated" else "",
                code(version),
                _pushed(d, newest.version, when(newest.released_at))
                if newest.released_at
                else "age unknown",
                when(newest.eligible_at) if newest.eligible_at else "age unknown",
                fetched,
                _where(d.file, d.line),
                _notes(d),
            ]
        )
    section = _section(
        "held-back",
        "Releases held back by the policy",
        [
            "package",
            "current",
            "proposed",
            "held back",
            "released",
            "eligible",
            "catalog fetched",
            "file",
            "notes",
        ],
        rows,
    )
    if section is not None:
        section.lead = [_held_back_split(held), ""]
    return section


def _held_back_split(held: list[DependencyReport]) -> str:
    """How many of ``held`` have status held back, and how many are outdated all the same."""
    statuses = Counter(d.status for d in held)
    parts = []
    if statuses["held-back"]:
        parts.append(f"{statuses['held-back']} with status held back (nothing proposed yet)")
    if statuses["outdated"]:
        parts.append(f"{statuses['outdated']} outdated (an older release is proposed)")
    if other := len(held) - statuses["held-back"] - statuses["outdated"]:
        parts.append(f"{other} with another status")
    many = _plural(len(held), "dependency has", "dependencies have")
    return f"{len(held)} {many} releases the policy does not admit yet: {', '.join(parts)}."


def _failure(dep: DependencyReport) -> str:
    """What failed in ``dep``'s lookup: an error row's reason, else its ``failed_lookup``."""
    if dep.status == "error":
        return dep.reason or ""
    return dep.failed_lookup or ""


def _errors(deps: list[DependencyReport], down: dict[str, str]) -> _Section | None:
    """Failed lookups: a table of rows, and one line per unreachable or rate-limited host.

    A row with a verdict part of whose lookup failed (``failed_lookup``) is listed here too,
    with what failed, so it is never seen only under its status (collapsed "Up to date").
    """
    failed = [d for d in deps if d.status == "error" or d.failed_lookup is not None]
    grouped: Counter[NotDone] = Counter()
    rows = []
    for d in failed:
        why = not_done_by(d, down)
        if why is not None:
            grouped[why] += 1
        else:
            rows.append(
                [
                    _package(d),
                    _where(d.file, d.line),
                    code(shorten_digests(_failure(d))),
                ]
            )
    section = _section("errors", "Errors", ["package", "file", "reason"], rows)
    hosts = [f"- {code(text, cell=False)}" for text in host_lines(grouped)]
    if not hosts:
        return section
    if section is None:
        return _Section("errors", f"Errors ({len(failed)})", [], [], collapse=False, lead=hosts)
    section.title = f"Errors ({len(failed)})"
    # The host lines come first (and are never cut): they say why most lookups failed.
    section.lead = [*hosts, ""]
    return section


# ---------------------------------------------------------------------------- the top


def _wait(options: Mapping[str, Any], key: str) -> timedelta | None:
    try:
        value = options.get(key)
        return None if value is None else _TIMEDELTA.validate_python(value)
    except (ValidationError, TypeError):
        return None


_TIMEDELTA: TypeAdapter[timedelta] = TypeAdapter(timedelta)


def policy_line(options: Mapping[str, Any]) -> str:
    """The release-age policy the report's ``options`` describe, in a sentence.

    ``min-release-age`` is the wait of every update type that ``min-release-age-by-type``
    does not set; ``unknown-age`` says whether releases without a publish time are held, and
    is said only for update types with a positive wait: without one such a release is
    admitted whatever ``unknown-age`` says (``policy.release_age.judge``).
    """
    base = _wait(options, "min-release-age") or timedelta(0)
    by = options.get("min-release-age-by-type")
    by = by if isinstance(by, Mapping) else {}
    waits = {t: _wait(by, t) for t in ("major", "minor", "patch")}
    effective = {t: w if w is not None else base for t, w in waits.items()}
    waiting = [t for t, w in effective.items() if w > timedelta(0)]
    if not waiting:
        # Without a wait a release of unknown age is admitted like any other
        # (``policy.release_age.judge``): ``unknown-age`` changes nothing, so it is not said.
        return "**Policy:** no minimum release age."
    if options.get("unknown-age") == "admit":
        unknown = "releases of unknown age are admitted"
    elif len(waiting) == len(effective):
        unknown = "releases of unknown age are held back"
    else:  # only the update types that wait hold a release of unknown age
        unknown = f"releases of unknown age are held back for {' and '.join(waiting)} updates"
    if len(set(effective.values())) == 1:
        said = f"{duration(effective['major'])} for every update type"
    else:
        said = ", ".join(f"{t} {duration(w)}" for t, w in effective.items())
    return f"**Policy:** minimum release age {said}; {unknown}."


_COUNT_COLUMNS = (
    ("outdated", "outdated"),
    ("held back", "held_back"),
    ("unknown", "unknown"),
    ("error", "error"),
    ("skipped", "skipped"),
    ("up to date", "up_to_date"),
)


def _head(report: ScanReport) -> list[str]:
    s = report.summary
    unread = unread_words(report)
    problems = sum(manifest_severities(report).values())
    out = [
        "# Dependency dashboard",
        "",
        (
            f"Evaluated at {when(report.evaluated_at)} by patchula "
            f"{code(report.tool.version, cell=False)}."
        ),
        "",
        policy_line(report.options),
    ]
    if report.options.get("offline"):
        out.append("Answered from the cache alone (`--offline`).")
    out += [
        "",
        f"**{s.dependencies}** {_plural(s.dependencies, 'dependency', 'dependencies')} in "
        f"**{s.repositories}** {_plural(s.repositories, 'repository', 'repositories')}"
        + (f"; {unread}" if unread is not None else "")
        + (f"; **{missing}**" if (missing := missing_shards_words(report)) is not None else "")
        + (f"; **{s.libyears:.1f}** libyears" if evaluated(report) else "")
        + (f" (+{s.libyears_unknown} behind with unknown dates)" if s.libyears_unknown else "")
        + (f"; {problems} manifest {_plural(problems, 'problem', 'problems')}" if problems else "")
        + ".",
        "",
    ]
    if s.dependencies:
        header = ["ecosystem", "dependencies", *(name for name, _ in _COUNT_COLUMNS)]
        rows = [
            [
                code(name),
                str(sum(getattr(c, a) for _, a in _COUNT_COLUMNS)),
                *(str(getattr(c, a)) for _, a in _COUNT_COLUMNS),
            ]
            for name, c in sorted(s.by_ecosystem.items())
        ]
        rows.append(
            [
                "**total**",
                f"**{s.dependencies}**",
                *(f"**{getattr(s.by_status, a)}**" for _, a in _COUNT_COLUMNS),
            ]
        )
        out += [_row(header), _row("---" for _ in header), *map(_row, rows), ""]
    out += _release_lists(report)
    return out


def _release_lists(report: ScanReport) -> list[str]:
    """The line on the release lists: how many came from the cache, and the oldest fetch.

    Counted per distinct release list (datasource, package and source URL), not per row: a
    package declared in three files is one list. ``reused`` is true for every list answered
    without a request, a fresh HTTP cache entry as well as a stored catalog view; how many
    lookups the views answered is the report's ``cache.viewHits`` (absent with ``--no-cache``).
    """
    reused: dict[tuple[str, str, str], bool] = {}
    oldest: datetime | None = None
    for repo in report.repositories:
        for d in repo.dependencies:
            catalog = d.metadata.lookup.catalog
            if catalog is None:
                continue
            key = (d.datasource, d.package_name, catalog.source_url)
            reused[key] = reused.get(key, False) or catalog.reused
            if oldest is None or catalog.fetched_at < oldest:
                oldest = catalog.fetched_at
    if oldest is None:
        return []
    views = ""
    if report.cache is not None:
        hits = report.cache.view_hits
        views = f" ({hits} {_plural(hits, 'lookup', 'lookups')} answered by stored catalog views)"
    return [
        (
            f"Release lists: {sum(reused.values())} of {len(reused)} answered from the cache "
            f"without a request{views}; the oldest was fetched {when(oldest)}. Held-back "
            "releases and proposals describe those snapshots, not releases published since."
        ),
        "",
    ]


# ---------------------------------------------------------------------------- the limit


# Cut first → last: the rows a reader needs least when space runs out.
_CUT_ORDER = (
    "up-to-date",
    "skipped",
    "digest",
    "patch",
    "other",
    "minor",
    "held-back",
    "unknown",
    "major",
    "problems",
    "errors",
)
_KIND_WORDS = {
    "up-to-date": "up-to-date",
    "skipped": "skipped",
    "digest": "digest-update",
    "patch": "patch-update",
    "other": "other-update",
    "minor": "minor-update",
    "held-back": "held-back",
    "unknown": "unknown",
    "major": "major-update",
    "problems": "problem",
    "errors": "error",
}


def _join(head: list[str], repos: list[_Repo], note: list[str], dropped: int = 0) -> str:
    lines = [*head, *note, *(line for r in repos for line in r.lines())]
    if dropped:
        repositories = _plural(dropped, "repository", "repositories")
        lines += [f"*{dropped} more {repositories} cut (see the note at the top).*", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _truncated(head: list[str], repos: list[_Repo], limit: int) -> str:
    """The dashboard cut to ``limit`` characters (``render_markdown`` says in which order)."""
    excess = len(_join(head, repos, [])) - (limit - _NOTE_ROOM)
    cut: Counter[str] = Counter()
    for kind in _CUT_ORDER:
        for repo in reversed(repos):
            for section in (s for s in reversed(repo.sections) if s.kind == kind):
                while excess > 0 and section.rows:
                    excess -= len(section.rows.pop()) + 1
                    if not section.cut:
                        excess += len(_cut_line(1, more=True)) + 4
                    section.cut += 1
                    cut[_KIND_WORDS[kind]] += 1
    # Then whole repositories from the end, counted rather than joined again each time (a
    # report of thousands of repositories would cost as many joins of the whole text).
    sizes = [sum(len(line) + 1 for line in repo.lines()) for repo in repos]
    fixed = len(_join(head, [], _note(cut, len(repos), limit), len(repos)))
    kept, size = len(repos), sum(sizes)
    text = _join(head, repos, _note(cut, 0, limit))
    while len(text) > limit and kept:
        while kept and fixed + size > limit:
            kept -= 1
            size -= sizes[kept]
        dropped = len(repos) - kept
        text = _join(head, repos[:kept], _note(cut, dropped, limit), dropped)
        if len(text) > limit and kept:
            kept -= 1  # the estimate was short: one more, and measure again
            size -= sizes[kept]
    if len(text) > limit:  # the head alone is longer: only a limit far below a page does that
        text = text[: limit - 1].rsplit("\n", 1)[0] + "\n"
    return text


def _note(cut: Counter[str], dropped: int, limit: int) -> list[str]:
    """The note at the top of a cut dashboard: what was left out, and where it all is."""
    parts = [f"{n} {kind} {_plural(n, 'row', 'rows')}" for kind, n in cut.items()]
    if dropped:
        parts.append(f"{dropped} {_plural(dropped, 'repository', 'repositories')}")
    bound = f"{limit:,} characters" + (
        " (GitHub's comment limit)" if limit == COMMENT_LIMIT else ""
    )
    return [
        (
            f"**Truncated** to {bound}; not shown: {', '.join(parts)}. "
            "The JSON report (`--format json`, `--report`) has every row."
        ),
        "",
    ]
