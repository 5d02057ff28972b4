"""Credentials as the fetch facade sees them: which header to send to which URL, and nothing more.

Where credentials come from (``.npmrc``, ``~/.netrc``, ``PIP_INDEX_URL``, userinfo in a registry
URL, ``GITHUB_TOKEN``) is decided outside ``http``; this module only defines the value handed
to the fetcher and the rule of where it may go. A credential is sent only to the scheme, host,
port and path prefix it was given for (npm's ``//host/path/:_authToken`` rule), never across a
redirect to another origin. Secrets never appear in ``repr``, messages, logs or cache keys:
keys carry ``identity`` through ``caching.credential_digest`` only.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import unquote, urlsplit

__all__ = [
    "Credential",
    "Credentials",
    "StaticCredentials",
    "basic_credential",
    "redact_text",
    "redact_url",
    "scope_of",
    "split_userinfo",
]

_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class Credential:
    """One credential: the header to send, where it came from, and where it may be sent.

    ``header``/``value`` are sent as given (``Authorization: Bearer …``, ``Authorization:
    Basic …``). ``source`` names where it was found, for messages (``~/.npmrc``,
    ``./.npmrc``, ``NPM_CONFIG_REGISTRY``, ``~/.netrc``, ``PIP_INDEX_URL``, ``registry URL``,
    ``GITHUB_TOKEN``) and never holds the secret. ``scope`` is ``scheme://host[:port]/path/``
    (lower-case host, default port left out, path ending in ``/``): the credential applies to
    URLs of that origin whose path starts with that prefix. ``identity`` distinguishes
    credentials for cache keys (digested there, never stored raw); by default the value itself.
    """

    header: str
    value: str = field(repr=False)
    source: str
    scope: str
    identity: str = field(default="", repr=False)

    def applies_to(self, url: str) -> bool:
        """Return whether ``url`` is inside this credential's scope (origin and path prefix)."""
        return _in_scope(url, self.scope)

    @property
    def cache_identity(self) -> str:
        """What the cache key digests for this credential (``identity`` or the value)."""
        return self.identity or f"{self.header}\0{self.value}"


class Credentials(Protocol):
    """Answers which credential, if any, goes with a request URL."""

    def for_url(self, url: str) -> Credential | None:
        """Return the credential to send with ``GET url``, or ``None`` for an anonymous request."""
        ...

    def unused_for(self, url: str) -> str | None:
        """Return why a credential configured for ``url`` was not sent, or ``None``.

        A sentence for a 401/403 message, never a secret (e.g. ``the credential in ./.npmrc
        line 2 was not used: environment variable NPM_TOKEN is not set``); ``http`` only
        passes it on (``FetchResponse.credential_unused``).
        """
        ...


class StaticCredentials:
    """A fixed set of credentials; the longest matching scope wins (npm's nerf-dart rule).

    ``unused`` maps a scope to why a credential configured for it was not usable (the
    explanation ``unused_for`` gives); its URLs follow the same scope rule.
    """

    def __init__(
        self, credentials: Iterable[Credential] = (), unused: Mapping[str, str] | None = None
    ) -> None:
        self._credentials = sorted(credentials, key=lambda c: len(c.scope), reverse=True)
        self._unused = sorted((unused or {}).items(), key=lambda i: len(i[0]), reverse=True)

    def for_url(self, url: str) -> Credential | None:
        """Return the most specific credential whose scope contains ``url``, or ``None``."""
        for credential in self._credentials:
            if credential.applies_to(url):
                return credential
        return None

    def unused_for(self, url: str) -> str | None:
        """Why the most specific unusable credential for ``url`` was not sent, or ``None``.

        ``None`` too when a credential of a more specific scope was sent: the unusable one
        would not have been chosen anyway.
        """
        sent = self.for_url(url)
        for scope, why in self._unused:
            if len(scope) < (len(sent.scope) if sent is not None else 0):
                return None
            if _in_scope(url, scope):
                return why
        return None

    def __bool__(self) -> bool:
        return bool(self._credentials)

    def __repr__(self) -> str:
        sources = ", ".join(f"{c.source} for {c.scope}" for c in self._credentials)
        return f"StaticCredentials([{sources}])"


def scope_of(url: str) -> str:
    """Return the normalised scope ``scheme://host[:port]/path/`` of ``url`` (userinfo dropped).

    ``https://User:pw@Registry.example.com:443/npm`` → ``https://registry.example.com/npm/``.
    """
    origin, path = _split(url)
    return origin + (path if path.endswith("/") else path + "/")


