"""Renderers: JSON, or a table (rich on a TTY, plain when piped); Markdown is ``dashboard``."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING

import orjson
from pydantic_core import PydanticSerializationError

from patchula.errors import NOT_CACHED
from patchula.names import scrub_surrogates
from patchula.report.model import STATUSES, DependencyReport, RepositoryReport, ScanReport

if TYPE_CHECKING:
    from rich.console import Console

STATUS_STYLE = {
    "up-to-date": "green",
    "outdated": "yellow",
    "held-back": "cyan",
    "unknown": "magenta",
    "skipped": "dim",
    "error": "bold red",
}


def render_json(report: ScanReport) -> str:
    """Return the report as indented JSON (camelCase keys, RFC 3339 UTC times).

    Lone surrogates (which UTF-8 refuses) are written as U+FFFD. The report is serialized
    straight to text by pydantic; only a report holding such a string is first dumped to
    Python values and scrubbed (a second copy of the whole tree).
    """
    try:
        return report.model_dump_json(by_alias=True, indent=2) + "\n"
    except PydanticSerializationError:
        data, _ = _scrub(report.model_dump(mode="json", by_alias=True))
        return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n"


# Where the repositories go in the JSON of a report without any: the top-level key is indented
# by two spaces, each repository by four (every line break of the JSON text is structural: a
# string's own are escaped).
_NO_REPOSITORIES = '\n  "repositories": []'
_REPOSITORY_INDENT = "\n    "


def json_chunks(report: ScanReport) -> Iterator[str]:
    """Yield ``render_json(report)`` in pieces: the report around its repositories, then each one.

    The pieces join to the same text, but none holds more than one repository, so writing them
    one by one never holds the whole document: serialising a report at once keeps it twice at
    the peak (pydantic's bytes, then their decoded text): 56 MB each for 1,000 repositories of
    40 dependencies, the largest part of such a run's peak memory. A repository is indented
    as ``indent=2`` nests it (serde_json's and orjson's pretty printers agree, see
    ``render_json``).
    """
    # Built first, a repository's serializer is reused by the report's (pydantic builds a
    # deferred model's schema on first use, and a parent built first does not complete its
    # nested models: the repository's tree would be built twice, about 10 ms).
    RepositoryReport.model_rebuild()
    head = render_json(report.model_copy(update={"repositories": []}))
    before, marker, after = head.partition(_NO_REPOSITORIES)
    if not marker:  # never: the field is always there (keeps the text right if it were not)
        yield render_json(report)
        return
    yield f'{before}\n  "repositories": ['
    for index, repository in enumerate(report.repositories):
        text = _repository_json(repository).replace("\n", _REPOSITORY_INDENT)
        yield ("" if index == 0 else ",") + _REPOSITORY_INDENT + text
    yield ("\n  ]" if report.repositories else "]") + after


def _repository_json(repository: RepositoryReport) -> str:
    """One repository as ``render_json`` writes it, before it is nested (``json_chunks``)."""
    try:
        return repository.model_dump_json(by_alias=True, indent=2)
    except PydanticSerializationError:
        data, _ = _scrub(repository.model_dump(mode="json", by_alias=True))
        return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode()


def _scrub(value: object) -> tuple[object, bool]:
    """``value`` (a JSON-mode dump) with lone surrogates replaced, and whether any was."""
    if isinstance(value, str):
        clean = scrub_surrogates(value)
        return clean, clean != value
    if isinstance(value, dict):
        pairs = [(_scrub(k), _scrub(v)) for k, v in value.items()]
        changed = any(k[1] or v[1] for k, v in pairs)
        return ({k[0]: v[0] for k, v in pairs} if changed else value), changed
    if isinstance(value, list):
        items = [_scrub(item) for item in value]
        changed = any(item[1] for item in items)
        return ([item[0] for item in items] if changed else value), changed
    return value, False


def scrubbed(report: ScanReport) -> ScanReport:
    """Return ``report`` with every lone surrogate replaced by U+FFFD (itself when it has none).

    Managers report such strings as problems, but a message or reason may still quote one;
    a terminal, a pipe or a UTF-8 file cannot take it, so no renderer ever sees one.
    """
    data, changed = _scrub(report.model_dump(mode="json", by_alias=True))
    return ScanReport.model_validate(data) if changed else report


def _down_hosts(report: ScanReport) -> dict[str, str]:
    """The hosts found unreachable this run, and why (``HostReport.unreachable``)."""
    return {host: s.unreachable for host, s in report.hosts.items() if s.unreachable}


# The reason the governor gives every request it failed because a host's primary rate limit is
# used up (``http.governor.used_up``): ``"<host>: the rate limit for <whose> is used up until
# <time> (x-ratelimit-reset, …"``. A host has no blank; a registry's or datasource's own
# reasons start with words ("npm package 'x': …"), so they never read as one.
_USED_UP = re.compile(
    r"(?P<host>\S+?): the rate limit for (?P<whose>.+?) is used up until "
    r"(?P<until>[^()]+?) \(x-ratelimit-reset"
)

# The reason of a request failed because its host's cool-down is longer than the bound (a
# ``Retry-After`` of an hour; ``governor.over_bound_text``): ``"<host> is rate limited (<why>):
# 3599 s of its cool-down left, more than the 60 s patchula waits, so the lookup failed without
# waiting"`` for the queued ones, ``the server asked to wait 3600 s`` for the first.
_OVER_BOUND = re.compile(
    r"(?P<host>\S+?) is rate limited \((?P<why>.*)\): "
    r"(?:[\d.]+ s of its cool-down left|the server asked to wait [\d.]+ s), "
    r"more than the (?P<bound>[\d.]+) s patchula waits, so the lookup failed without waiting"
)

# The reason of a lookup failed because its host was given up on as too slow (the fetch facade's
# ``Fetcher._too_slow_reason``): ``"<host> is too slow: 16 requests in a row ran out of the 30 s
# deadline; its other lookups were given up"``.
_TOO_SLOW = re.compile(
    r"(?P<host>\S+?) is too slow: (?P<why>\d+ requests in a row ran out of the \S+ s deadline); "
    r"its other lookups were given up"
)

# Why a row was not done, as its host line names it: ``(host, "<host> unreachable (…)")``.
NotDone = tuple[str, str]


def _not_done_by(dep: DependencyReport, down: dict[str, str]) -> NotDone | None:
    """The host-wide reason ``dep``'s lookup was not done, as ``(host, what)``, or ``None``.

    A host found unreachable (the fetch facade starts such a reason with ``"<host> is
    unreachable ("``), a host whose primary rate limit is used up until its reset (the
    governor's ``used_up`` reason), one cooling down for longer than the wait bound or one
    given up on as too slow (``_TOO_SLOW``): the row stands for one of many lookups that
    failed alike, counted on its host's line instead of shown.
    """
    if dep.status != "error" or not dep.reason:
        return None
    reason = dep.reason
    host = next((h for h in down if reason.startswith(f"{h} is unreachable (")), None)
    if host is not None:
        return host, f"{host} unreachable ({down[host]})"
    limited = _USED_UP.match(reason)
    if limited is not None:
        host = limited["host"]
        return host, f"{host} rate limit for {limited['whose']} used up until {limited['until']}"
    cooling = _OVER_BOUND.fullmatch(reason)
    if cooling is not None:
        host, bound = cooling["host"], cooling["bound"]
        return host, (
            f"{host} rate limited ({cooling['why']}) for longer than the {bound} s patchula waits"
        )
    slow = _TOO_SLOW.fullmatch(reason)
    if slow is not None:
        return slow["host"], f"{slow['host']} too slow ({slow['why']})"
    return None


def _not_done(deps: Iterable[DependencyReport], down: dict[str, str]) -> Counter[NotDone]:
    """Rows per host-wide reason (unreachable, rate limited) their lookup was not done."""
    return Counter(why for d in deps if (why := _not_done_by(d, down)) is not None)


def _host_lines(counts: Counter[NotDone]) -> list[str]:
    """One line per host and reason: ``"h unreachable (ConnectError): 683 lookups not done"``.

    A used-up rate limit names whose budget and its reset: ``"api.github.com rate limit for
    this token (GH_TOKEN) used up until 17:42Z: 12 lookups not done"``.
    """
    return [
        f"{what}: {n} {'lookup' if n == 1 else 'lookups'} not done"
        for (_, what), n in sorted(counts.items())
    ]


# Statuses that compare a current version with the releases: only they give libyears.
EVALUATED = ("up-to-date", "outdated", "held-back")


def evaluated(report: ScanReport) -> bool:
    """Whether any dependency was compared with its releases (libyears mean something)."""
    s = report.summary.by_status
    return any(getattr(s, status.replace("-", "_")) for status in EVALUATED)


def unread_words(report: ScanReport) -> str | None:
    """``"5 of 5 repositories could not be read"`` (``None``: every one was read).

    The repositories whose rows say a host's primary rate limit is used up (the governor's
    ``used_up`` reason: they were refused or never sent) are named apart, with the limit's
    reset: ``" (4 as api.github.com rate limit for this token (GH_TOKEN) is used up until
    17:42Z)"``.
    """
    unread = [r for r in report.repositories if r.extraction.source == "none"]
    if not unread:
        return None
    total = report.summary.repositories
    words = f"{len(unread)} of {total} {'repository' if total == 1 else 'repositories'}"
    words += " could not be read"
    limits = Counter(
        (m["host"], m["whose"], m["until"])
        for r in unread
        for p in r.problems
        if p.file == r.target and (m := _USED_UP.match(p.message)) is not None
    )
    causes = [
        f"{n} as {host} rate limit for {whose} is used up until {until}"
        for (host, whose, until), n in sorted(limits.items())
    ]
    return words + (f" ({'; '.join(causes)})" if causes else "")


def missing_shards_words(report: ScanReport) -> str | None:
    """``"shards 2/4 and 4/4 missing: 2 of 4 targets not in this report"`` (``None``: none).

    A merged report whose ``targets.missingShards`` name shares no merged report held.
    """
    targets = report.targets
    if targets is None or not targets.missing_shards:
        return None
    shares = targets.missing_shards
    if len(shares) > 5:  # noqa: PLR2004 - at most five named
        shown = f"{', '.join(shares[:5])} and {len(shares) - 5} more"
    else:
        shown = " and ".join(filter(None, [", ".join(shares[:-1]), shares[-1]]))
    return (
        f"{'shard' if len(shares) == 1 else 'shards'} {shown} missing: "
        f"{targets.missing_shard_targets} of {targets.count} targets not in this report"
    )


def manifest_severities(report: ScanReport) -> Counter[str]:
    """Problems per severity, without the one of each repository that could not be read."""
    return Counter(
        p.severity for r in report.repositories if r.extraction.source != "none" for p in r.problems
    )


def summary_line(report: ScanReport) -> str:
    """Return the one-line summary: counts per status, total libyears and host troubles.

    Libyears only when a dependency was evaluated against its releases; repositories that
    could not be read are counted apart (``unread_words``), their reasons not as manifest
    errors. Host troubles: unreachable hosts and hosts whose rate limit is used up (with the
    lookups each left undone), and hosts whose answers the cache cannot keep usefully. An
    ``--offline`` run says so, and how many dependencies the cache could not answer. Rows
    with a verdict part of whose lookup failed (``failedLookup``) are counted apart.
    """
    s = report.summary
    # Read by field, not ``model_dump``: a plain table never builds the report's serializers.
    counts = {status: getattr(s.by_status, status.replace("-", "_")) for status in STATUSES}
    parts = [f"{n} {status}" for status, n in counts.items() if n]
    unread = unread_words(report)
    read = sum(1 for r in report.repositories if r.extraction.source != "none")
    if not parts and (read or unread is None):
        parts = ["none found"]  # in repositories that were read
    line = (
        f"{s.dependencies} {'dependency' if s.dependencies == 1 else 'dependencies'} in "
        f"{s.repositories} {'repository' if s.repositories == 1 else 'repositories'}"
        + (f": {', '.join(parts)}" if parts else "")
    )
    if unread is not None:
        line += f"; {unread}"
    line += f"; {missing}" if (missing := missing_shards_words(report)) is not None else ""
    if evaluated(report):
        line += f"; {s.libyears:.1f} libyears"
    if s.libyears_unknown:
        line += f" (+{s.libyears_unknown} behind with unknown dates)"
    if report.options.get("offline"):
        n = s.not_cached
        line += "; offline: " + (
            f"{n} {'dependency' if n == 1 else 'dependencies'} not in the cache"
            if n
            else "every answer from the cache"
        )
    lacking = sum(
        1
        for r in report.repositories
        for d in r.dependencies
        if d.failed_lookup is not None
        and d.status != "error"
        and not (report.options.get("offline") and NOT_CACHED in d.failed_lookup)
    )
    if lacking:
        # A verdict on what was read, part of the lookup failed (publish times a wait needed,
        # a newer major's check): failed lookups all the same.
        line += (
            f"; {lacking} {'dependency' if lacking == 1 else 'dependencies'} with part of the "
            "lookup failed (failedLookup)"
        )
    severities = manifest_severities(report)
    for severity in ("error", "warning"):
        n = severities[severity]
        if n:
            line += f"; {n} manifest {severity}{'s' if n != 1 else ''}"
    down = _down_hosts(report)
    deps = [d for r in report.repositories for d in r.dependencies]
    not_done = _not_done(deps, down)
    for text in _host_lines(not_done):
        line += f"; {text}"
    for host in sorted(down.keys() - {host for host, _ in not_done}):
        # Down, yet no row failed on it: what it would have given (publish times, a date API)
        # is missing from rows that still have a verdict.
        line += f"; {host} unreachable ({down[host]}): what it gives is missing from the rows"
    for host, h in report.hosts.items():
        if h.unvalidated:
            line += (
                f"; {host} sent no ETag, Last-Modified or Cache-Control lifetime: "
                f"{h.unvalidated} {'document is' if h.unvalidated == 1 else 'documents are'} "
                "refetched every run (-v says what helps)"
            )
    return line


def unvalidated_line(host: str, count: int) -> str:
    """Say why the cache could not spare ``count`` of ``host``'s documents, and what helps.

    RFC 9111 §4.2 (freshness) and §4.3 (validation): with neither, a stored response can only
    be fetched again in full.
    """
    return (
        f"{host}: {count} {'answer' if count == 1 else 'answers'} carried neither validators "
        "(ETag, Last-Modified) nor freshness (Cache-Control max-age, Expires), so every run "
        "fetches them again in full; a registry or proxy that passes those headers through "
        "lets the cache revalidate them (304) or reuse them"
    )


# A content digest (OCI image spec, "Digests": ``algorithm:encoded``), e.g. ``sha256:<64 hex>``,
# or a git commit SHA standing alone (40 hex, 64 in a SHA-256 repository), e.g. a GitHub
# action's ``uses: o/r@<sha>``: not part of a longer run of letters and digits.
_DIGEST = re.compile(
    r"(?P<algorithm>[a-z0-9]+(?:[+._-][a-z0-9]+)*):(?P<hex>[0-9a-fA-F]{32,})"
    r"|(?<![0-9A-Za-z])(?P<commit>[0-9a-fA-F]{64}|[0-9a-fA-F]{40})(?![0-9A-Za-z])"
)
# Hex digits of a digest a table shows: enough to tell digests of one image apart.
SHORT_HEX = 8
# Hex digits of a commit a table shows: git's own abbreviation (``git log --oneline``).
SHORT_COMMIT = 7


def short_digest(digest: str) -> str:
    """``sha256:abcd1234…`` or, for a commit SHA, ``abc1234…``: a digest's short form.

    A digest keeps its algorithm and first ``SHORT_HEX`` hex digits, a commit its first
    ``SHORT_COMMIT``. Tables, plain text and Markdown show this form; the JSON report keeps the
    whole digest. A value that is neither is returned as it is.
    """
    found = _DIGEST.fullmatch(digest)
    if found is None:
        return digest
    if found["commit"] is not None:
        return f"{found['commit'][:SHORT_COMMIT]}…"
    return f"{found['algorithm']}:{found['hex'][:SHORT_HEX]}…"


def shorten_digests(text: str) -> str:
    """``text`` with every digest and commit SHA in it in its short form (``short_digest``)."""
    if len(text) < SHORT_HEX:
        return text
    return _DIGEST.sub(lambda m: short_digest(m[0]), text)


def _current(dep: DependencyReport) -> str:
    """Current, with the digest the reference pins (``3.12@sha256:abcd1234…``)."""
    current = dep.current or ""
    return f"{current}@{short_digest(dep.digest)}" if dep.digest else current


def _eligible(dep: DependencyReport) -> str:
    """Eligible, with its digest when a digest-pinned reference is proposed a newer tag.

    A row with a proposal at the declared precision (a tool's ``20`` → ``24``, an alias
    ``lts/iron`` → ``lts/krypton``) shows the proposal, what to write, with the full version
    it resolves to beside it: ``24 (24.13.1)``, so a prefix is not turned into a pin.
    """
    eligible = dep.eligible or ""
    if dep.new_digest:
        return f"{eligible}@{short_digest(dep.new_digest)}"
    proposed = dep.proposed
    if not proposed or proposed.removeprefix("v") == eligible.removeprefix("v"):
        return eligible  # an exact pin: the version itself, as the other columns write it
    return f"{proposed} ({eligible})"


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M") + "Z" if value else "unknown"


def _notes(dep: DependencyReport) -> str:
    notes: list[str] = []
    if dep.held_back:
        held = ", ".join(
            f"{h.version} (eligible {_when(h.eligible_at)})"
            if h.eligible_at
            else f"{h.version} (age unknown)"
            for h in dep.held_back[-3:]
        )
        more = f" +{len(dep.held_back) - 3} more" if len(dep.held_back) > 3 else ""  # noqa: PLR2004
        notes.append(f"held back: {held}{more}")
    if dep.reason:
        notes.append(dep.reason)
    if dep.major_available:
        notes.append(f"new major: {dep.major_available}")
    if dep.markers:
        notes.append(f"when {dep.markers}")
    return shorten_digests("; ".join(notes))


def _visible(deps: Iterable[DependencyReport], *, show_all: bool) -> list[DependencyReport]:
    """The rows a table shows: not up-to-date or skipped ones unless ``show_all``.

    A row part of whose lookup failed (``failed_lookup``) is shown whatever its status: its
    verdict may be incomplete.
    """
    return [
        d
        for d in deps
        if show_all or d.status not in {"up-to-date", "skipped"} or d.failed_lookup is not None
    ]


def _hidden_line(repo: RepositoryReport, hidden: int) -> str:
    """``  (12 up-to-date or skipped rows hidden, 2 of them up to date with a note; -v …)``.

    An up-to-date row may still carry something to know (a newer release not proposed because
    npm follows ``dist-tags.latest``, a floating tag that lags, a Python bound it was judged
    for): the count of those among the hidden rows is named, so a clean table never hides them
    in silence (``_visible`` hides exactly the up-to-date rows with no ``failed_lookup``).
    ``hidden`` is how many rows ``_selected`` left out (> 0, so ``show_all`` is off).
    """
    noted = sum(
        1
        for d in repo.dependencies
        if d.status == "up-to-date" and d.reason and d.failed_lookup is None
    )
    rows_word = "row" if hidden == 1 else "rows"
    with_note = f", {noted} of them up to date with a note" if noted else ""
    return f"  ({hidden} up-to-date or skipped {rows_word} hidden{with_note}; -v shows them)"


def _selected(
    repo: RepositoryReport, down: dict[str, str], *, show_all: bool
) -> tuple[list[DependencyReport], int, Counter[NotDone]]:
    """What every renderer shows of ``repo``: its rows, how many are hidden, lookups not done.

    Rows whose host was unreachable or had its rate limit used up are left out of the rows
    and counted per host instead.
    """
    rows = _visible(repo.dependencies, show_all=show_all)
    hidden = len(repo.dependencies) - len(rows)
    not_done = _not_done(rows, down)
    return [d for d in rows if _not_done_by(d, down) is None], hidden, not_done


def _by_file(rows: Iterable[DependencyReport]) -> dict[str, list[DependencyReport]]:
    """``rows`` grouped by manifest file, files in first-seen order."""
    by_file: dict[str, list[DependencyReport]] = {}
    for dep in rows:
        by_file.setdefault(dep.file, []).append(dep)
    return by_file


VIA = {"lockfile": "lock", "pin": "pin", "range": "range", "dist-tag": "tag"}
# Columns by the terminal width they need: narrow terminals keep what a decision needs.
_WIDE = 150
_MEDIUM = 110


def _package(dep: DependencyReport) -> str:
    return dep.name if dep.name == dep.package_name else f"{dep.name} ({dep.package_name})"


def _behind(dep: DependencyReport) -> str:
    return "" if dep.versions_behind is None else str(dep.versions_behind)


def _libyears(dep: DependencyReport) -> str:
    return "" if dep.libyears is None else f"{dep.libyears:.2f}"


# The table's columns: header, the terminal width a column needs to be shown, and its cell.
COLUMNS: tuple[tuple[str, int, Callable[[DependencyReport], str]], ...] = (
    ("package", 0, _package),
    ("type", _WIDE, lambda d: d.dep_type),
    ("declared", _MEDIUM, lambda d: shorten_digests(d.declared or "")),
    ("current", 0, _current),
    ("via", _WIDE, lambda d: VIA.get(d.current_source or "", "")),
    ("latest", 0, lambda d: d.latest or ""),
    ("eligible", 0, _eligible),
    ("update", 0, lambda d: d.update_type or ""),
    ("behind", _MEDIUM, _behind),
    ("libyears", _MEDIUM, _libyears),
    ("status", 0, lambda d: d.status),
    ("notes", 0, _notes),
)


def render_table(report: ScanReport, console: Console, *, show_all: bool = False) -> None:
    """Print the report grouped by repository and file.

    Up-to-date and skipped rows are shown only with ``show_all``. On a terminal it uses colour
    and box drawing and drops the less essential columns when narrow; piped, it prints plain
    ASCII columns. Text is never dropped: a cell wider than its column folds onto the next
    line, so a caller wanting whole lines (a log) passes a console wider than any row. Rows
    whose lookup failed because their host was unreachable or its rate limit used up are one
    line per host and repository ("127.0.0.1:9 unreachable (ConnectError): 40 lookups not
    done", "api.github.com rate limit for … used up until 17:42Z: 12 lookups not done"); the
    JSON report keeps each row. Lone surrogates are shown as U+FFFD (``scrubbed``).
    """
    # rich is imported to draw a table, not to render JSON or Markdown (issue 12: start-up).
    from rich import box  # noqa: PLC0415 - lazy: start-up
    from rich.table import Table  # noqa: PLC0415 - lazy: start-up
    from rich.text import Text  # noqa: PLC0415 - lazy: start-up

    report = scrubbed(report)
    plain = not console.is_terminal
    width = console.width
    down = _down_hosts(report)
    for repo in report.repositories:
        head = _head(repo)
        console.print(Text(_plain_text(head), style="" if plain else "bold"))
        rows, hidden, not_done = _selected(repo, down, show_all=show_all)
        if not repo.dependencies and not repo.problems:
            console.print("  no dependencies found")
        for file, deps in _by_file(rows).items():
            table = Table(
                title=Text(_plain_text(file)),
                title_justify="left",
                box=box.ASCII2 if plain else box.SIMPLE_HEAVY,
                show_edge=not plain,
                pad_edge=False,
            )
            shown = [(name, cell) for name, need, cell in COLUMNS if width >= need]
            # Every cell is a Text: what a checkout or registry wrote is shown literally (rich
            # markup such as "[bold]" is not interpreted) and its control characters as spaces
            # (no escape sequence reaches the terminal), as the plain renderer does.
            cells: list[list[Text]] = [
                [
                    Text(dep.status, style="" if plain else STATUS_STYLE[dep.status])
                    if name == "status"
                    else Text(_plain_text(cell(dep)))
                    for name, cell in shown
                ]
                for dep in deps
            ]
            for i, (name, _) in enumerate(shown):
                longest = max([len(name)] + [len(str(row[i])) for row in cells])
                if name == "notes":
                    table.add_column(name, overflow="fold", ratio=1)
                elif name in {"package", "declared"}:
                    # Module paths are long: keep them readable before anything else folds.
                    table.add_column(name, overflow="fold", min_width=min(longest, 40))
                else:
                    # Versions are never cut, but a 36-character pseudo-version may fold.
                    table.add_column(name, overflow="fold", min_width=min(longest, 16))
            for row in cells:
                table.add_row(*row)
            console.print(table)
        for text in _host_lines(not_done):
            console.print(
                Text(f"  {_plain_text(text)}", style="" if plain else STATUS_STYLE["error"])
            )
        if hidden:
            console.print(_hidden_line(repo, hidden), markup=False, highlight=False)
        ignored = ignored_line(repo)
        if ignored:
            console.print(_plain_text(ignored), markup=False, highlight=False, emoji=False)
        _print_problems(repo, console)
        console.print()
    console.print(_plain_text(summary_line(report)), markup=False, highlight=False, emoji=False)


# At most this many of a repository's ignored files are named in the table's note.
IGNORED_NAMED = 3


def ignored_line(repo: RepositoryReport) -> str:
    """The note of the files ``ignore-paths`` kept out of ``repo``, ``""`` when there are none.

    ``"  (2 manifests not scanned, under ignore-paths: examples/a/package.json,
    tests/requirements.txt; set ignore-paths to read them)"``: the count, the first
    ``IGNORED_NAMED`` paths, ``"at least"`` when discovery stopped counting.
    """
    ignored = repo.extraction.ignored
    if not ignored:
        return ""
    count = len(ignored)
    word = "manifest" if count == 1 else "manifests"
    many = "" if repo.extraction.ignored_complete else "at least "
    named = ", ".join(ignored[:IGNORED_NAMED]) + (", …" if count > IGNORED_NAMED else "")
    return (
        f"  ({many}{count} {word} not scanned, under ignore-paths: {named}; "
        "set ignore-paths to read them)"
    )


def _head(repo: RepositoryReport) -> str:
    """``target @ commit``; ``(not read)`` after a target nothing was extracted from."""
    head = f"{repo.target}" + (f" @ {repo.commit[:12]}" if repo.commit else "")
    return head + (" (not read)" if repo.extraction.source == "none" else "")


def render_plain(report: ScanReport, *, show_all: bool = False, width: int | None = None) -> str:
    """Return the table as plain text: what ``render_table`` prints piped, built in one pass.

    The same lines as ``render_table`` on a console without a width limit: per repository its
    head, per file a title and aligned columns (``" | "`` between cells, a ``-``/``+`` rule under
    the header, every column), host lines for unreachable and rate-limited hosts, hidden rows
    counted, problems, and the summary line last. Nothing is folded or cut; no line ends in
    blanks. Column widths are display cells (an East Asian wide character counts 2, a combining
    mark 0). Text is printed literally (no markup); a control character (tab, newline, escape
    …) is shown as a space, so a row stays one line; lone surrogates become U+FFFD.

    With ``width`` (``COLUMNS``, in cells) the table keeps the columns a terminal of that width
    shows (the widths ``COLUMNS`` need) and folds long cells onto more lines of their row, at
    spaces where it can (``_fold``), so that each table line fits in ``width``; nothing is ever
    cut. A column is never folded narrower than its header, nor than 8 cells (notes) or 16 (the
    others) when its text is longer: a table whose columns cannot fit even so is wider than
    ``width``. Other lines stay whole.
    """
    down = _down_hosts(report)
    out: list[str] = []
    for repo in report.repositories:
        head = _head(repo)
        out.append(_plain_text(head).rstrip())
        rows, hidden, not_done = _selected(repo, down, show_all=show_all)
        if not repo.dependencies and not repo.problems:
            out.append("  no dependencies found")
        for file, deps in _by_file(rows).items():
            out.append(_plain_text(file).rstrip())
            out.extend(_plain_table(deps) if width is None else _folded_table(deps, width))
        out.extend(_plain_text(f"  {text}").rstrip() for text in _host_lines(not_done))
        if hidden:
            out.append(_hidden_line(repo, hidden))
        ignored = ignored_line(repo)
        if ignored:
            out.append(_plain_text(ignored).rstrip())
        out.extend(
            _plain_text(
                f"  {p.severity}: {f'{p.file}:{p.line}' if p.line else p.file}: {p.message}"
            ).rstrip()
            for p in repo.problems
        )
        out.append("")
    out.append(_plain_text(summary_line(report)).rstrip())
    # Table rows are clean already; the other lines were cleaned as they were added.
    return scrub_surrogates("\n".join(out) + "\n")


# C0 and C1 control characters and DEL: a tab, newline or escape in a cell would break the
# row onto another line or reach the terminal a log is later shown on. Unicode's bidirectional
# controls too (U+200E-200F, U+202A-202E, U+2066-2069, U+061C): an override in a name would
# reorder what the terminal shows of the rest of the line ("Trojan Source", CVE-2021-42574).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _plain_text(text: str) -> str:
    if text.isascii() and text.isprintable():
        return text
    return _CONTROL.sub(" ", text)


def _cells(text: str) -> int:
    """Display width of ``text`` in terminal cells (East Asian wide 2, combining marks 0)."""
    if text.isascii():
        return len(text)
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


_HEADER = [name for name, _, _ in COLUMNS]
_CELLS = [cell for _, _, cell in COLUMNS]


def _plain_table(deps: list[DependencyReport]) -> list[str]:
    """The header, the rule and one line per row of one file's table."""
    rows = [[cell(dep) for cell in _CELLS] for dep in deps]
    text = "".join("".join(row) for row in rows)
    pad: Callable[[str, int], str]
    if text.isascii() and text.isprintable():
        # The common case, measured and padded by C string methods alone.
        widths = [max(map(len, column)) for column in zip(_HEADER, *rows, strict=True)]
        pad = str.ljust
    else:
        rows = [[_plain_text(cell) for cell in row] for row in rows]
        widths = [max(map(_cells, column)) for column in zip(_HEADER, *rows, strict=True)]
        pad = _pad
    lines = [" | ".join(map(pad, _HEADER, widths)).rstrip()]
    lines.append("+".join("-" * (w + 2) for w in widths)[1:-1])
    lines.extend(" | ".join(map(pad, row, widths)).rstrip() for row in rows)
    return lines


def _pad(cell: str, width: int) -> str:
    return cell + " " * (width - _cells(cell))


# The narrowest a column is folded to, in cells, unless its header or its longest cell is
# narrower: the notes to 8 (a word in pieces of 2 or 3 cells is unreadable), the others to 16
# (as the terminal table: versions are never cut, but a 36-character pseudo-version may fold).
_FOLD_MIN = 8
_KEEP_MIN = 16
_SEPARATOR = 3  # " | "


def _folded_table(deps: list[DependencyReport], width: int) -> list[str]:
    """``_plain_table`` within ``width`` cells: the columns shown at that width, cells folded.

    Column widths start at their longest cell; while the table is too wide, columns give cells:
    the notes first (down to ``_FOLD_MIN``), then the others widest first, as rich's collapse
    does, so short columns keep their text on one line (down to ``_KEEP_MIN``), the package
    name last (down to ``_KEEP_MIN``); then, if that is not enough and folding every column down
    to ``_FOLD_MIN`` (or its header) makes the table fit, down to that.
    """
    shown = [(name, cell) for name, need, cell in COLUMNS if width >= need]
    header = [name for name, _ in shown]
    rows = [[_plain_text(cell(dep)) for _, cell in shown] for dep in deps]
    widths = [max(map(_cells, column)) for column in zip(header, *rows, strict=True)]
    excess = sum(widths) + _SEPARATOR * (len(widths) - 1) - width
    # The notes give first, then the other columns widest first, the package name last: it is
    # the row's key, and a name folded mid-word is neither readable nor greppable.
    for first in ("notes", None, "package"):
        floors = [
            w if first is not None and h != first else _floor(w, h, _KEEP_MIN)
            for w, h in zip(widths, header, strict=True)
        ]
        if first is None:
            floors = [
                w if h == "package" else f for w, h, f in zip(widths, header, floors, strict=True)
            ]
        excess = _collapse(widths, floors, excess)
    if excess > 0:
        # Versions fold below 16 cells only when that makes the table fit at all.
        narrower = list(widths)
        floors = [_floor(w, h, _FOLD_MIN) for w, h in zip(widths, header, strict=True)]
        left = _collapse(narrower, floors, excess)
        if left <= 0:
            widths, excess = narrower, left
    lines = [" | ".join(map(_pad, header, widths)).rstrip()]
    lines.append("+".join("-" * (w + 2) for w in widths)[1:-1])
    for row in rows:
        folded = [_fold(cell, w) for cell, w in zip(row, widths, strict=True)]
        height = max(map(len, folded))
        for k in range(height):
            parts = [piece[k] if k < len(piece) else "" for piece in folded]
            lines.append(" | ".join(map(_pad, parts, widths)).rstrip())
    return lines


def _floor(width: int, header: str, keep: int) -> int:
    """The narrowest a column of ``width`` cells may fold to: ``keep``, the notes ``_FOLD_MIN``."""
    return min(width, max(len(header), _FOLD_MIN if header == "notes" else keep))


def _collapse(widths: list[int], floors: list[int], excess: int) -> int:
    """Narrow ``widths`` in place by up to ``excess`` cells, the widest first, not below ``floors``.

    Returns the excess left (above 0: every column is at its floor).
    """
    while excess > 0:
        room = [i for i, (w, f) in enumerate(zip(widths, floors, strict=True)) if w > f]
        if not room:
            break
        widest = max(widths[i] for i in room)
        at_top = [i for i in room if widths[i] == widest]
        # The widest ones give down to the next width below theirs at most, shared evenly.
        below = max([widths[i] for i in room if widths[i] < widest] + [0])
        step = max(1, min(widest - below, -(-excess // len(at_top))))
        for i in at_top:
            give = min(step, widths[i] - floors[i], excess)
            widths[i] -= give
            excess -= give
    return excess


def _fold(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` cells: broken at spaces, a longer word cut in pieces.

    A word is cut after a ``/`` where it has one (``_split_at``).

    Every character is kept (a space at a break is the only thing a line loses); an empty cell
    is one empty line.
    """
    if _cells(text) <= width:
        return [text]
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        candidate = f"{line} {word}" if line else word
        if _cells(candidate) <= width:
            line = candidate
            continue
        if line:
            lines.append(line)
        rest = word
        while _cells(rest) > width:
            piece, rest = _split_at(rest, width)
            lines.append(piece)
        line = rest
    if line or not lines:
        lines.append(line)
    return lines


def _split_at(word: str, width: int) -> tuple[str, str]:
    """The longest head of ``word`` within ``width`` cells (one character at least), the rest.

    The head ends after its last ``/`` when it holds one: ``@braintree/sanitize-url`` folds as
    ``@braintree/`` and ``sanitize-url``, a scope and a name, never mid-word where a path or
    scoped name has a place to break.
    """
    used = 0
    for i, char in enumerate(word):
        used += _cells(char)
        if used > width:
            cut = max(i, 1)
            slash = word.rfind("/", 0, cut)
            if slash > 0:
                cut = slash + 1
            return word[:cut], word[cut:]
    return word, ""


def _print_problems(repo: RepositoryReport, console: Console) -> None:
    for p in repo.problems:
        where = f"{p.file}:{p.line}" if p.line else p.file
        text = _plain_text(f"  {p.severity}: {where}: {p.message}")
        console.print(text, markup=False, highlight=False, emoji=False)
