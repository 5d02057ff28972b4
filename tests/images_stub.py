"""Stand-ins for the container-image plugins (issue 13), registered for a test by ``register``.

The real ``docker`` datasource, versioning and managers are built on other branches; these
doubles are the smallest that speak the same shapes, so the scan's image handling (digests,
mutable tags, the ``--registry-freshness-secs`` floor, the report) is tested here on its own:

- ``StubDocker``: a datasource whose catalog is ``GET {base}/v2/<repository>/tags/list``
  (stored as ``oci-tags-v1``, the representation the floor covers) and whose digest is
  ``HEAD {base}/v2/<repository>/manifests/<tag>``'s ``Docker-Content-Digest``. Tags carry no
  publish times, as OCI registries give none.
- ``VERSIONING``: tags of dotted numbers (``3.12``, ``1.27.3``); anything else (``latest``) is
  not a version.
- ``MANAGER``: ``FROM image[:tag][@digest]`` lines of a ``Dockerfile``.

Tests named ``…_with_stub_images`` use them; once the real plugins are merged they can be
switched to the fake registry (``tests/fake_registry/oci.py``) without changing what they
assert.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

import pytest

from patchula.datasource import DATASOURCES
from patchula.datasource.base import Datasource, Fetch, MethodFetch, check_status
from patchula.manager import MANAGERS
from patchula.models import (
    Catalog,
    Dependency,
    ExtractResult,
    Release,
    UpdateType,
)
from patchula.versioning import VERSIONINGS

TAGS_REPRESENTATION = "oci-tags-v1"
DIGEST_A = "sha256:" + "a" * 64
DIGEST_B = "sha256:" + "b" * 64
DIGEST_C = "sha256:" + "c" * 64
_VERSION = re.compile(r"[0-9]+(?:\.[0-9]+){0,2}")


def _key(version: str) -> tuple[int, tuple[int, ...]]:
    if _VERSION.fullmatch(version) is None:
        return (0, ())
    return (1, tuple(int(p) for p in version.split(".")))


class StubVersioning:
    """Dotted-number tags; the same number of components is not required (a test double)."""

    ID = "docker"

    def is_valid(self, version: str) -> bool:
        """Whether ``version`` is dotted numbers."""
        return _VERSION.fullmatch(version) is not None

    def is_stable(self, version: str) -> bool:
        """Every valid tag is stable."""
        return self.is_valid(version)

    def sort_key(self, version: str) -> Any:
        """Numeric order; invalid tags sort first."""
        return _key(version)

    def compare(self, a: str, b: str) -> int:
        """-1, 0 or 1."""
        ka, kb = _key(a), _key(b)
        return (ka > kb) - (ka < kb)

    def is_valid_constraint(self, constraint: str) -> bool:
        """A constraint is one tag."""
        return self.is_valid(constraint)

    def exact_pin(self, constraint: str) -> str | None:
        """A version tag pins itself."""
        return constraint if self.is_valid(constraint) else None

    def matches(self, version: str, constraint: str) -> bool:
        """Only the tag itself."""
        return version == constraint

    def max_satisfying(self, versions: Iterable[str], constraint: str) -> str | None:
        """The tag itself, when listed."""
        return constraint if constraint in set(versions) else None

    def update_type(self, current: str, new: str) -> UpdateType | None:
        """The first component that differs."""
        if not (self.is_valid(current) and self.is_valid(new)):
            return None
        a, b = current.split("."), new.split(".")
        kinds: tuple[UpdateType, ...] = ("major", "minor", "patch")
        for index, kind in enumerate(kinds):
            if (a[index : index + 1] or ["0"]) != (b[index : index + 1] or ["0"]):
                return kind
        return None

    def is_compatible(self, current: str, candidate: str) -> bool:
        """Every version tag is a candidate for every other (a test double)."""
        return self.is_valid(current) and self.is_valid(candidate)


VERSIONING = StubVersioning()


def _repository(package_name: str) -> str:
    return package_name.split("/", 1)[1]


class StubDocker:
    """An OCI client of two requests: the tag list (GET) and a tag's digest (HEAD)."""

    def __init__(self) -> None:
        self.datasource = Datasource(
            id="docker",
            default_base_url="https://registry-1.docker.io",
            default_versioning="docker",
            get_catalog=self.get_catalog,
            single_document=None,
            release_times=None,
            get_digest=self.get_digest,
            freshness_floor_representations=(TAGS_REPRESENTATION,),
            dependencies=None,
        )

    async def get_catalog(self, fetch: Fetch, base_url: str, package_name: str) -> Catalog:
        """The tags of ``package_name`` as releases without publish times."""
        url = f"{base_url}/v2/{_repository(package_name)}/tags/list"
        response = await fetch(url, representation=TAGS_REPRESENTATION)
        check_status(response, f"image {package_name!r}")
        tags = json.loads(response.content).get("tags") or []
        valid = [t for t in tags if VERSIONING.is_valid(t)]
        return Catalog(
            datasource="docker",
            package_name=package_name,
            releases=tuple(Release(t, None) for t in tags),
            latest=max(valid, key=VERSIONING.sort_key, default=None),
            fetched_at=response.fetched_at,
            source_url=url,
        )

    async def get_digest(
        self, fetch: Fetch, base_url: str, package_name: str, version: str
    ) -> str | None:
        """``Docker-Content-Digest`` of ``HEAD …/manifests/<tag>``."""
        url = f"{base_url}/v2/{_repository(package_name)}/manifests/{version}"
        response = await cast("MethodFetch", fetch)(url, method="HEAD")
        check_status(response, f"image {package_name}:{version}")
        return response.header("docker-content-digest")


_FROM = re.compile(r"^FROM\s+(?P<ref>\S+)", re.MULTILINE)


class StubDockerfile:
    """``FROM`` lines of a ``Dockerfile``: every one a ``final`` image row (a test double)."""

    ID = "dockerfile"
    DATASOURCE = "docker"
    VERSIONING = "docker"

    def matches(self, path: str) -> bool:
        """``Dockerfile`` anywhere."""
        return path.rsplit("/", 1)[-1] == "Dockerfile"

    def extract(self, path: str, text: str, read: Any) -> ExtractResult:  # noqa: ARG002 - the Manager protocol
        """One dependency per ``FROM``."""
        deps = []
        for found in _FROM.finditer(text):
            ref = found["ref"]
            rest, _, digest = ref.partition("@")
            name, _, tag = rest.partition(":")
            host = "docker.io"
            repository = name if "/" in name else f"library/{name}"
            deps.append(
                Dependency(
                    manager=self.ID,
                    file=path,
                    line=text.count("\n", 0, found.start()) + 1,
                    name=name,
                    package_name=f"{host}/{repository}",
                    datasource="docker",
                    versioning="docker",
                    dep_type="final",
                    declared=ref,
                    constraint=tag or (None if digest else "latest"),
                    digest=digest or None,
                )
            )
        return ExtractResult(dependencies=tuple(deps))


@dataclass
class StubImages:
    """The registered doubles of one test."""

    docker: StubDocker


def register(monkeypatch: pytest.MonkeyPatch) -> StubImages:
    """Register the doubles as ``docker`` (datasource, versioning) and ``dockerfile`` (manager)."""
    docker = StubDocker()
    for registry, ident, plugin in (
        (DATASOURCES, "docker", docker.datasource),
        (VERSIONINGS, "docker", VERSIONING),
        (MANAGERS, "dockerfile", StubDockerfile()),
    ):
        monkeypatch.setitem(registry._modules, ident, __name__)
        monkeypatch.setitem(registry._loaded, ident, plugin)
    return StubImages(docker)
