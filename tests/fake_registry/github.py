"""GitHub: REST releases/tags with Link pagination and ``x-ratelimit-*``; a minimal GraphQL (§6).

REST also serves ``git/matching-refs/tags/<prefix>``, annotated ``git/tags/{sha}``,
``git/ref/heads/<branch>`` and ``commits/{sha}``, at the root and under GitHub Enterprise
Server's ``/api/v3`` (GraphQL at ``/graphql`` and ``/api/graphql``).

Repositories with files (``add_tree_repo``, ``commit_files``) serve what a scan without a
checkout reads: ``commits/{ref}`` (JSON or the ``vnd.github.sha`` text), ``git/trees/{sha}``
(``recursive`` or one level; ``truncate_trees``), ``git/blobs/{sha}`` (base64 wrapped at 60
columns) and ``/repos/{o}/{r}``; objects have git's SHAs, so the same content has the same SHA
in every repository and commit. ``add_owner`` serves ``/orgs/{o}/repos`` or
``/users/{o}/repos``, paginated; ``fail_repo`` makes one repository answer 404, 409 or a 403
rate limit.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import unquote

from .base import EPOCH, Reply, Request, digest, iso, json_reply

_DOCS = "https://docs.github.com/rest"
_NOT_FOUND = {"message": "Not Found", "documentation_url": _DOCS, "status": "404"}
_REST = re.compile(
    r"/repos/([^/]+)/([^/]+)/"
    r"(releases/latest|releases|tags|git/matching-refs/tags|git/tags|git/ref/heads|commits)"
    r"(?:/(.*))?"
)


@dataclass(frozen=True)
class _Repo:
    owner: str
    name: str
    releases: list[dict[str, Any]]
    tags: list[tuple[str, str, datetime]]  # name, commit sha, commit date
    latest: str | None
    annotated: frozenset[str] = frozenset()  # tags whose ref names a tag object
    branches: Mapping[str, str] | None = None  # branch → commit sha


# A git tree: name → (mode, sha) of each entry, as stored in the fake's object database.
_TreeObject = dict[str, tuple[str, str]]
_TREE_REST = re.compile(r"/repos/([^/]+)/([^/]+)(?:/(commits|git/trees|git/blobs)/(.+))?")
_OWNER_REST = re.compile(r"/(orgs|users)/([^/]+)/repos")
_BLOB_WRAP = 60  # GitHub's blob API wraps base64 content at 60 columns


@dataclass
class _TreeRepo:
    """A repository with files: branches and tags name commits of the object database."""

    owner: str
    name: str
    default_branch: str
    branches: dict[str, str]  # branch → commit sha
    tags: dict[str, str]  # tag → commit sha
    fork: bool = False
    archived: bool = False
    failure: str | None = None  # "missing", "empty" or "rate_limited"


def _int(text: str | None, default: int, high: int) -> int:
    return max(1, min(int(text), high)) if text and text.isdigit() else default


class GitHub:
    """Repositories on REST ``/repos/{o}/{r}/…`` and GraphQL ``POST /graphql`` (token required).

    ``rate_limit`` is the ``x-ratelimit-limit`` for authorised requests (``anonymous_limit``,
    60, without a token); ``x-ratelimit-remaining`` counts down per resource (``core``,
    ``graphql``) and stops at 0. ``reset`` is the ``x-ratelimit-reset`` epoch (an hour after
    start). With ``enforce_limit`` a request past the limit is refused as GitHub refuses it:
    REST 403 "API rate limit exceeded", GraphQL 200 with a ``RATE_LIMITED`` error.

    Repositories with files (``add_tree_repo``, ``commit_files``, ``fail_repo``) and owner
    listings (``add_owner``) are served beside those of ``add_repo``; ``truncate_trees`` makes
    every recursive tree answer truncated.
    """

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.rate_limit = 5000
        self.anonymous_limit = 60
        self.enforce_limit = False
        self._repos: dict[str, _Repo] = {}
        self._used: Counter[str] = Counter()
        self._lock = threading.Lock()
        self.reset = int(time.time()) + 3600
        # Canned GraphQL answers (a JSON object each) sent, in order, instead of the next ones.
        self.graphql_replies: list[dict[str, Any]] = []
        # Refs (``refs/tags/v1``) GraphQL answers ``null`` for while REST still serves them.
        self.graphql_hidden: set[str] = set()
        # The GraphQL queries received (the query text), in order.
        self.graphql_queries: list[str] = []
        # Repositories with files (``add_tree_repo``), their git objects and the owners.
        self._tree_repos: dict[str, _TreeRepo] = {}
        self._blobs: dict[str, bytes] = {}
        self._trees: dict[str, _TreeObject] = {}
        self._commits: dict[str, str] = {}  # commit sha → root tree sha
        self._owners: dict[str, tuple[str, list[dict[str, Any]]]] = {}  # owner → (kind, repos)
        # Recursive tree answers say ``truncated: true`` and hold only the first entries.
        self.truncate_trees = False
        # The largest ``per_page`` a listing honours (GitHub's is 100): lower, a short listing
        # spans pages too.
        self.max_per_page = 100

    def add_repo(
        self,
        owner: str,
        repo: str,
        releases: Mapping[str, datetime] | None = None,
        *,
        tags: Mapping[str, datetime | None] | Sequence[str] = (),
        prerelease: Collection[str] = (),
        draft: Collection[str] = (),
        latest: str | None = None,
        annotated: Collection[str] = (),
        branches: Mapping[str, str] | None = None,
    ) -> None:
        """Register a repository; ``releases`` maps tag → ``published_at`` in the order served.

        ``annotated`` tags are served as annotated tag objects (``git/matching-refs`` names the
        tag object, ``git/tags/{sha}`` its commit); ``branches`` maps a branch to its commit
        (``git/ref/heads/<name>``). A tag's commit is ``commit_of(owner, repo, tag)``; its
        commit date (``commits/{sha}``) is the tag's date (releases: their ``published_at``).

        ``created_at`` is five minutes before ``published_at``; drafts have no ``published_at``.
        Non-draft release tags are tags too, after the extra ``tags`` (tag → commit date).
        ``latest`` overrides the "Latest" release (``make_latest``); by default it is the newest
        non-draft, non-prerelease release by ``created_at``.
        """
        releases = releases or {}
        dated = dict(tags) if isinstance(tags, Mapping) else dict.fromkeys(tags)
        for tag, moment in releases.items():
            if tag not in draft:
                dated.setdefault(tag, moment)
        base = f"{self.base_url}/repos/{owner}/{repo}"
        items: list[dict[str, Any]] = []
        for tag, moment in releases.items():
            number = int(digest(f"{owner}/{repo}/{tag}")[:7], 16)
            items.append(
                {
                    "url": f"{base}/releases/{number}",
                    "html_url": f"https://github.com/{owner}/{repo}/releases/tag/{tag}",
                    "id": number,
                    "tag_name": tag,
                    "name": tag,
                    "draft": tag in draft,
                    "prerelease": tag in prerelease,
                    "created_at": iso(moment - timedelta(minutes=5)),
                    "published_at": None if tag in draft else iso(moment),
                    "tarball_url": f"{base}/tarball/{tag}",
                    "zipball_url": f"{base}/zipball/{tag}",
                }
            )
        if latest is None:
            stable = [r for r in items if not r["draft"] and not r["prerelease"]]
            latest = max(stable, key=lambda r: r["created_at"])["tag_name"] if stable else None
        commits = [(t, digest(f"{owner}/{repo}@{t}", "sha1"), d or EPOCH) for t, d in dated.items()]
        self._repos[f"{owner}/{repo}".lower()] = _Repo(
            owner, repo, items, commits, latest, frozenset(annotated), dict(branches or {})
        )

    def move_tag(self, owner: str, repo: str, tag: str, sha: str) -> None:
        """Point ``tag`` of ``owner/repo`` at commit ``sha`` (a force-pushed, mutable tag)."""
        tags = self._repos[f"{owner}/{repo}".lower()].tags
        index = [name for name, _, _ in tags].index(tag)
        tags[index] = (tag, sha, tags[index][2])

    @staticmethod
    def commit_of(owner: str, repo: str, tag: str) -> str:
        """The commit SHA the fake serves for ``tag`` of ``owner/repo``."""
        return digest(f"{owner}/{repo}@{tag}", "sha1")

    @staticmethod
    def tag_object_of(owner: str, repo: str, tag: str) -> str:
        """The annotated tag object SHA of ``tag`` (when it is annotated)."""
        return digest(f"{owner}/{repo}#tag:{tag}", "sha1")

    def point_tag(self, owner: str, repo: str, tag: str, sha: str) -> None:
        """Point the existing ``tag`` of ``owner/repo`` at commit ``sha``.

        A moved tag, or one of several tags of one commit (``v4``, ``v4.2`` and ``v4.2.2``
        usually are).
        """
        found = self._repos[f"{owner}/{repo}".lower()]
        with self._lock:
            for index, (name, _, moment) in enumerate(found.tags):
                if name == tag:
                    found.tags[index] = (name, sha, moment)

    def handle(self, request: Request) -> Reply:
        """Route, then add the ``x-ratelimit-*`` headers of the request's resource."""
        resource = "graphql" if request.path in {"/graphql", "/api/graphql"} else "core"
        limit = self.rate_limit if "authorization" in request.headers else self.anonymous_limit
        with self._lock:
            self._used[resource] += 1
            used = self._used[resource]
        if self.enforce_limit and used > limit:
            reply = _refusal(resource)
        else:
            reply = self._graphql(request) if resource == "graphql" else self._rest(request)
        # A handler's own rate-limit headers (``fail_repo(..., "rate_limited")``) win.
        reply.headers = {
            "x-ratelimit-limit": str(limit),
            "x-ratelimit-remaining": str(max(limit - used, 0)),
            "x-ratelimit-used": str(used),
            "x-ratelimit-reset": str(self.reset),
            "x-ratelimit-resource": resource,
        } | reply.headers
        return reply

    def _rest(self, request: Request) -> Reply:
        # GitHub Enterprise Server serves the same API under ``/api/v3`` (GraphQL ``/api/graphql``).
        prefix = "/api/v3" if request.path.startswith("/api/v3/") else ""
        tree_reply = self._tree_rest(request, request.path.removeprefix(prefix), prefix)
        if tree_reply is not None:
            return tree_reply
        match = _REST.fullmatch(request.path.removeprefix(prefix))
        repo = self._repos.get(f"{match[1]}/{match[2]}".lower()) if match else None
        if match is None or repo is None:
            return json_reply(_NOT_FOUND, 404)
        kind, rest = match[3], match[4] or ""
        base = f"{self.base_url}{prefix}/repos/{repo.owner}/{repo.name}"
        if kind == "releases/latest":
            found = [r for r in repo.releases if r["tag_name"] == repo.latest]
            if not found:
                return json_reply(_NOT_FOUND, 404)
            return json_reply(found[0])
        if kind == "releases":
            return self._page(request, request.path, repo.releases)
        if kind == "tags":
            tags = [
                {
                    "name": tag,
                    "zipball_url": f"{base}/zipball/refs/tags/{tag}",
                    "tarball_url": f"{base}/tarball/refs/tags/{tag}",
                    "commit": {"sha": sha, "url": f"{base}/commits/{sha}"},
                }
                for tag, sha, _ in repo.tags
            ]
            return self._page(request, request.path, tags)
        if kind == "git/tags":
            return self._tag_object(repo, rest)
        if kind in {"git/ref/heads", "commits"}:
            return self._branch(repo, rest) if kind == "git/ref/heads" else self._commit(repo, rest)
        refs = [
            self._ref(repo, base, tag, sha) for tag, sha, _ in repo.tags if tag.startswith(rest)
        ]
        return json_reply(refs)

    @staticmethod
    def _branch(repo: _Repo, name: str) -> Reply:
        sha = (repo.branches or {}).get(name)
        if sha is None:
            return json_reply(_NOT_FOUND, 404)
        return json_reply({"ref": f"refs/heads/{name}", "object": {"sha": sha, "type": "commit"}})

    @staticmethod
    def _commit(repo: _Repo, sha: str) -> Reply:
        dates = {commit: moment for _, commit, moment in repo.tags}
        if sha not in dates:
            return json_reply({"message": f"No commit found for SHA: {sha}"}, 422)
        when = {"name": "A", "email": "a@example.invalid", "date": iso(dates[sha])}
        return json_reply({"sha": sha, "commit": {"author": when, "committer": when}})

    def _ref(self, repo: _Repo, base: str, tag: str, sha: str) -> dict[str, Any]:
        if tag in repo.annotated:
            sha = self.tag_object_of(repo.owner, repo.name, tag)
            obj = {"sha": sha, "type": "tag", "url": f"{base}/git/tags/{sha}"}
        else:
            obj = {"sha": sha, "type": "commit", "url": f"{base}/git/commits/{sha}"}
        return {"ref": f"refs/tags/{tag}", "url": f"{base}/git/refs/tags/{tag}", "object": obj}

    def _tag_object(self, repo: _Repo, sha: str) -> Reply:
        for tag, commit, moment in repo.tags:
            if tag in repo.annotated and self.tag_object_of(repo.owner, repo.name, tag) == sha:
                return json_reply(
                    {
                        "sha": sha,
                        "tag": tag,
                        "message": f"release {tag}",
                        "tagger": {"name": "A", "email": "a@example.invalid", "date": iso(moment)},
                        "object": {"sha": commit, "type": "commit"},
                    }
                )
        return json_reply(_NOT_FOUND, 404)

    def _page(self, request: Request, path: str, items: list[dict[str, Any]]) -> Reply:
        """``per_page`` (default 30, max 100) and ``page``, with a ``Link`` header when paged."""
        per_page = _int(request.arg("per_page"), min(30, self.max_per_page), self.max_per_page)
        page = _int(request.arg("page"), 1, 1 << 30)
        last = max(1, -(-len(items) // per_page))
        reply = json_reply(items[(page - 1) * per_page : page * per_page])
        links: dict[str, int] = {}
        if page > 1:
            links |= {"prev": page - 1, "first": 1}
        if page < last:
            links |= {"next": page + 1, "last": last}
        if links:
            reply.headers["Link"] = ", ".join(
                f'<{self.base_url}{path}?per_page={per_page}&page={p}>; rel="{rel}"'
                for rel, p in links.items()
            )
        return reply

    def _graphql(self, request: Request) -> Reply:
        """Answer ``repository(owner, name){ releases(first, after) refs(first, after) }``.

        Arguments are found by regex in the query (literals or ``$variables``); the nodes carry
        every field patchula may select, whatever the selection set says.
        """
        if request.method != "POST":
            return json_reply(_NOT_FOUND, 404)
        if "authorization" not in request.headers:
            message = "This endpoint requires you to be authenticated."
            return json_reply({"message": message, "documentation_url": _DOCS}, 401)
        try:
            payload = json.loads(request.body)
            query, variables = str(payload["query"]), dict(payload.get("variables") or {})
        except (ValueError, KeyError, TypeError):
            return json_reply({"message": "Problems parsing JSON", "documentation_url": _DOCS}, 400)

        def arg(args: str, key: str) -> Any:
            found = re.search(rf"\b{key}\s*:\s*(\$\w+|\"[^\"]*\"|\d+|null)", args)
            literal = found[1] if found else "null"
            if literal.startswith("$"):
                return variables.get(literal[1:])
            return json.loads(literal)

        with self._lock:
            self.graphql_queries.append(query)
            canned = self.graphql_replies.pop(0) if self.graphql_replies else None
        if canned is not None:
            return json_reply(canned)
        data: dict[str, Any] = {}
        if "rateLimit" in query:
            with self._lock:
                remaining = max(self.rate_limit - self._used["graphql"], 0)
            reset = iso(datetime.fromtimestamp(self.reset, UTC))
            data["rateLimit"] = {"cost": 1, "remaining": remaining, "resetAt": reset}
        where = re.search(r"repository\s*\(([^)]*)\)", query)
        owner, name = (arg(where[1], "owner"), arg(where[1], "name")) if where else (None, None)
        repo = self._repos.get(f"{owner}/{name}".lower())
        if repo is None:
            message = f"Could not resolve to a Repository with the name '{owner}/{name}'."
            error = {"type": "NOT_FOUND", "path": ["repository"], "message": message}
            return json_reply({"data": data | {"repository": None}, "errors": [error]})
        releases = [
            {
                "tagName": r["tag_name"],
                "name": r["name"],
                "url": r["html_url"],
                "createdAt": r["created_at"],
                "publishedAt": r["published_at"],
                "isPrerelease": r["prerelease"],
                "isDraft": r["draft"],
                "isLatest": r["tag_name"] == repo.latest,
            }
            for r in repo.releases
        ]
        tags = list(repo.tags)
        if re.search(r"field\s*:\s*TAG_COMMIT_DATE\s*,\s*direction\s*:\s*DESC", query):
            tags.sort(key=lambda tag: tag[2], reverse=True)  # stable: ties keep their order
        refs = [self._graphql_ref(repo, f"refs/tags/{t}") for t, _, _ in tags]
        node: dict[str, Any] = {}
        for alias, name_arg in re.findall(
            r"(\w+)\s*:\s*ref\s*\(\s*qualifiedName\s*:\s*([^)]*)\)", query
        ):
            node[alias] = self._graphql_ref(
                repo, arg(f"qualifiedName: {name_arg}", "qualifiedName")
            )
        for field, nodes in (("releases", releases), ("refs", refs)):
            if found := re.search(rf"\b{field}\s*\(([^)]*)\)", query):
                first, after = arg(found[1], "first"), arg(found[1], "after")
                if not isinstance(first, int) or not 1 <= first <= 100:
                    message = f"You must provide a `first` value between 1 and 100 for `{field}`."
                    return json_reply({"data": None, "errors": [{"message": message}]})
                node[field] = _connection(nodes, first, after)
        return json_reply({"data": data | {"repository": node}})

    def _graphql_ref(self, repo: _Repo, qualified: object) -> dict[str, Any] | None:
        """``ref(qualifiedName:)``: a tag (annotated: a ``Tag`` whose target is the commit)."""
        if not isinstance(qualified, str) or qualified in self.graphql_hidden:
            return None
        kind, _, name = qualified.removeprefix("refs/").partition("/")
        if kind == "heads":
            sha = (repo.branches or {}).get(name)
            if sha is None:
                return None
            return {"name": name, "target": {"__typename": "Commit", "oid": sha}}
        found = [(sha, moment) for tag, sha, moment in repo.tags if kind == "tags" and tag == name]
        if not found:
            return None
        sha, moment = found[0]
        commit = {"__typename": "Commit", "oid": sha, "committedDate": iso(moment)}
        if name in repo.annotated:
            tag_object = self.tag_object_of(repo.owner, repo.name, name)
            tagger = {"name": "A", "date": iso(moment)}
            target = {"__typename": "Tag", "oid": tag_object, "tagger": tagger, "target": commit}
            return {"name": name, "target": target}
        return {"name": name, "target": commit}

    # --- repositories with files (a scan without a checkout) -----------------------------------

    def add_tree_repo(
        self,
        owner: str,
        name: str,
        files: Mapping[str, bytes],
        *,
        branch: str = "main",
        extra_branches: Mapping[str, Mapping[str, bytes]] | None = None,
        tags: Mapping[str, str] | Collection[str] = (),
        fork: bool = False,
        archived: bool = False,
        modes: Mapping[str, str] | None = None,
    ) -> str:
        """Register ``owner/name`` whose default ``branch`` holds ``files``; return its commit.

        ``files`` maps a repository path (``a/b/package.json``) to its bytes; ``modes`` gives
        some paths another git mode (``100755``, ``120000`` for a symlink whose bytes are its
        target, ``160000`` for a submodule whose bytes are the commit SHA). ``extra_branches``
        maps a branch to its own files; ``tags`` names tags of the default branch's commit
        (a collection) or maps a tag to a branch whose commit it names.
        """
        commit = self._commit_of_files(files, modes or {}, parent=None)
        branches = {branch: commit}
        for other, other_files in (extra_branches or {}).items():
            branches[other] = self._commit_of_files(other_files, modes or {}, parent=commit)
        tag_map = (
            {tag: branches[target] for tag, target in tags.items()}
            if isinstance(tags, Mapping)
            else dict.fromkeys(tags, commit)
        )
        with self._lock:
            self._tree_repos[f"{owner}/{name}".lower()] = _TreeRepo(
                owner, name, branch, branches, tag_map, fork=fork, archived=archived
            )
        return commit

    def commit_files(
        self,
        owner: str,
        name: str,
        files: Mapping[str, bytes | None],
        *,
        branch: str | None = None,
        modes: Mapping[str, str] | None = None,
    ) -> str:
        """A new commit on ``branch`` (default: the default branch): ``files`` changed or added,
        those mapped to ``None`` removed; returns the new commit's SHA.
        """  # noqa: D205 - the shape is the summary
        repo = self._tree_repos[f"{owner}/{name}".lower()]
        branch = branch or repo.default_branch
        parent = repo.branches.get(branch)
        current = self.files_at(parent) if parent is not None else {}
        for path, data in files.items():
            if data is None:
                current.pop(path, None)
            else:
                current[path] = data
        commit = self._commit_of_files(current, modes or {}, parent=parent)
        with self._lock:
            repo.branches[branch] = commit
        return commit

    def fail_repo(self, owner: str, name: str, failure: str | None) -> None:
        """Make ``owner/name`` answer every request with a failure, or (``None``) no more.

        ``"missing"``: 404 (missing, or private to this caller); ``"empty"``: 409 "Git
        Repository is empty."; ``"rate_limited"``: 403 "API rate limit exceeded" with
        ``x-ratelimit-remaining: 0``. A name never added answers 404 anyway.
        """
        key = f"{owner}/{name}".lower()
        with self._lock:
            if key not in self._tree_repos:
                self._tree_repos[key] = _TreeRepo(owner, name, "main", {}, {})
            self._tree_repos[key].failure = failure

    def add_owner(
        self,
        owner: str,
        repos: Sequence[tuple[str, Mapping[str, bool]]],
        *,
        kind: str = "org",
    ) -> None:
        """Serve ``owner``'s repositories at ``/orgs/{o}/repos`` (``kind="org"``) or
        ``/users/{o}/repos`` (``"user"``), paginated (``per_page`` default 30, max 100).

        ``repos`` is ``(name, {"fork": bool, "archived": bool})`` in the order served.
        """  # noqa: D205 - the shape is the summary
        items = [
            {
                "id": int(digest(f"{owner}/{name}")[:7], 16),
                "name": name,
                "full_name": f"{owner}/{name}",
                "owner": {"login": owner, "type": "Organization" if kind == "org" else "User"},
                "private": False,
                "fork": bool(flags.get("fork", False)),
                "archived": bool(flags.get("archived", False)),
                "default_branch": "main",
            }
            for name, flags in repos
        ]
        with self._lock:
            self._owners[owner.lower()] = (kind, items)

    def commit_of_branch(self, owner: str, name: str, branch: str | None = None) -> str:
        """The commit ``branch`` (default: the default branch) of ``owner/name`` names now."""
        repo = self._tree_repos[f"{owner}/{name}".lower()]
        return repo.branches[branch or repo.default_branch]

    def files_at(self, commit: str) -> dict[str, bytes]:
        """The files of ``commit`` (path → bytes; submodules and symlinks included)."""
        out: dict[str, bytes] = {}

        def walk(tree: str, prefix: str) -> None:
            for entry, (mode, sha) in self._trees[tree].items():
                if mode == "40000":
                    walk(sha, f"{prefix}{entry}/")
                else:
                    out[f"{prefix}{entry}"] = self._blobs.get(sha, bytes.fromhex(sha))

        walk(self._commits[commit], "")
        return out

    @staticmethod
    def blob_sha(data: bytes) -> str:
        """The git blob SHA-1 of ``data`` (``git hash-object``)."""
        return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()

    def _commit_of_files(
        self, files: Mapping[str, bytes], modes: Mapping[str, str], *, parent: str | None
    ) -> str:
        """Store ``files`` as git objects; return the SHA of a commit of their root tree."""
        root: dict[str, Any] = {}
        for path, data in files.items():
            *dirs, leaf = path.split("/")
            node = root
            for part in dirs:
                node = node.setdefault(part, {})
            node[leaf] = (modes.get(path, "100644"), data)
        tree = self._store_tree(root)
        body = f"tree {tree}\n"
        if parent is not None:
            body += f"parent {parent}\n"
        body += "author A <a@example.invalid> 1577836800 +0000\n"
        body += "committer A <a@example.invalid> 1577836800 +0000\n\nfake commit\n"
        raw = body.encode()
        sha = hashlib.sha1(b"commit %d\0" % len(raw) + raw, usedforsecurity=False).hexdigest()
        with self._lock:
            self._commits[sha] = tree
        return sha

    def _store_tree(self, node: Mapping[str, Any]) -> str:
        """Store one directory (and those under it) as git tree objects; return its SHA."""
        entries: _TreeObject = {}
        for entry, value in node.items():
            if isinstance(value, dict):
                entries[entry] = ("40000", self._store_tree(value))
                continue
            mode, data = value
            if mode == "160000":  # a submodule: the entry names a commit of another repository
                entries[entry] = (mode, data.decode())
                continue
            sha = self.blob_sha(data)
            with self._lock:
                self._blobs[sha] = data
            entries[entry] = (mode, sha)

        # git sorts tree entries by name, a sub-tree's name compared as if it ended in "/".
        def order(item: tuple[str, tuple[str, str]]) -> bytes:
            entry, (mode, _) = item
            return entry.encode() + (b"/" if mode == "40000" else b"")

        ordered = sorted(entries.items(), key=order)
        raw = b"".join(
            f"{mode} {entry}".encode() + b"\0" + bytes.fromhex(sha)
            for entry, (mode, sha) in ordered
        )
        sha = hashlib.sha1(b"tree %d\0" % len(raw) + raw, usedforsecurity=False).hexdigest()
        with self._lock:
            self._trees[sha] = dict(ordered)
        return sha

    def _tree_rest(self, request: Request, path: str, prefix: str) -> Reply | None:
        """Answer a repository-with-files or owner route; ``None``: not one of those."""
        if owner_match := _OWNER_REST.fullmatch(path):
            listed = self._owners.get(owner_match[2].lower())
            kind = "org" if owner_match[1] == "orgs" else "user"
            if listed is None or listed[0] != kind:
                return json_reply(_NOT_FOUND, 404)
            return self._page(request, request.path, listed[1])
        match = _TREE_REST.fullmatch(path)
        repo = self._tree_repos.get(f"{match[1]}/{match[2]}".lower()) if match else None
        if match is None or repo is None:
            return None
        if repo.failure is not None:
            return _failure(repo.failure)
        kind, rest = match[3], unquote(match[4] or "")
        if kind is None:
            return json_reply(
                {
                    "name": repo.name,
                    "full_name": f"{repo.owner}/{repo.name}",
                    "owner": {"login": repo.owner},
                    "private": False,
                    "fork": repo.fork,
                    "archived": repo.archived,
                    "default_branch": repo.default_branch,
                }
            )
        if kind == "commits":
            return self._tree_commit(request, repo, rest, prefix)
        if kind == "git/trees":
            return self._tree(request, rest)
        return self._blob(request, repo, rest, prefix)

    def _tree_commit(self, request: Request, repo: _TreeRepo, ref: str, prefix: str) -> Reply:
        if ref == "HEAD":
            ref = repo.default_branch
        sha = repo.branches.get(ref) or repo.tags.get(ref)
        if sha is None and ref.lower() in self._commits:
            sha = ref.lower()
        if sha is None:
            return json_reply({"message": f"No commit found for SHA: {ref}"}, 422)
        if request.headers.get("accept", "").startswith("application/vnd.github.sha"):
            # GitHub's ``sha`` media type: the bare SHA, its ETag the quoted SHA.
            return Reply(200, sha.encode(), "application/vnd.github.sha", etag=f'"{sha}"')
        base = f"{self.base_url}{prefix}/repos/{repo.owner}/{repo.name}"
        tree = self._commits[sha]
        return json_reply(
            {
                "sha": sha,
                "url": f"{base}/commits/{sha}",
                "commit": {"tree": {"sha": tree, "url": f"{base}/git/trees/{tree}"}},
            }
        )

    def _tree(self, request: Request, sha: str) -> Reply:
        tree = self._commits.get(sha, sha)
        if tree not in self._trees:
            return json_reply(_NOT_FOUND, 404)
        if "recursive" not in request.query:
            rows = [
                self._tree_row(entry, mode, child)
                for entry, (mode, child) in self._trees[tree].items()
            ]
            return json_reply({"sha": tree, "tree": rows, "truncated": False})
        rows = []

        def walk(current: str, path: str) -> None:
            for entry, (mode, child) in self._trees[current].items():
                rows.append(self._tree_row(f"{path}{entry}", mode, child))
                if mode == "40000":
                    walk(child, f"{path}{entry}/")

        walk(tree, "")
        truncated = self.truncate_trees
        if truncated:
            rows = rows[: max(1, len(rows) // 2)]
        return json_reply({"sha": tree, "tree": rows, "truncated": truncated})

    def _tree_row(self, path: str, mode: str, sha: str) -> dict[str, Any]:
        """One entry as GitHub lists it (sub-trees ``040000`` without ``size``)."""
        if mode == "40000":
            return {"path": path, "mode": "040000", "type": "tree", "sha": sha}
        if mode == "160000":
            return {"path": path, "mode": mode, "type": "commit", "sha": sha}
        size = len(self._blobs[sha])
        return {"path": path, "mode": mode, "type": "blob", "sha": sha, "size": size}

    def _blob(self, request: Request, repo: _TreeRepo, sha: str, prefix: str) -> Reply:
        del request
        data = self._blobs.get(sha)
        if data is None:
            return json_reply(_NOT_FOUND, 404)
        encoded = base64.b64encode(data).decode()
        wrapped = "".join(
            encoded[i : i + _BLOB_WRAP] + "\n" for i in range(0, len(encoded), _BLOB_WRAP)
        )
        url = f"{self.base_url}{prefix}/repos/{repo.owner}/{repo.name}/git/blobs/{sha}"
        return json_reply(
            {"sha": sha, "size": len(data), "url": url, "content": wrapped, "encoding": "base64"}
        )


def _refusal(resource: str) -> Reply:
    """GitHub's answer past the primary limit: REST 403, GraphQL 200 with ``RATE_LIMITED``."""
    if resource == "graphql":
        error = {"type": "RATE_LIMITED", "message": "API rate limit already exceeded."}
        return json_reply({"errors": [error]})
    message = "API rate limit exceeded for 127.0.0.1."
    return json_reply({"message": message, "documentation_url": _DOCS}, 403)


def _failure(failure: str) -> Reply:
    """A repository's ``fail_repo`` answer."""
    if failure == "empty":
        return json_reply({"message": "Git Repository is empty.", "documentation_url": _DOCS}, 409)
    if failure == "rate_limited":
        message = "API rate limit exceeded for 127.0.0.1."
        reply = json_reply({"message": message, "documentation_url": _DOCS}, 403)
        reply.headers["x-ratelimit-remaining"] = "0"
        return reply
    return json_reply(_NOT_FOUND, 404)


def _connection(nodes: list[Any], first: int, after: str | None) -> dict[str, Any]:
    """A GraphQL connection page; a cursor is base64 of ``cursor:<index>``."""
    start = int(base64.b64decode(after).decode().split(":")[1]) + 1 if after else 0
    page = nodes[start : start + first]
    cursors = [base64.b64encode(f"cursor:{start + i}".encode()).decode() for i in range(len(page))]
    info = {
        "hasNextPage": start + first < len(nodes),
        "hasPreviousPage": start > 0,
        "startCursor": cursors[0] if cursors else None,
        "endCursor": cursors[-1] if cursors else None,
    }
    edges = [{"cursor": c, "node": n} for c, n in zip(cursors, page, strict=True)]
    return {"totalCount": len(nodes), "pageInfo": info, "nodes": page, "edges": edges}
