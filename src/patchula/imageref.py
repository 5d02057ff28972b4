"""Container image references, parsed as ``distribution/reference`` and the docker CLI parse them.

``parse_image_reference("python:3.12")`` normalises a familiar name the way
``reference.ParseNormalizedNamed`` does (``normalize.go``) and checks it against the grammar of
``reference.go`` / ``regexp.go``. Imports nothing of ours: managers and datasources both use it.
"""

from __future__ import annotations

import re

import msgspec

DOCKER_HUB = "docker.io"
# Names of Docker Hub's registry that mean ``docker.io``: the legacy "Docker Index" domain
# (normalize.go legacyDefaultDomain) and the registry's real host, which the docker CLI also
# resolves to Docker Hub (it is the host ``docker.io`` images are pulled from).
_HUB_ALIASES = frozenset({"index.docker.io", "registry-1.docker.io"})
_OFFICIAL = "library/"
DEFAULT_TAG = "latest"
# reference.go RepositoryNameTotalLengthMax: the path (without the domain) is at most 255.
MAX_PATH_LENGTH = 255
# A reference longer than this is no image (a path of 255 + a host, a tag of 128 and a sha512
# digest fit many times over); refusing it first keeps every pattern below on short text.
MAX_REFERENCE_LENGTH = 1024
_SHOWN = 80

