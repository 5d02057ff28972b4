"""Helpers shared by the datasource tests."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import httpx

from patchula.datasource.base import Fetch
from patchula.models import Derive, FetchResponse


def httpx_fetch(client: httpx.AsyncClient, fetched_at: datetime) -> Fetch:
    """Adapt an httpx client to the fetch facade's shape (status, lower-case headers, time).

    Successful bodies are derived like the real facade does; there is no cache.
    """

    async def fetch(
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        representation: str = "raw",
        derive: Derive | None = None,
    ) -> FetchResponse:
        response = await client.get(url, headers=headers)
        content = response.content
        if derive is not None and response.is_success:
            content = derive(content)
        return FetchResponse(
            status=response.status_code,
            url=str(response.url),
            headers=tuple((key.lower(), value) for key, value in response.headers.items()),
            content=content,
            fetched_at=fetched_at,
        )

    return fetch