def _in_scope(url: str, scope: str) -> bool:
    """Whether ``url`` has the origin of ``scope`` and a path under its path prefix."""
    origin, path = _split(url)
    scope_origin, scope_path = _split(scope)
    return origin == scope_origin and (path + "/").startswith(scope_path)


def _split(url: str) -> tuple[str, str]:
    """``(scheme://host[:port], path)`` with a lower-case host and no default port."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    authority = host if port in {None, _DEFAULT_PORTS.get(scheme)} else f"{host}:{port}"
    return f"{scheme}://{authority}", parts.path or "/"


# Query parameters whose value is a secret (API keys, signed-URL signatures), compared in lower
# case; any name ending in one of ``_SECRET_SUFFIXES`` counts too (``private_token``).
_SECRET_QUERY_NAMES = frozenset(
    {
        "token",
        "access_token",
        "auth",
        "key",
        "apikey",
        "api_key",
        "password",
        "secret",
        "sig",
        "signature",
        "x-amz-signature",
        "x-amz-credential",
        "x-amz-security-token",
        "x-goog-signature",
        "x-goog-credential",
    }
)
_SECRET_SUFFIXES = ("token", "secret", "password", "signature")
REDACTED = "***"


def redact_url(url: str) -> str:
    """Return ``url`` fit to show: userinfo becomes ``***@`` and secret query values ``***``.

    Secret query parameters are the token-like names (``token``, ``access_token``, ``auth``,
    ``key``, ``apikey``, ``password``, ``secret``, ``sig``, ``signature``,
    ``X-Amz-Signature``, ``X-Goog-Signature`` …, case-insensitive, and names ending in
    ``token``/``secret``/``password``/``signature``). Userinfo is what precedes the last ``@``
    of the authority (RFC 3986 §3.2.1). A string without ``scheme://`` is returned unchanged.
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    cut = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority, tail = rest[:cut], rest[cut:]
    if "@" in authority:
        authority = f"{REDACTED}@" + authority.rsplit("@", 1)[1]
    before, qmark, query = tail.partition("?")
    if qmark:
        query, hash_, fragment = query.partition("#")
        query = "&".join(_redact_pair(pair) for pair in query.split("&")) + hash_ + fragment
    return f"{scheme}://{authority}{before}{qmark}{query}"


def _redact_pair(pair: str) -> str:
    name, eq, value = pair.partition("=")
    lowered = unquote(name).lower()
    if eq and value and (lowered in _SECRET_QUERY_NAMES or lowered.endswith(_SECRET_SUFFIXES)):
        return f"{name}={REDACTED}"
    return pair


_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>()]+")
# ``user:password@host`` without a scheme (an image reference ``user:tok@host/img:1.0``, a
# proxy or a mirror written bare): the userinfo at the start of a word, then a host name or
# address and an optional port, then the end of the word or a ``/``. Not a ``name:tag@digest``
# image reference (``node:20@sha256:…``): a digest's ``algorithm:`` is no host and port.
_BARE_USERINFO = re.compile(
    r"(?<![^\s'\"<>(=,])"  # the start of the text, a word, a quoted or an assigned value
    # Not an npm, pnpm or yarn specifier (``npm:foo@1.2.3``, ``workspace:pkg@^1``,
    # ``npm:foo@latest``): its ``protocol:name@`` is userinfo only before a domain name (a
    # dotted name ending in a label that starts with a letter) or an IPv4 address.
    r"(?!(?:npm|jsr|workspace|catalog|file|link|portal|patch|exec):[^\s'\"<>()/@]+@"
    r"(?!(?:[A-Za-z0-9-]+\.)+[A-Za-z][A-Za-z0-9-]*(?::[0-9]+)?(?:[/\s'\"<>),]|$)"
    r"|[0-9]{1,3}(?:\.[0-9]{1,3}){3}(?::[0-9]+)?(?:[/\s'\"<>),]|$)))"
    r"[A-Za-z0-9._~%!$&*+-]+:[^\s'\"<>()/]+@"
    r"(?=(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]+)?(?:[/\s'\"<>),]|$))"
    # A digest (``algorithm:encoded``, OCI image-spec descriptor grammar) is no host and port:
    # its encoded part has a letter, or more digits than a port.
    r"(?![a-z0-9]+(?:[+._-][a-z0-9]+)*:(?:[A-Za-z0-9=_-]*[A-Za-z=_-]|[0-9]{6}))"
)


