"""OCI distribution: anonymous Bearer token flow, paginated tag lists, manifests (§5)."""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from .base import Reply, Request, digest, iso, json_reply

INDEX = "application/vnd.oci.image.index.v1+json"
SERVICE = "fake-registry"
PULL_QUOTA_MESSAGE = (
    "You have reached your unauthenticated pull rate limit. "
    "https://www.docker.com/increase-rate-limit"
)
Manifest = str | bytes | Mapping[str, Any] | None


class Oci:
    """Repositories of tags → manifests; every ``/v2/`` call needs a token granting its scope.

    ``max_page_size`` caps ``n`` (a registry may return fewer tags than asked);
    :meth:`revoke_tokens` makes every issued token fail with 401.

    Datasource knobs: ``anonymous`` (``/v2/`` calls need no token), ``head_status`` (answer a
    manifest HEAD with this status instead, e.g. 405 or 501), ``omit_digest_header`` (no
    ``Docker-Content-Digest`` on manifests), ``pull_quota_exhausted`` (a manifest GET gets
    Docker Hub's pull-quota 429; HEADs are not pulls), ``link_base`` (``Link`` targets are
    absolute on this base URL instead of relative) and :meth:`rate_limit_tag_page`.

    Token knobs: ``token_expires_in`` (seconds; ``None`` leaves ``expires_in`` out),
    ``token_cache_control`` (the token response's ``Cache-Control``, e.g. ``no-store``;
    ``None`` leaves it to the host's default), ``token_credential`` (when set, the token
    endpoint answers 401 unless the request carries exactly that ``Authorization``: a test
    stand-in for a private registry's login, never a real secret). ``token_requests`` counts
    token requests; ``issued`` lists every token value handed out (for tests that look for
    them where they must not be).
    """

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.max_page_size: int | None = None
        self.anonymous = False
        self.head_status: int | None = None
        self.omit_digest_header = False
        self.pull_quota_exhausted = False
        self.link_base: str | None = None
        # Page number (1-based) of a tag list → 429 answers still to give for it.
        self._page_limits: dict[int, tuple[int, str]] = {}
        self.token_expires_in: int | None = 300
        self.token_cache_control: str | None = None
        self.token_credential: str | None = None
        self.token_requests = 0
        self.issued: list[str] = []
        self._tokens: dict[str, set[str]] = {}
        self._tags: dict[str, dict[str, str]] = {}
        self._manifests: dict[str, dict[str, tuple[str, bytes]]] = {}

    def add(self, image: str, tags: Mapping[str, Manifest], *, media_type: str = INDEX) -> None:
        """Register ``image`` (e.g. ``library/nginx``); each tag maps to one of four things.

        None generates an image index unique to the tag; a manifest mapping is served as is (its
        digest is the sha256 of its compact JSON, and its ``mediaType`` is the content type); a
        ``sha256:…`` string is served as ``Docker-Content-Digest`` over a placeholder body (fake:
        the body does not hash to it) — use it to match digests pinned in test manifests; bytes
        are served as the body as is (``b""``: a manifest with no body to hash). Adding a tag
        again re-pushes it: it names the new manifest from then on.
        """
        tag_map = self._tags.setdefault(image, {})
        manifests = self._manifests.setdefault(image, {})
        for tag, given in tags.items():
            if isinstance(given, bytes):
                name = "sha256:" + hashlib.sha256(given).hexdigest()
                manifests[name] = (media_type, given)
                tag_map[tag] = name
                continue
            document = given if isinstance(given, Mapping) else _index(image, tag, media_type)
            body = json.dumps(document, separators=(",", ":")).encode()
            name = given if isinstance(given, str) else "sha256:" + hashlib.sha256(body).hexdigest()
            manifests[name] = (str(document.get("mediaType", media_type)), body)
            tag_map[tag] = name

    def revoke_tokens(self) -> None:
        """Forget every issued token."""
        self._tokens.clear()

    def rate_limit_tag_page(self, page: int, n: int = 1, retry_after: str = "120") -> None:
        """Answer the next ``n`` requests for page ``page`` (1-based) of any tag list with 429."""
        self._page_limits[page] = (n, retry_after)

    def handle(self, request: Request) -> Reply:
        """``/token``, ``/v2/``, ``/v2/<name>/tags/list`` and ``/v2/<name>/manifests/<ref>``."""
        if request.path == "/token":
            return self._token(request)
        match = re.fullmatch(
            r"/v2/(?:(?P<name>.+?)/(?:tags/list|manifests/(?P<ref>[^/]+)))?/?", request.path
        )
        if match is None:
            return _error(404, "NAME_UNKNOWN", "repository name not known to registry")
        name = match["name"]
        granted = self._tokens.get(request.headers.get("authorization", "").removeprefix("Bearer "))
        if not self.anonymous and (granted is None or (name is not None and name not in granted)):
            return self._challenge(name)
        if name is None:
            return json_reply({})
        if name not in self._tags:
            return _error(404, "NAME_UNKNOWN", "repository name not known to registry")
        if match["ref"] is None:
            return self._tag_list(request, name)
        ref = match["ref"]
        key = ref if ref.startswith("sha256:") else self._tags[name].get(ref, "")
        if key not in self._manifests[name]:
            return _error(404, "MANIFEST_UNKNOWN", "manifest unknown")
        if request.method == "HEAD" and self.head_status is not None:
            return _error(self.head_status, "UNSUPPORTED", "HEAD not supported")
        if request.method == "GET" and self.pull_quota_exhausted:
            reply = _error(429, "TOOMANYREQUESTS", PULL_QUOTA_MESSAGE)
            reply.headers.update(
                {"ratelimit-limit": "100;w=21600", "ratelimit-remaining": "0;w=21600"}
            )
            return reply
        media_type, body = self._manifests[name][key]
        headers = {} if self.omit_digest_header else {"Docker-Content-Digest": key}
        return Reply(200, body, media_type, headers, etag=f'"{key}"')

    def _token(self, request: Request) -> Reply:
        self.token_requests += 1
        if self.token_credential is not None and (
            request.headers.get("authorization") != self.token_credential
        ):
            return _error(401, "UNAUTHORIZED", "authentication required")
        repositories = set()
        for scope in request.query.get("scope", []):
            kind, _, rest = scope.partition(":")
            repository, _, actions = rest.rpartition(":")
            if kind == "repository" and "pull" in actions.split(","):
                repositories.add(repository)
        token = "fake." + secrets.token_urlsafe(16)
        self._tokens[token] = repositories
        self.issued.append(token)
        issued = iso(datetime.now(UTC), "microseconds")
        document: dict[str, Any] = {"token": token, "access_token": token, "issued_at": issued}
        if self.token_expires_in is not None:
            document["expires_in"] = self.token_expires_in
        reply = json_reply(document)
        if self.token_cache_control is not None:
            reply.headers["Cache-Control"] = self.token_cache_control
        return reply

    def _challenge(self, name: str | None) -> Reply:
        challenge = f'Bearer realm="{self.base_url}/token",service="{SERVICE}"'
        if name is not None:
            challenge += f',scope="repository:{name}:pull"'
        reply = _error(401, "UNAUTHORIZED", "authentication required")
        reply.headers["WWW-Authenticate"] = challenge
        return reply

    def _tag_list(self, request: Request, name: str) -> Reply:
        tags = sorted(self._tags[name])
        last = request.arg("last")
        if last is not None:
            tags = [t for t in tags if t > last]
        n = request.arg("n")
        size = len(tags) if n is None else int(n)
        if self.max_page_size is not None:
            size = min(size, self.max_page_size)
        # Page N starts after (N-1) pages of ``size`` tags (a constant ``n``, as clients send).
        before = 0 if last is None else sum(tag <= last for tag in self._tags[name])
        number = before // size + 1 if size > 0 else 1
        limited = self._page_limit(number)
        if limited is not None:
            return limited
        page, more = tags[:size], len(tags) > size
        reply = json_reply({"name": name, "tags": page})
        if more and page:
            target = f"/v2/{name}/tags/list?last={quote(page[-1])}&n={size}"
            reply.headers["Link"] = f'<{self.link_base or ""}{target}>; rel="next"'
        return reply

    def _page_limit(self, number: int) -> Reply | None:
        """The 429 still owed to page ``number`` of a tag list, if any (one fewer each time)."""
        left, retry_after = self._page_limits.get(number, (0, ""))
        if left <= 0:
            return None
        self._page_limits[number] = (left - 1, retry_after)
        reply = _error(429, "TOOMANYREQUESTS", "too many requests")
        reply.headers["Retry-After"] = retry_after
        return reply


def _index(image: str, tag: str, media_type: str) -> dict[str, Any]:
    """A generated one-platform index (list types) or single-image manifest for a tag."""
    child = "sha256:" + digest(f"{image}:{tag}/linux/amd64")
    if "index" not in media_type and "list" not in media_type:
        config = {
            "mediaType": "application/vnd.oci.image.config.v1+json",
            "digest": child,
            "size": 512,
        }
        return {"schemaVersion": 2, "mediaType": media_type, "config": config, "layers": []}
    entry = {
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "digest": child,
        "size": 1024,
    }
    platform = {"architecture": "amd64", "os": "linux"}
    return {
        "schemaVersion": 2,
        "mediaType": media_type,
        "manifests": [entry | {"platform": platform}],
    }


def _error(status: int, code: str, message: str) -> Reply:
    return json_reply({"errors": [{"code": code, "message": message, "detail": None}]}, status)