# The grammar of regexp.go, ASCII only (Go's ``\w`` is ``[0-9A-Za-z_]``; Python's is Unicode).
_ALNUM = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|[-]+)"
_PATH_COMPONENT = rf"{_ALNUM}(?:{_SEPARATOR}{_ALNUM})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN_NAME = rf"{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*"
_IPV6 = r"\[(?:[a-fA-F0-9:]+)\]"
_DOMAIN = rf"(?:{_DOMAIN_NAME}|{_IPV6})(?::[0-9]+)?"
_TAG = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"

_DOMAIN_RE = re.compile(_DOMAIN)
_PATH_COMPONENT_RE = re.compile(_PATH_COMPONENT)
_TAG_RE = re.compile(_TAG)
_DIGEST_RE = re.compile(_DIGEST)
_IDENTIFIER_RE = re.compile(r"[a-f0-9]{64}")
# go-digest: the algorithms the docker CLI registers and the hex length of each; the encoded
# part is lower-case hex (digest.go Validate, algorithm.go anchoredEncodedRegexp).
_DIGEST_LENGTHS = {"sha256": 64, "sha384": 96, "sha512": 128}
_LOWER_HEX_RE = re.compile(r"[a-f0-9]+")


class InvalidImageReference(ValueError):  # noqa: N818 - named for what it is, like ValueError
    """An image reference that ``distribution/reference`` refuses; the message says why."""


class ImageReference(msgspec.Struct, frozen=True):
    """One parsed image reference.

    ``registry`` is the host (and ``:port``), lower-cased (host names compare without case,
    RFC 3986 §3.2.2; ``distribution`` keeps the case as written), ``docker.io`` for Docker Hub;
    ``repository`` the path on it (``library/python`` for a single Docker Hub name);
    ``tag`` and ``digest`` (``sha256:<hex>``) as written or ``None``; ``familiar`` the name
    as written without tag and digest (``python``, ``ghcr.io/o/img``).
    """

    registry: str
    repository: str
    tag: str | None
    digest: str | None
    familiar: str

    @property
    def canonical(self) -> str:
        """``registry/repository``: ``docker.io/library/python``, ``ghcr.io/o/img``."""
        return f"{self.registry}/{self.repository}"


def _shown(text: str) -> str:
    return repr(text) if len(text) <= _SHOWN else f"{text[:60]!r}… ({len(text)} characters)"


def split_domain(name: str) -> tuple[str, str]:
    """Split a name (without tag and digest) into its domain and path as ``normalize.go`` does.

    The first ``/``-component is a registry host when it is ``localhost``, holds a ``.`` or a
    ``:``, or has upper-case letters (namespaces never do); otherwise the name is on Docker
    Hub, whose single names get the ``library/`` prefix. The domain keeps its case.
    """
    first, slash, rest = name.partition("/")
    if not slash:
        return DOCKER_HUB, _OFFICIAL + name
    if first.lower() in _HUB_ALIASES:
        domain, path = DOCKER_HUB, rest
    elif first == "localhost" or "." in first or ":" in first or first.lower() != first:
        domain, path = first, rest
    else:
        domain, path = DOCKER_HUB, name
    if domain == DOCKER_HUB and "/" not in path:
        path = _OFFICIAL + path
    return domain, path


def _split_suffixes(text: str) -> tuple[str, str | None, str | None]:
    """Split ``name[:tag][@digest]`` at the first ``@`` and the last ``:`` after the last ``/``."""
    name, at, digest = text.partition("@")
    tag: str | None = None
    colon = name.rfind(":")
    if colon > name.rfind("/"):
        name, tag = name[:colon], name[colon + 1 :]
    return name, tag, digest if at else None


def _path_problem(path: str) -> str | None:
    if not path:
        return "repository name must have at least one component"
    for component in path.split("/"):
        if not component:
            return f"repository name {_shown(path)} has an empty path component"
        if _PATH_COMPONENT_RE.fullmatch(component) is None:
            if _PATH_COMPONENT_RE.fullmatch(component.lower()) is not None:
                return f"repository name {_shown(path)} must be lowercase"
            return (
                f"repository path component {_shown(component)} is invalid: lower-case letters "
                "and digits, joined by one '.', one or two '_', or runs of '-'"
            )
    if len(path) > MAX_PATH_LENGTH:
        return f"repository name must not be more than {MAX_PATH_LENGTH} characters"
    return None


def _digest_problem(digest: str) -> str | None:
    if _DIGEST_RE.fullmatch(digest) is None:
        return f"invalid digest format {_shown(digest)}: expected algorithm:hex (sha256:…)"
    algorithm, _, encoded = digest.partition(":")
    length = _DIGEST_LENGTHS.get(algorithm)
    if length is None:
        return f"unsupported digest algorithm {algorithm!r} (sha256, sha384 or sha512)"
    if len(encoded) != length:
        return f"invalid {algorithm} digest length {len(encoded)} (expected {length})"
    if _LOWER_HEX_RE.fullmatch(encoded) is None:
        return f"invalid digest {_shown(digest)}: the hex part must be lower-case"
    return None


def parse_image_reference(text: str) -> ImageReference:
    """Parse ``text`` (``[host[:port]/]path[:tag][@digest]``) as the docker CLI does.

    Follows ``reference.ParseNormalizedNamed`` (distribution/reference ``normalize.go``) and
    the grammar of ``reference.go``: a 64-hex string alone is refused (it is an image id);
    the path's components are lower-case; tags are 1-128 of ``[A-Za-z0-9_.-]`` not starting
    with ``.`` or ``-``; a digest may follow a tag; the path is at most 255 characters.
    ``index.docker.io`` and ``registry-1.docker.io`` normalise to ``docker.io``. Digests follow
    go-digest with the algorithms the docker CLI registers (sha256, sha384, sha512) in
    lower-case hex of their exact length; others are "unsupported", as ``docker pull`` says.

    Raises:
        InvalidImageReference: ``text`` is no valid reference; the message names the part.
    """
    if not text:
        raise InvalidImageReference("repository name must have at least one component")
    if len(text) > MAX_REFERENCE_LENGTH:
        message = f"reference is longer than {MAX_REFERENCE_LENGTH} characters"
        raise InvalidImageReference(message)
    if _IDENTIFIER_RE.fullmatch(text) is not None:
        message = f"invalid repository name ({text}), cannot specify 64-byte hexadecimal strings"
        raise InvalidImageReference(message)
    if any(char.isspace() for char in text):
        raise InvalidImageReference(f"reference {_shown(text)} contains whitespace")
    familiar, tag, digest = _split_suffixes(text)
    if not familiar:
        raise InvalidImageReference(f"reference {_shown(text)} has no repository name")
    domain, path = split_domain(familiar)
    if domain != DOCKER_HUB and _DOMAIN_RE.fullmatch(domain) is None:
        raise InvalidImageReference(f"invalid registry host {_shown(domain)}")
    problem = _path_problem(path)
    if problem is None and tag is not None and _TAG_RE.fullmatch(tag) is None:
        problem = f"invalid tag {_shown(tag)}: 1-128 of A-Z a-z 0-9 _ . -, not starting with . or -"
    if problem is None and digest is not None:
        problem = _digest_problem(digest)
    if problem is not None:
        raise InvalidImageReference(problem)
    return ImageReference(
        registry=domain.lower(), repository=path, tag=tag, digest=digest, familiar=familiar
    )
