"""What every datasource module provides: a pure ``parse`` and a thin async ``get_catalog``.

A datasource module defines ``ID``, ``DEFAULT_BASE_URL``, ``parse(...) -> Catalog`` (pure: bytes
in, Catalog out, raising ``RegistryError`` on an unusable body) and
``async get_catalog(fetch, base_url, package_name) -> Catalog``. It never opens sockets: the fetch
facade is passed in, and it maps HTTP outcomes to the ``LookupFailed`` tree (404/410 →
``PackageNotFound``, other non-2xx → ``RegistryError``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from patchula.errors import PackageNotFound, RegistryError
from patchula.models import Catalog, FetchResponse


class Fetch(Protocol):
    """The fetch facade: GET ``url`` through the shared client, limits, single-flight and cache.

    Raises ``RegistryUnreachable`` when no HTTP answer arrives; every HTTP status is returned.
    """

    async def __call__(
        self, url: str, *, headers: Mapping[str, str] | None = None
    ) -> FetchResponse:
        """Return the response to ``GET url`` (redirects followed)."""
        ...


class Datasource(Protocol):
    """The shape of a datasource module."""

    ID: str
    DEFAULT_BASE_URL: str

    async def get_catalog(self, fetch: Fetch, base_url: str, package_name: str) -> Catalog:
        """Fetch and parse the release list of ``package_name``."""
        ...


def check_status(response: FetchResponse, what: str) -> None:
    """Raise the ``LookupFailed`` subclass that an unsuccessful ``response`` stands for.

    ``what`` names the package for the message (e.g. ``npm package 'left-pad'``).
    """
    if 200 <= response.status < 300:  # noqa: PLR2004 - the 2xx class
        return
    if response.status in {404, 410}:
        msg = f"{what} not found ({response.status} from {response.url})"
        raise PackageNotFound(msg)
    msg = f"{what}: registry answered HTTP {response.status} ({response.url})"
    raise RegistryError(msg)
