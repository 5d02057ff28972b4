"""Remote GitHub repositories (``github:OWNER/REPO[@REF]``, ``github:OWNER/*``) on the REST API.

What a scan needs of a repository without a checkout: the commit a ref names
(``resolve_commit``, one request: ``commits/{ref}`` with the ``vnd.github.sha`` media type),
the commit's file list (``read_tree``: ``git/trees/{sha}?recursive=1``, walking sub-trees when
GitHub truncates the listing), the bytes of the few manifest files it selects (``read_blob``:
``git/blobs/{sha}``) and an owner's repositories (``list_repositories``). Every request goes
through the fetch facade (token, per-host limits, the shared governor, the cache); nothing here
opens a socket. Trees and blobs are named by their SHA, so their answers never change: the
facade keeps them fresh for ``IMMUTABLE_SECONDS`` and they are stored as compact derived
documents (a tree as its ``(path, mode, sha, size)`` rows, a blob as its decoded bytes). A blob
is stored under its SHA alone (``blob_address``), not its repository's URL, and a run's
repositories share one ``BlobMemo``: a content is fetched once per run, and not again while
the cache keeps it, whichever repository or commit holds it.

Sources: docs.github.com REST "Commits" (get a commit; the ``sha`` media type), "Git trees"
(``recursive``, ``truncated``: 100,000 entries or 7 MB), "Git blobs" (base64 ``content``),
"Repositories" (list organization / user repositories), "Using pagination in the REST API";
registries.md §6; git's object format (``git hash-object``: ``blob <size>``, a NUL, the data).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import functools
import hashlib
import os
import re
from collections import OrderedDict
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

import msgspec

from patchula.datasource.base import describe_decode_error, linked_pages
from patchula.datasource.github_releases import DEFAULT_BASE_URL, HEADERS, REGISTRY, check_page
from patchula.errors import (
    LookupFailed,
    ManifestError,
    PackageNotFound,
    RegistryError,
    RepositoryUnreadable,
)
from patchula.http.auth import redact_text, redact_url
from patchula.http.caching import revalidating
from patchula.http.flight import Flight
from patchula.names import has_lone_surrogate

if TYPE_CHECKING:
    from patchula.datasource.base import MethodFetch
    from patchula.models import FetchResponse
    from patchula.settings import Settings

__all__ = [
    "BlobMemo",
    "OwnerTarget",
    "RepoTarget",
    "Tree",
    "TreeEntry",
    "api_base",
    "list_repositories",
    "parse_target",
    "read_blob",
    "read_tree",
    "resolve_commit",
    "web_url",
]

PREFIX = "github:"
# GitHub's rules: an owner is 1-39 letters, digits or hyphens (never a leading one); a
# repository 1-100 letters, digits, ``.``, ``-``, ``_``, and never ``.`` or ``..``.
_OWNER = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,38}")
_REPO = re.compile(r"[A-Za-z0-9._-]{1,100}")
# A ref as git's check-ref-format allows it: no control characters, space, ``~^:?*[\``, no
# ``..`` or ``@{``, no empty, leading ``.`` or ``.lock`` component; at most ``MAX_REF_BYTES``.
_REF_FORBIDDEN = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//")
MAX_REF_BYTES = 255
_SHA = re.compile(r"[0-9a-f]{40}")
_SHA_ANY_CASE = re.compile(r"[0-9a-fA-F]{40}")

# The ``sha`` media type of "Get a commit": the body is the commit's SHA-1 as plain text, and
# its ETag that SHA, so an unmoved branch revalidates with a 304.
SHA_HEADERS = {**HEADERS, "Accept": "application/vnd.github.sha"}
COMMIT_REPRESENTATION = "github-commit-sha-v1"
TREE_REPRESENTATION = "github-tree-v1"
BLOB_REPRESENTATION = "github-blob-v1"
LISTING_REPRESENTATION = "github-repo-list-v1"
# Trees and blobs are addressed by content: a year of freshness is "forever" for a cache.
IMMUTABLE_SECONDS = 365 * 24 * 3600.0

# Bounds against a hostile or broken server: entries of one repository's tree, sub-tree
# listings a walk sends, sub-tree requests in flight at once, one path's UTF-8 bytes.
MAX_TREE_ENTRIES = 1_000_000
MAX_SUBTREE_REQUESTS = 10_000
SUBTREE_CONCURRENCY = 8
MAX_PATH_BYTES = 4096
# Repository listings: 100 per page (the most GitHub serves), at most this many pages.
LISTING_PAGE_SIZE = 100
MAX_LISTING_PAGES = 1000
# A message GitHub wrote is quoted at most this long, control characters dropped.
MESSAGE_LIMIT = 200
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")
# Where a GitHub token comes from (``credentials.github_credential``), for a reason.
TOKEN_VARIABLES = "GITHUB_TOKEN or GH_TOKEN"  # noqa: S105 - variable names, no secret

BLOB_MODES = frozenset({"100644", "100755", "120000"})
TREE_MODE = "040000"
_SUBMODULE = "160000"


# --- targets ---------------------------------------------------------------------------------


class RepoTarget(msgspec.Struct, frozen=True):
    """One repository, ``github:OWNER/REPO[@REF]``; ``ref`` ``None`` is the default branch.

    Names keep the case they were given in (GitHub compares them case-insensitively).
    """

    owner: str
    name: str
    ref: str | None = None

    def text(self) -> str:
        """The canonical target text: ``github:owner/name``, with ``@ref`` when one is set."""
        base = f"{PREFIX}{self.owner}/{self.name}"
        return base if self.ref is None else f"{base}@{self.ref}"


class OwnerTarget(msgspec.Struct, frozen=True):
    """Every repository of an organisation or user: ``github:OWNER/*``."""

    owner: str

    def text(self) -> str:
        """The canonical target text, ``github:owner/*``."""
        return f"{PREFIX}{self.owner}/*"


def parse_target(target: str) -> RepoTarget | OwnerTarget | None:
    """Parse ``github:OWNER/REPO``, ``github:OWNER/REPO@REF`` or ``github:OWNER/*``.

    Returns ``None`` when ``target`` does not start with ``github:`` (a local path). A ``REF``
    is a branch, a tag or a commit SHA; a 40-hex one is kept in lower case. A repository name
    ending in ``.git`` (copied from a clone URL) names the repository without it.

    Raises:
        ValueError: ``target`` starts with ``github:`` but is malformed; the message is the
            reason (missing or extra parts, an owner or repository name GitHub refuses, a
            ref git refuses or longer than ``MAX_REF_BYTES`` bytes).
    """
    if not target.startswith(PREFIX):
        return None
    body = target.removeprefix(PREFIX)
    path, at, ref = body.partition("@")
    parts = path.split("/")
    if len(parts) != 2:  # noqa: PLR2004 - owner and repository
        msg = f"{target!r}: expected github:OWNER/REPO, github:OWNER/REPO@REF or github:OWNER/*"
        raise ValueError(msg)
    owner, name = parts
    if _OWNER.fullmatch(owner) is None:
        msg = f"{target!r}: {owner!r} is not a GitHub owner name (1-39 letters, digits, hyphens)"
        raise ValueError(msg)
    if name == "*":
        if at:
            msg = f"{target!r}: github:OWNER/* takes no @REF"
            raise ValueError(msg)
        return OwnerTarget(owner)
    # A clone URL's ``.git`` (``github:o/r.git``): GitHub allows no repository name ending in
    # it, and its API answers 404 for one, so the name is the repository's without it.
    if name.endswith(".git") and len(name) > len(".git"):
        name = name.removesuffix(".git")
    if _REPO.fullmatch(name) is None or name in {".", ".."}:
        msg = (
            f"{target!r}: {name!r} is not a GitHub repository name "
            "(1-100 letters, digits, '.', '-', '_')"
        )
        raise ValueError(msg)
    if not at:
        return RepoTarget(owner, name, None)
    problem = _ref_problem(ref)
    if problem is not None:
        msg = f"{target!r}: the ref {problem}"
        raise ValueError(msg)
    return RepoTarget(owner, name, ref.lower() if _SHA_ANY_CASE.fullmatch(ref) else ref)


def _ref_problem(ref: str) -> str | None:
    """Why git would refuse ``ref`` as a branch or tag name (check-ref-format), else ``None``."""
    if not ref:
        return "is empty"
    if has_lone_surrogate(ref):
        return "is not valid text (a lone surrogate)"
    if len(ref.encode()) > MAX_REF_BYTES:
        return f"is longer than {MAX_REF_BYTES} bytes"
    if _REF_FORBIDDEN.search(ref):
        return (
            f"{ref!r} holds a character or sequence git refuses "
            "(space, control character, '..', '~^:?*[\\', '@{', '//')"
        )
    components = ref.split("/")
    if ref == "@" or ref.endswith((".", "/")) or ref.startswith("/"):
        return f"{ref!r} is not a git ref name"
    if any(c.startswith(".") or c.endswith(".lock") for c in components):
        return f"{ref!r} has a component git refuses (leading '.' or '.lock' ending)"
    return None


def api_base(settings: Settings, env: Mapping[str, str] | None = None) -> str:
    """The GitHub REST base: ``--registry github=URL``, else ``GITHUB_API_URL``, else github.com.

    GitHub Enterprise Server's is ``https://HOST/api/v3``. No trailing slash. ``env`` defaults
    to the process environment (the rule of ``credentials.github_api_url``, which scopes the
    token to the same base).
    """
    environ = os.environ if env is None else env
    configured = settings.registries.get(REGISTRY) or environ.get("GITHUB_API_URL", "").strip()
    return (configured or DEFAULT_BASE_URL).rstrip("/")


def web_url(api: str, target: RepoTarget) -> str:
    """The repository's web page: ``https://github.com/o/r``; GHES ``https://HOST/o/r``.

    ``api`` is the REST base (``api_base``): ``api.github.com`` serves ``github.com``, a base
    ending in ``/api/v3`` serves the host above it, any other base (a mirror, a test server)
    its own root.
    """
    base = api.rstrip("/")
    parts = urlsplit(base)
    if (parts.hostname or "").lower() == "api.github.com":
        root = "https://github.com"
    else:
        root = f"{parts.scheme}://{parts.netloc}{parts.path.removesuffix('/api/v3')}"
    return f"{root}/{target.owner}/{target.name}"


def repo_url(api: str, target: RepoTarget) -> str:
    """``{api}/repos/{owner}/{name}`` (names validated by ``parse_target``'s rules).

    Raises:
        RepositoryUnreadable: a name GitHub would refuse (a target built by hand).
    """
    if (
        _OWNER.fullmatch(target.owner) is None
        or _REPO.fullmatch(target.name) is None
        or target.name in {".", ".."}
    ):
        msg = f"refusing to request {target.owner!r}/{target.name!r}: not a GitHub repository name"
        raise RepositoryUnreadable(msg)
    return f"{api.rstrip('/')}/repos/{target.owner}/{target.name}"


# --- failures --------------------------------------------------------------------------------


def _said(content: bytes) -> str:
    """GitHub's ``message`` in an error body, safe for a row (one line, redacted, bounded)."""
    try:
        value = msgspec.json.decode(content[:65536])
    except (msgspec.DecodeError, RecursionError):
        return ""
    message = value.get("message") if isinstance(value, dict) else None
    if not isinstance(message, str):
        return ""
    return redact_text(_CONTROL.sub(" ", message)).strip()[:MESSAGE_LIMIT]


def _token_words(response: FetchResponse) -> str:
    """Which token the request carried (its source only), or that none was sent."""
    if response.credential is not None:
        return f"with the token from {response.credential}"
    return f"without a token (none set: {TOKEN_VARIABLES})"


def _failure(response: FetchResponse, *, ref: str | None = None) -> RepositoryUnreadable:
    """The ``RepositoryUnreadable`` a non-2xx answer about a repository stands for."""
    status = response.status
    said = _said(response.content)
    quoted = f": {said}" if said else ""
    host = urlsplit(response.url).netloc.rpartition("@")[2]
    if status in {404, 410}:
        return RepositoryUnreadable(
            f"repository not found, or not visible {_token_words(response)} "
            f"(HTTP {status} from {host})"
        )
    if status == 409:  # noqa: PLR2004 - GitHub: "Git Repository is empty."
        return RepositoryUnreadable(f"the repository is empty (HTTP 409 from {host})")
    if status == 422 and ref is not None:  # noqa: PLR2004 - "No commit found for SHA: …"
        return RepositoryUnreadable(f"no commit, branch or tag named {ref!r} (HTTP 422{quoted})")
    if status in {401, 403, 429}:
        remaining = response.header("x-ratelimit-remaining")
        if status == 429 or remaining == "0" or "rate limit" in said.lower():  # noqa: PLR2004
            when = _reset_words(response.header("x-ratelimit-reset"))
            return RepositoryUnreadable(
                f"GitHub rate limit exceeded for requests {_token_words(response)} "
                f"(HTTP {status} from {host}{quoted}){when}"
            )
        if status == 401:  # noqa: PLR2004
            return RepositoryUnreadable(
                f"GitHub refused the credentials: HTTP 401 {_token_words(response)}{quoted}"
            )
        return RepositoryUnreadable(
            f"no permission to read the repository {_token_words(response)} (HTTP 403{quoted})"
        )
    if status == 451:  # noqa: PLR2004 - RFC 7725
        return RepositoryUnreadable(
            f"access to the repository is blocked for legal reasons (HTTP 451{quoted})"
        )
    return RepositoryUnreadable(f"GitHub answered HTTP {status} ({redact_url(response.url)})")


def _reset_words(reset: str | None) -> str:
    """``; it resets at <UTC time>`` for an ``x-ratelimit-reset`` epoch, else ``""``."""
    if reset is None or not reset.strip().isdigit():
        return ""
    try:
        moment = datetime.fromtimestamp(int(reset), UTC)
    except (OverflowError, OSError, ValueError):
        return ""
    return f"; it resets at {moment:%Y-%m-%d %H:%M} UTC (x-ratelimit-reset)"


def _unreadable(exc: LookupFailed) -> RepositoryUnreadable:
    """A facade failure (unreachable, rate limited, offline, unusable body) as a row reason."""
    return RepositoryUnreadable(exc.reason)


# --- ref → commit ----------------------------------------------------------------------------


def derive_commit_sha(content: bytes) -> bytes:
    """The 40-hex commit SHA of a ``commits/{ref}`` answer, stored as ``github-commit-sha-v1``.

    The ``sha`` media type's body is the bare SHA (a trailing newline allowed); a server that
    ignores the media type and answers the JSON commit is read for its ``sha``. Raises
    ``RegistryError`` (not stored) for anything else.
    """
    text = content.strip()
    if text.startswith(b"{"):
        try:
            value = msgspec.json.decode(text)
        except (msgspec.DecodeError, RecursionError) as exc:
            msg = f"unusable commit answer from GitHub ({describe_decode_error(exc)})"
            raise RegistryError(msg) from None
        sha = value.get("sha") if isinstance(value, dict) else None
        text = sha.encode() if isinstance(sha, str) else b""
    if _SHA_ANY_CASE.fullmatch(text.decode("ascii", "replace")) is None:
        msg = "unusable commit answer from GitHub (not a 40-hex commit SHA)"
        raise RegistryError(msg)
    return text.lower()


def commit_url(api: str, target: RepoTarget) -> str:
    """``{repo}/commits/{ref}``: ``HEAD`` for the default branch; the ref percent-encoded.

    ``/`` stays as it is (``release/1.x``: GitHub reads the rest of the path as the ref).
    """
    ref = "HEAD" if target.ref is None else quote(target.ref, safe="/")
    return f"{repo_url(api, target)}/commits/{ref}"


async def resolve_commit(fetch: MethodFetch, api: str, target: RepoTarget) -> str:
    """Return the 40-hex commit SHA (lower case) ``target``'s ref names now.

    A ref that is itself a full SHA is returned without a request. Otherwise one request,
    ``GET {api}/repos/{o}/{r}/commits/{ref or HEAD}`` with ``Accept:
    application/vnd.github.sha`` (GitHub's documented way to read only a ref's SHA), sent on
    every run inside ``revalidating()`` (a branch moves: a stored answer is revalidated,
    a 304 is cheap) and answered from the cache offline.

    Raises:
        RepositoryUnreadable: 404 (not found or not visible: says whether a token was sent),
            409 (empty), 422 (no such ref), 401/403 (credentials, permission or rate limit),
            451, another status, an unusable body, or the facade's failure (unreachable,
            rate limited, not cached offline), with the reason.
    """
    if target.ref is not None and _SHA_ANY_CASE.fullmatch(target.ref):
        return target.ref.lower()
    url = commit_url(api, target)
    try:
        with revalidating():
            response = await fetch(
                url,
                headers=SHA_HEADERS,
                representation=COMMIT_REPRESENTATION,
                derive=derive_commit_sha,
            )
    except LookupFailed as exc:
        raise _unreadable(exc) from None
    if not 200 <= response.status < 300:  # noqa: PLR2004 - the 2xx class
        raise _failure(response, ref=target.ref or "HEAD")
    sha = response.content.strip().decode("ascii", "replace")
    if _SHA.fullmatch(sha) is None:
        msg = "unusable commit answer from GitHub (not a 40-hex commit SHA)"
        raise RepositoryUnreadable(msg)
    return sha


# --- trees -----------------------------------------------------------------------------------


class TreeEntry(msgspec.Struct, frozen=True):
    """One file of a commit: a blob or a symlink.

    ``path`` is repository-relative with POSIX separators; ``sha`` the blob's 40-hex SHA;
    ``size`` its bytes as the tree says (``None``: not given); ``mode`` ``100644``,
    ``100755`` or ``120000`` (a symlink, whose blob is the link target).
    """

    path: str
    sha: str
    size: int | None
    mode: str


class Tree(msgspec.Struct, frozen=True):
    """The files of one commit: in the server's order (git's), or sorted by path when walked.

    ``entries`` holds blobs and symlinks only (sub-trees and submodules, ``160000``, are left
    out), minus those under a directory ``skip_dir`` skipped. ``truncated``: the recursive
    listing was truncated and the sub-trees were walked instead; ``requests`` the tree
    requests sent (1 unless truncated); ``dropped`` the entries refused for a hostile path
    (over ``MAX_PATH_BYTES``, NUL or control characters, ``.``/``..``/empty segments, a
    leading ``/``).
    """

    entries: list[TreeEntry]
    truncated: bool
    requests: int
    dropped: int = 0


class _TreeItem(msgspec.Struct, frozen=True):
    path: str
    mode: str
    type: str
    sha: str
    size: Any = None


class _TreeAnswer(msgspec.Struct, frozen=True):
    tree: list[_TreeItem]
    truncated: bool = False
    sha: str | None = None


_TREE = msgspec.json.Decoder(_TreeAnswer)
# The stored ``github-tree-v1`` document: [truncated, dropped, [[path, mode, sha, size], …]].
_Row = tuple[str, str, str, int | None]
_COMPACT_TREE = msgspec.json.Decoder(tuple[bool, int, list[_Row]])


def safe_path(path: str) -> bool:
    """Whether ``path`` may name a file of a tree: relative, normal, printable, bounded.

    Refused: empty, over ``MAX_PATH_BYTES`` UTF-8 bytes, a NUL, control character or lone
    surrogate, a leading ``/``, an empty, ``.`` or ``..`` segment.
    """
    if not path or has_lone_surrogate(path) or len(path.encode()) > MAX_PATH_BYTES:
        return False
    if _CONTROL.search(path) or path.startswith("/"):
        return False
    return all(segment not in {"", ".", ".."} for segment in path.split("/"))


def derive_tree(content: bytes) -> bytes:
    """Reduce a ``git/trees`` answer to the compact ``github-tree-v1`` document.

    Keeps blobs, symlinks and sub-trees (``mode``, ``sha``, ``size``), drops submodules and
    counts (as ``dropped``) entries with a hostile path, an unknown mode or type, a SHA that
    is not 40 hex or a size that is not a non-negative integer. Raises ``RegistryError`` for
    a body that is not a tree answer or holds more than ``MAX_TREE_ENTRIES`` entries.
    """
    try:
        answer = _TREE.decode(content)
    except (msgspec.DecodeError, RecursionError) as exc:
        msg = f"unusable tree answer from GitHub ({describe_decode_error(exc)})"
        raise RegistryError(msg) from None
    if len(answer.tree) > MAX_TREE_ENTRIES:
        msg = f"the tree has {len(answer.tree)} entries, more than {MAX_TREE_ENTRIES}; not read"
        raise RegistryError(msg)
    rows: list[_Row] = []
    dropped = 0
    for item in answer.tree:
        if item.mode == _SUBMODULE or item.type == "commit":
            continue
        size = item.size
        kind_ok = (item.type == "blob" and item.mode in BLOB_MODES) or (
            item.type == "tree" and item.mode in {TREE_MODE, "40000"}
        )
        size_ok = size is None or (type(size) is int and size >= 0)
        if (
            not kind_ok
            or not size_ok
            or _SHA.fullmatch(item.sha) is None
            or not safe_path(item.path)
        ):
            dropped += 1
            continue
        mode = TREE_MODE if item.type == "tree" else item.mode
        rows.append((item.path, mode, item.sha, None if item.type == "tree" else size))
    return msgspec.json.encode((answer.truncated, dropped, rows))


def _read_compact_tree(content: bytes) -> tuple[bool, int, list[_Row]]:
    try:
        return _COMPACT_TREE.decode(content)
    except (msgspec.DecodeError, RecursionError) as exc:
        msg = f"unusable stored tree ({describe_decode_error(exc)})"
        raise RepositoryUnreadable(msg) from None


def _keep_immutable_fresh(fetch: MethodFetch) -> None:
    """Have the facade serve stored trees and blobs without asking again (content-addressed)."""
    keep_fresh = getattr(fetch, "keep_fresh", None)
    if keep_fresh is not None:
        keep_fresh([TREE_REPRESENTATION, BLOB_REPRESENTATION], IMMUTABLE_SECONDS)


async def _tree_rows(fetch: MethodFetch, url: str) -> tuple[bool, int, list[_Row]]:
    try:
        response = await fetch(
            url, headers=HEADERS, representation=TREE_REPRESENTATION, derive=derive_tree
        )
    except LookupFailed as exc:
        raise _unreadable(exc) from None
    if not 200 <= response.status < 300:  # noqa: PLR2004 - the 2xx class
        raise _failure(response)
    return _read_compact_tree(response.content)


class _Skips:
    """``skip_dir`` asked once per directory; a skipped directory skips everything under it."""

    def __init__(self, skip_dir: Callable[[str], bool]) -> None:
        self._skip_dir = skip_dir
        self._known: dict[str, bool] = {"": False}

    def skipped(self, directory: str) -> bool:
        known = self._known.get(directory)
        if known is None:
            parent = directory.rpartition("/")[0]
            known = self.skipped(parent) or bool(self._skip_dir(directory))
            self._known[directory] = known
        return known

    def file_skipped(self, path: str) -> bool:
        return self.skipped(path.rpartition("/")[0])


async def read_tree(
    fetch: MethodFetch,
    api: str,
    target: RepoTarget,
    commit: str,
    *,
    skip_dir: Callable[[str], bool],
    prune_listing: bool = True,
) -> Tree:
    """Return the files of ``commit`` of ``target``: one recursive tree request, or a walk.

    ``GET {repo}/git/trees/{commit}?recursive=1``; when GitHub says ``truncated`` (over
    100,000 entries or 7 MB) the tree is walked instead: ``git/trees/{sha}`` without
    ``recursive`` from the root, into each sub-tree ``skip_dir(path)`` does not skip
    (``path`` repository-relative, POSIX), each level's requests concurrent, at most
    ``SUBTREE_CONCURRENCY`` at once. Entries under a skipped directory are left out either
    way, unless ``prune_listing`` is false: then a recursive listing keeps them (they cost no
    request; a caller that applies the skip rules itself can still resolve a symlink into a
    skipped directory, as a checkout's reader does). Tree answers are stored compact
    (``github-tree-v1``) and kept fresh: a tree never changes under its SHA.

    Raises:
        RepositoryUnreadable: an unusable or non-2xx answer, a facade failure, more than
            ``MAX_TREE_ENTRIES`` entries or ``MAX_SUBTREE_REQUESTS`` sub-tree requests.
    """
    if _SHA.fullmatch(commit) is None:
        msg = f"refusing to read the tree of {commit!r}: not a 40-hex commit SHA"
        raise RepositoryUnreadable(msg)
    _keep_immutable_fresh(fetch)
    skips = _Skips(skip_dir)
    base = repo_url(api, target)
    truncated, dropped, rows = await _tree_rows(fetch, f"{base}/git/trees/{commit}?recursive=1")
    if not truncated:
        entries = [
            TreeEntry(path, sha, size, mode)
            for path, mode, sha, size in rows
            if mode != TREE_MODE and not (prune_listing and skips.file_skipped(path))
        ]
        return Tree(entries, truncated=False, requests=1, dropped=dropped)
    return await _walk(fetch, base, commit, skips)


async def _read_level(
    fetch: MethodFetch, base: str, level: list[tuple[str, str]]
) -> list[tuple[bool, int, list[_Row]]]:
    """The one-level listings of ``level``'s sub-trees, at most ``SUBTREE_CONCURRENCY`` at once.

    Raises ``RepositoryUnreadable`` naming the first sub-tree that could not be read (the
    others still in the queue are not sent then).
    """
    import anyio  # noqa: PLC0415 - lazy: start-up

    limiter = anyio.CapacityLimiter(SUBTREE_CONCURRENCY)
    answers: dict[int, tuple[bool, int, list[_Row]]] = {}
    failures: dict[int, RepositoryUnreadable] = {}

    async def read(index: int, sha: str) -> None:
        async with limiter:
            if failures:
                return  # the tree is unreadable already: send no more
            try:
                answers[index] = await _tree_rows(fetch, f"{base}/git/trees/{sha}")
            except RepositoryUnreadable as exc:
                # Kept, not raised: the task group would wrap it in an ExceptionGroup.
                failures[index] = exc

    async with anyio.create_task_group() as group:
        for index, (_, sha) in enumerate(level):
            group.start_soon(read, index, sha)
    if failures:
        index = min(failures)
        directory = level[index][0]
        where = f"'{directory}'" if directory else "the root"
        msg = f"the sub-tree {where} cannot be read: {failures[index].reason}"
        raise RepositoryUnreadable(msg)
    return [answers[index] for index in range(len(level))]


async def _walk(fetch: MethodFetch, base: str, commit: str, skips: _Skips) -> Tree:
    """Walk the tree of ``commit`` level by level (the recursive listing was truncated)."""
    entries: list[TreeEntry] = []
    dropped = 0
    requests = 1
    level: list[tuple[str, str]] = [("", commit)]  # (directory path, tree-ish SHA)
    while level:
        if requests - 1 + len(level) > MAX_SUBTREE_REQUESTS:
            msg = (
                f"the tree is too large to walk (more than {MAX_SUBTREE_REQUESTS} "
                "sub-tree requests); not read"
            )
            raise RepositoryUnreadable(msg)
        answers = await _read_level(fetch, base, level)
        requests += len(level)
        following: list[tuple[str, str]] = []
        for (directory, _), (truncated, lost, rows) in zip(level, answers, strict=True):
            if truncated:
                where = f"'{directory}'" if directory else "the root"
                msg = f"GitHub truncated the listing of {where} itself; the tree is not read"
                raise RepositoryUnreadable(msg)
            dropped += lost
            for name, mode, sha, size in rows:
                path = f"{directory}/{name}" if directory else name
                if "/" in name or not safe_path(path):
                    dropped += 1
                elif mode == TREE_MODE:
                    if not skips.skipped(path):
                        following.append((path, sha))
                elif not skips.file_skipped(path):
                    entries.append(TreeEntry(path, sha, size, mode))
            if len(entries) > MAX_TREE_ENTRIES:
                msg = f"the tree has more than {MAX_TREE_ENTRIES} entries; not read"
                raise RepositoryUnreadable(msg)
        level = following
    entries.sort(key=lambda entry: entry.path)
    return Tree(entries, truncated=True, requests=requests, dropped=dropped)


# --- blobs -----------------------------------------------------------------------------------


class _BlobAnswer(msgspec.Struct, frozen=True):
    content: str
    encoding: str
    size: Any = None
    sha: str | None = None


_BLOB = msgspec.json.Decoder(_BlobAnswer)


def git_blob_sha(data: bytes) -> str:
    """The git object SHA-1 of a blob holding ``data`` (``git hash-object``)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


class BlobTooLargeError(RegistryError):
    """A blob answer decodes to more than the caller's limit (``size`` bytes); not stored."""

    def __init__(self, reason: str, size: int) -> None:
        super().__init__(reason)
        self.size = size


def derive_blob(content: bytes, *, max_bytes: int | None = None, sha: str | None = None) -> bytes:
    """Decode a ``git/blobs`` answer to the blob's bytes (the ``github-blob-v1`` document).

    ``encoding`` must be ``base64``; the content is decoded strictly, the line breaks GitHub
    wraps it with allowed; a ``size`` given must match, and with ``sha`` the bytes must hash
    to it (git's blob SHA-1). Raises ``BlobTooLargeError`` when the blob is over ``max_bytes``
    (told from ``size`` or the base64 length before decoding), ``RegistryError`` otherwise;
    neither is stored.
    """
    try:
        answer = _BLOB.decode(content)
    except (msgspec.DecodeError, RecursionError) as exc:
        msg = f"unusable blob answer from GitHub ({describe_decode_error(exc)})"
        raise RegistryError(msg) from None
    if answer.encoding != "base64":
        msg = f"unusable blob answer from GitHub (encoding {answer.encoding[:40]!r}, not base64)"
        raise RegistryError(msg)
    encoded = answer.content.replace("\n", "")
    size = answer.size
    if size is not None and (type(size) is not int or size < 0):
        msg = f"unusable blob answer from GitHub (size {str(size)[:40]!r})"
        raise RegistryError(msg)
    # Told before decoding: base64 is 4 characters per 3 bytes (less up to 2 of padding).
    estimate = size if size is not None else len(encoded) // 4 * 3
    if max_bytes is not None and estimate > max_bytes:
        raise BlobTooLargeError("the blob is over the size limit", estimate)
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        msg = "unusable blob answer from GitHub (content is not valid base64)"
        raise RegistryError(msg) from None
    if size is not None and size != len(data):
        msg = f"unusable blob answer from GitHub (size {size}, content {len(data)} bytes)"
        raise RegistryError(msg)
    if max_bytes is not None and len(data) > max_bytes:
        raise BlobTooLargeError("the blob is over the size limit", len(data))
    if sha is not None and git_blob_sha(data) != sha:
        msg = "GitHub answered another content than the blob SHA names"
        raise RegistryError(msg)
    return data


def blob_address(sha: str) -> str:
    """The repository-independent cache address of the blob ``sha``: ``git-blob:<sha>``."""
    return f"git-blob:{sha}"


async def read_blob(
    fetch: MethodFetch, api: str, target: RepoTarget, entry: TreeEntry, *, max_bytes: int
) -> bytes:
    """Return the bytes of ``entry``'s blob: ``GET {repo}/git/blobs/{sha}``, base64 decoded.

    Refused before any request when the tree says ``entry.size`` is over ``max_bytes``, and
    after (before decoding, and not stored) when the answer is. The answer must hash to
    ``entry.sha`` (git's blob SHA-1), and only then are the decoded bytes stored
    (``github-blob-v1``) and kept fresh, under the blob's address (``blob_address``, through
    the facade's ``addressed`` when it has one) rather than the URL: one content is one blob
    whatever the repository or commit, so a file stored once answers every repository whose
    tree names its SHA (and only such: ``entry`` comes from the asking repository's tree).
    The key still names the credential sent. The body itself is bounded by the facade
    (``max_body_bytes``).

    Raises:
        ManifestError: for ``entry.path`` (``line`` ``None``): too large (the wording of a
            local file too large, ``discovery.too_large``), or the blob cannot be read
            (non-2xx, an unusable answer, another content than its SHA names, the facade's
            failure), with the reason.
    """
    from patchula.discovery import too_large  # noqa: PLC0415 - lazy: start-up

    if entry.size is not None and entry.size > max_bytes:
        raise ManifestError(too_large(entry.size, max_bytes), file=entry.path)
    if _SHA.fullmatch(entry.sha) is None:
        msg = f"refusing to read blob {entry.sha[:80]!r}: not a 40-hex SHA"
        raise ManifestError(msg, file=entry.path)
    _keep_immutable_fresh(fetch)
    url = f"{repo_url(api, target)}/git/blobs/{entry.sha}"
    derive = functools.partial(derive_blob, max_bytes=max_bytes, sha=entry.sha)
    addressed = getattr(fetch, "addressed", None)
    try:
        for shared in (True, False):
            try:
                if addressed is None:
                    response = await fetch(
                        url, headers=HEADERS, representation=BLOB_REPRESENTATION, derive=derive
                    )
                else:
                    response = await addressed(
                        blob_address(entry.sha),
                        url,
                        headers=HEADERS,
                        representation=BLOB_REPRESENTATION,
                        derive=derive,
                    )
                break
            except BlobTooLargeError as exc:
                # Refused under a smaller limit by a request this one shared (a ``.npmrc`` and
                # a manifest of the same content): asked again, once, under this one's limit.
                if not shared or exc.size > max_bytes:
                    raise
    except BlobTooLargeError as exc:
        raise ManifestError(too_large(exc.size, max_bytes), file=entry.path) from None
    except LookupFailed as exc:
        raise ManifestError(
            f"cannot read the file from GitHub: {exc.reason}", file=entry.path
        ) from None
    if not 200 <= response.status < 300:  # noqa: PLR2004 - the 2xx class
        reason = _failure(response).reason
        raise ManifestError(f"cannot read the file from GitHub: {reason}", file=entry.path)
    data = response.content
    # A stored blob was checked when it was fetched, perhaps under a larger limit.
    if len(data) > max_bytes:
        raise ManifestError(too_large(len(data), max_bytes), file=entry.path)
    return data


# The in-run memo's bound (bytes of blob content held): the manifests a fleet shares, well
# under the run's memory budget (issue 19: 1,000 repositories within 500 MB).
BLOB_MEMO_BYTES = 64 * 1024 * 1024


class BlobMemo:
    """The blobs one run has read, by SHA, shared by all its repositories; one request each.

    Holds verified content only (``read_blob`` checks the SHA), at most ``max_bytes`` of it,
    the least recently used evicted first (a blob over the bound is not kept). Asked for a
    blob being read for another repository, it waits for that read (single-flight); when that
    read fails, the asker reads for itself (the failure may be the other repository's: its
    permission, its rate limit). Content is looked up by the SHA of the asker's own tree
    entry, so a repository is served only blobs its tree names.
    """

    def __init__(self, max_bytes: int = BLOB_MEMO_BYTES) -> None:
        self._max = max_bytes
        self._held: OrderedDict[str, bytes] = OrderedDict()
        self._size = 0
        self._flights: dict[tuple[str, int], Flight[bytes]] = {}
        # Reads sent to the fetch facade (a memo hit or a shared read is not one).
        self.reads = 0

    @property
    def size(self) -> int:
        """The bytes of content held."""
        return self._size

    async def read(
        self,
        fetch: MethodFetch,
        api: str,
        target: RepoTarget,
        entry: TreeEntry,
        *,
        max_bytes: int,
    ) -> bytes:
        """``read_blob(fetch, api, target, entry, max_bytes=max_bytes)``, each SHA read once.

        Raises ``ManifestError`` for ``entry.path`` as ``read_blob`` does (a held blob over
        ``max_bytes`` with the wording of a file too large).
        """
        from patchula.discovery import too_large  # noqa: PLC0415 - lazy: start-up

        sha = entry.sha
        held = self._held.get(sha)
        if held is None:
            flight = self._flights.get((sha, max_bytes))
            if flight is not None:
                with contextlib.suppress(Exception):  # the other's failure: read for this one
                    held = await flight.wait()
        if held is not None:
            if sha in self._held:
                self._held.move_to_end(sha)
            if len(held) > max_bytes:
                raise ManifestError(too_large(len(held), max_bytes), file=entry.path)
            return held
        return await self._lead(fetch, api, target, entry, max_bytes)

    async def _lead(
        self, fetch: MethodFetch, api: str, target: RepoTarget, entry: TreeEntry, max_bytes: int
    ) -> bytes:
        """Read ``entry``'s blob for this run, those asking meanwhile waiting for it."""
        key = (entry.sha, max_bytes)
        flight: Flight[bytes] = Flight()
        mine = key not in self._flights
        if mine:
            self._flights[key] = flight
        try:
            self.reads += 1
            data = await read_blob(fetch, api, target, entry, max_bytes=max_bytes)
        except BaseException as exc:
            flight.fail(exc)
            raise
        else:
            flight.succeed(data)
            self._keep(entry.sha, data)
            return data
        finally:
            if mine:
                del self._flights[key]

    def _keep(self, sha: str, data: bytes) -> None:
        if sha in self._held or len(data) > self._max:
            return
        self._held[sha] = data
        self._size += len(data)
        while self._size > self._max:
            _, dropped = self._held.popitem(last=False)
            self._size -= len(dropped)


# --- owners' repositories --------------------------------------------------------------------


class _Owner(msgspec.Struct, frozen=True):
    login: str = ""


class _Listed(msgspec.Struct, frozen=True):
    name: str
    owner: _Owner | None = None
    fork: bool = False
    archived: bool = False


_LISTING = msgspec.json.Decoder(list[_Listed])
_COMPACT_LISTING = msgspec.json.Decoder(list[tuple[str, str, bool, bool]])


def derive_listing(content: bytes) -> bytes:
    """Reduce one repository-list page to ``github-repo-list-v1``: ``[[owner, name, fork,
    archived], …]``, names GitHub would refuse left out.

    Raises ``RegistryError`` for a page that is not a list of repositories or holds more
    than ``LISTING_PAGE_SIZE`` of them.
    """  # noqa: D205 - the shape is the summary
    try:
        page = _LISTING.decode(content)
    except (msgspec.DecodeError, RecursionError) as exc:
        msg = f"unusable repository list from GitHub ({describe_decode_error(exc)})"
        raise RegistryError(msg) from None
    check_page(len(page), "GitHub repository list")
    rows = [
        (item.owner.login if item.owner is not None else "", item.name, item.fork, item.archived)
        for item in page
        if _REPO.fullmatch(item.name) is not None and item.name not in {".", ".."}
    ]
    return msgspec.json.encode(rows)


async def list_repositories(
    fetch: MethodFetch,
    api: str,
    owner: str,
    *,
    include_forks: bool,
    include_archived: bool,
) -> list[RepoTarget]:
    """Return the repositories of organisation or user ``owner``, sorted by name (any case).

    ``GET {api}/orgs/{owner}/repos?per_page=100&type=all``; when that is a 404 (no such
    organisation), the user's ``GET {api}/users/{owner}/repos?per_page=100&type=owner``
    (public repositories only, as GitHub documents it). Pages follow ``Link: rel="next"`` as
    given, on the same origin only, at most ``MAX_LISTING_PAGES``; a listing is stored whole
    or not at all and kept as long as GitHub's freshness says. Forks and archived
    repositories are left out unless asked for. Each target has ``ref`` ``None``.

    Raises:
        RepositoryUnreadable: no such organisation or user (404 on both), another non-2xx
            answer, an unusable page, a link off the host or looping, too many pages, a
            facade failure; with the reason.
    """
    if _OWNER.fullmatch(owner) is None:
        msg = f"refusing to list {owner!r}: not a GitHub owner name"
        raise RepositoryUnreadable(msg)
    base = api.rstrip("/")
    query = f"per_page={LISTING_PAGE_SIZE}"
    try:
        rows = await _listing(fetch, f"{base}/orgs/{owner}/repos?{query}&type=all", owner)
    except PackageNotFound:
        try:
            rows = await _listing(fetch, f"{base}/users/{owner}/repos?{query}&type=owner", owner)
        except PackageNotFound:
            msg = f"no GitHub organisation or user named {owner!r} (or not visible)"
            raise RepositoryUnreadable(msg) from None
    found: dict[str, RepoTarget] = {}
    for login, name, fork, archived in rows:
        if (fork and not include_forks) or (archived and not include_archived):
            continue
        who = login if login.lower() == owner.lower() else owner
        found.setdefault(name.lower(), RepoTarget(who, name, None))
    return sorted(found.values(), key=lambda target: (target.name.lower(), target.name))


async def _listing(fetch: MethodFetch, first: str, owner: str) -> list[tuple[str, str, bool, bool]]:
    """Every row of the listing from ``first``; ``PackageNotFound`` when its first page is a 404."""
    rows: list[tuple[str, str, bool, bool]] = []
    what = f"GitHub repositories of {owner!r}"
    pages = 0
    try:
        async with fetch.all_or_nothing():
            async for response in linked_pages(
                fetch,
                first,
                what=what,
                listing="repository list",
                max_pages=MAX_LISTING_PAGES,
                representation=LISTING_REPRESENTATION,
                derive=derive_listing,
                credential_hint=TOKEN_VARIABLES,
                headers=HEADERS,
            ):
                pages += 1
                try:
                    rows += _COMPACT_LISTING.decode(response.content)
                except (msgspec.DecodeError, RecursionError) as exc:
                    msg = f"{what}: unusable stored listing ({describe_decode_error(exc)})"
                    raise RepositoryUnreadable(msg) from None
    except PackageNotFound as exc:
        if pages == 0:
            raise
        raise _unreadable(exc) from None  # a later page vanished: not "no such owner"
    except LookupFailed as exc:
        raise _unreadable(exc) from None
    return rows
