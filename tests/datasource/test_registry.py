from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import patchula.datasource
from patchula.datasource import DATASOURCES
from patchula.datasource.base import Datasource, LazyTimes, SingleDocument
from patchula.versioning import VERSIONINGS


def _folder_modules() -> set[str]:
    folder = Path(patchula.datasource.__file__).parent
    return {info.name for info in pkgutil.iter_modules([str(folder)])} - {"base"}


def test_map_equals_folder() -> None:
    """``DATASOURCES`` registers every module in ``datasource/`` except ``base``, and no other.

    An id with a hyphen (Renovate's ``github-tags``) lives in the module with ``_`` for it.
    """
    assert {i.replace("-", "_") for i in DATASOURCES} == _folder_modules()
    assert {"github-tags", "github-releases"} <= set(DATASOURCES)
    assert {"npm", "pypi"} <= set(DATASOURCES)


def test_id_equals_module_name() -> None:
    """Each datasource's ``id`` is its module's name, and the map holds that module's object."""
    for datasource_id, ds in DATASOURCES.items():
        assert datasource_id == ds.id
        module = importlib.import_module(f"patchula.datasource.{datasource_id.replace('-', '_')}")
        assert module.DATASOURCE is ds
        assert ds.id == module.ID
        assert ds.default_base_url == module.DEFAULT_BASE_URL


def test_every_datasource_satisfies_the_contract() -> None:
    """Every registered datasource names each ability, with a value of the contract's shape."""
    names = set(Datasource.__struct_fields__)
    assert names == {
        "id",
        "default_base_url",
        "default_versioning",
        "get_catalog",
        "single_document",
        "release_times",
        "get_digest",
        "platform_digests",
        "digest_terms",
        "freshness_floor_representations",
        "dependencies",
    }
    for ds in DATASOURCES.values():
        assert isinstance(ds, Datasource)
        assert ds.default_versioning in VERSIONINGS
        assert inspect.iscoroutinefunction(ds.get_catalog)
        assert ds.single_document is None or isinstance(ds.single_document, SingleDocument)
        if ds.release_times is not None:
            assert isinstance(ds.release_times, LazyTimes)
            assert inspect.iscoroutinefunction(ds.release_times.lookup)
        if ds.get_digest is not None:
            assert inspect.iscoroutinefunction(ds.get_digest)
        # Platform manifests only where there are digests to pin (container images).
        if ds.platform_digests is not None:
            assert inspect.iscoroutinefunction(ds.platform_digests)
            assert ds.get_digest is not None
        # Digest words exactly where there are digests.
        assert (ds.digest_terms is None) == (ds.get_digest is None)
        # The dependencies of one version exactly where a registry names them (cache warm).
        if ds.id in {"npm", "pypi", "crates", "goproxy"}:
            assert inspect.iscoroutinefunction(ds.dependencies)
        else:
            assert ds.dependencies is None
        assert isinstance(ds.freshness_floor_representations, tuple)
        assert all(isinstance(r, str) for r in ds.freshness_floor_representations)


def test_declared_abilities() -> None:
    """The abilities each datasource declares, as the scan relies on them."""
    assert {i for i, ds in DATASOURCES.items() if ds.single_document is not None} == {
        "npm",
        "pypi",
        "node",
        "python",
        "go",
    }
    lazy = {i: ds.release_times.for_libyears for i, ds in DATASOURCES.items() if ds.release_times}
    assert lazy == {"crates": False, "goproxy": True, "docker": False, "github-tags": False}
    # The words rows say beside lazily found dates (github-tags names its own per version).
    sources = {
        i: (ds.release_times.source, ds.release_times.catalog_source)
        for i, ds in DATASOURCES.items()
        if ds.release_times
    }
    assert sources == {
        "crates": ("web-api", "index"),
        "goproxy": (None, None),
        "docker": ("last-push", None),
        "github-tags": (None, None),
    }
    assert DATASOURCES["goproxy"].freshness_floor_representations == (
        "goproxy-list-v1",
        "goproxy-latest-raw",
    )
    assert DATASOURCES["docker"].freshness_floor_representations == ("oci-tags-v1",)
    assert {i for i, ds in DATASOURCES.items() if ds.get_digest is not None} == {
        "docker",
        "github-tags",
    }
    terms = {i: ds.digest_terms for i, ds in DATASOURCES.items() if ds.digest_terms}
    assert {i: (t.digest, t.ref, t.catalog_digests) for i, t in terms.items()} == {
        "docker": ("digest", "mutable tag", False),
        "github-tags": ("commit", "branch", True),
    }
    assert {i: ds.default_versioning for i, ds in DATASOURCES.items()} == {
        "npm": "npm",
        "pypi": "pep440",
        "crates": "cargo",
        "goproxy": "go",
        "docker": "docker",
        "github-tags": "docker",
        "github-releases": "docker",
        "github-runners": "docker",
        "node": "mise",
        "python": "mise",
        "go": "mise",
    }


def test_default_base_urls_are_https() -> None:
    """Every datasource names an https default registry without a trailing slash."""
    for ds in DATASOURCES.values():
        assert ds.default_base_url.startswith("https://")
        assert not ds.default_base_url.endswith("/")
    assert DATASOURCES["npm"].default_base_url == "https://registry.npmjs.org"
    assert DATASOURCES["pypi"].default_base_url == "https://pypi.org"
    assert DATASOURCES["docker"].default_base_url == "https://registry-1.docker.io"
    assert DATASOURCES["github-tags"].default_base_url == "https://api.github.com"
    assert DATASOURCES["github-releases"].default_base_url == "https://api.github.com"


def test_no_datasource_is_probed() -> None:
    """No code asks a datasource module whether it has an ability: the contract names them."""
    src = Path(patchula.datasource.__file__).parent.parent
    probes = ("getattr(module", "hasattr(module", "getattr(ds", "hasattr(ds", "DATASOURCES[")
    for path in src.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for line in text.splitlines():
            if "getattr(" in line or "hasattr(" in line:
                assert not any(p in line for p in probes), f"{path}: {line.strip()}"