# Tokens recognisable by their form wherever they stand: GitHub's (``ghp_`` classic, ``gho_``
# OAuth, ``ghu_``/``ghs_``/``ghr_`` app tokens: 36 letters and digits; ``github_pat_``
# fine-grained ones; GitHub docs, "About authentication to GitHub") and npm's (``npm_`` and
# 36 letters and digits); 30 or more (20 after ``github_pat_``) are taken for one. The prefix
# is kept (it says which kind of token was there), the rest becomes ``***``; a shorter
# ``npm_config_registry`` or ``ghs_x`` is no token.
_TOKEN = re.compile(
    r"(?<![A-Za-z0-9_])(gh[pousr]_|npm_)[A-Za-z0-9]{30,}|(?<![A-Za-z0-9_])(github_pat_)\w{20,}"
)
# A credential assigned in an ``.npmrc`` line (``//host/:_authToken=…``, ``_auth``,
# ``_password``; npm's config docs) or an HTTP ``Authorization``/``Proxy-Authorization``
# value (RFC 9110 §11.6.2: a scheme such as ``Bearer``/``Basic``, then the credentials).
_ASSIGNED = re.compile(r"(?<![A-Za-z0-9])(_authToken|_auth|_password)(\s*=\s*)[^\s'\"]+")
_AUTHORIZATION = re.compile(
    r"(?i)(?<![A-Za-z0-9-])((?:proxy-)?authorization\s*[:=]\s*)"
    r"(?:(bearer|basic|token|digest|negotiate)\s+)?[^\s'\",;]+"
)
# What a text holding any of the secrets above holds (one search decides most texts).
_SECRET_MARKS = re.compile("@|gh|github_pat_|npm_|_auth|_password|uthorization|UTHORIZATION")


def redact_text(text: str) -> str:
    """Return ``text`` fit to show or to keep: every secret it holds becomes ``***``.

    Every ``scheme://…`` URL in ``text`` is redacted by ``redact_url``; a ``user:password@host``
    without a scheme (``FROM user:tok@registry.example/app:1.0``) has its userinfo replaced by
    ``***@`` too. A ``name:tag@sha256:…`` image reference and an npm specifier
    (``npm:foo@1.2.3``) are left as they are. GitHub and npm tokens by their form
    (``ghp_***``, ``github_pat_***``, ``npm_***``), ``.npmrc`` credential values
    (``_authToken=***``, ``_auth``, ``_password``) and ``Authorization`` header values
    (``Authorization: Bearer ***``) are masked too. Redacting twice changes nothing more.
    """
    if _SECRET_MARKS.search(text) is None:
        return text
    if "gh" in text or "github_pat_" in text or "npm_" in text:
        text = _TOKEN.sub(lambda m: f"{m[1] or m[2]}{REDACTED}", text)
    if "_auth" in text or "_password" in text:
        text = _ASSIGNED.sub(lambda m: f"{m[1]}{m[2]}{REDACTED}", text)
    if "uthorization" in text or "UTHORIZATION" in text:
        text = _AUTHORIZATION.sub(lambda m: f"{m[1]}{m[2] + ' ' if m[2] else ''}{REDACTED}", text)
    if "@" not in text:
        return text
    if "://" in text:

        def redact(match: re.Match[str]) -> str:
            url = match[0].rstrip(".,;:!?")  # sentence punctuation after a URL is not part of it
            return redact_url(url) + match[0][len(url) :]

        text = _URL_IN_TEXT.sub(redact, text)
    return _BARE_USERINFO.sub(f"{REDACTED}@", text)


def split_userinfo(url: str) -> tuple[str, str | None, str | None]:
    """Split ``url`` into the URL without userinfo, the user name and the password.

    User name and password are percent-decoded (RFC 3986 §3.2.1); ``None`` when absent.
    ``https://me:p%40ss@host/npm`` → ``("https://host/npm", "me", "p@ss")``.
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url, None, None
    cut = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority = rest[:cut]
    if "@" not in authority:
        return url, None, None
    userinfo, _, host = authority.rpartition("@")
    user, colon, password = userinfo.partition(":")
    return (
        f"{scheme}://{host}{rest[cut:]}",
        unquote(user),
        unquote(password) if colon else None,
    )


def basic_credential(user: str, password: str | None, url: str, source: str) -> Credential:
    """An ``Authorization: Basic`` credential (RFC 7617) for the scope of ``url``."""
    token = base64.b64encode(f"{user}:{password or ''}".encode()).decode("ascii")
    return Credential("Authorization", f"Basic {token}", source, scope_of(url))
