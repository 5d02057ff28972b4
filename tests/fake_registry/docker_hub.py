"""Docker Hub's tag API (``hub.docker.com/v2/namespaces/…/tags``): tag push times (§5 "Hub API")."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from urllib.parse import unquote

from .base import Reply, Request, iso, json_reply

_TAGS = re.compile(
    r"/v2/namespaces/(?P<ns>[^/]+)/repositories/(?P<repo>[^/]+)/tags(?:/(?P<tag>[^/]+))?/?"
)


class DockerHub:
    """Repositories (``library/nginx``) of tags → their last push time.

    ``GET /v2/namespaces/<ns>/repositories/<repo>/tags/<tag>`` answers one tag object;
    ``GET …/tags?page_size=N&page=P`` pages of them, most recently pushed first, with an
    absolute ``next`` URL (as Docker Hub sends it) or ``null``.
    """

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self._tags: dict[str, dict[str, datetime]] = {}

    def add(self, repository: str, pushed: Mapping[str, datetime]) -> None:
        """Register ``repository``'s tags and the time each was last pushed."""
        self._tags.setdefault(repository, {}).update(pushed)

    def handle(self, request: Request) -> Reply:
        """The tag and the tag list endpoints."""
        match = _TAGS.fullmatch(request.path)
        repository = f"{match['ns']}/{match['repo']}" if match else ""
        if match is None or repository not in self._tags:
            return json_reply({"message": "object not found", "errinfo": {}}, 404)
        tags = self._tags[repository]
        if match["tag"] is not None:
            tag = unquote(match["tag"])
            if tag not in tags:
                return json_reply({"message": "tag not found", "errinfo": {}}, 404)
            return json_reply(_tag(tag, tags[tag]))
        size = int(request.arg("page_size") or 10)
        number = int(request.arg("page") or 1)
        ordered = sorted(tags, key=lambda t: (tags[t], t), reverse=True)
        chunk = ordered[(number - 1) * size : number * size]
        more = number * size < len(ordered)
        path = request.path
        return json_reply(
            {
                "count": len(ordered),
                "next": f"{self.base_url}{path}?page={number + 1}&page_size={size}"
                if more
                else None,
                "previous": None,
                "results": [_tag(t, tags[t]) for t in chunk],
            }
        )


def _tag(name: str, pushed: datetime) -> dict[str, object]:
    """A tag object in the Hub API's shape (fields a client may read, invented values)."""
    when = iso(pushed, "microseconds")
    return {
        "name": name,
        "last_updated": when,
        "tag_last_pushed": when,
        "tag_last_pulled": when,
        "tag_status": "active",
        "images": [{"architecture": "amd64", "os": "linux", "last_pushed": when}],
    }
