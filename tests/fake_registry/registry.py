"""The fake registry: one virtual host per protocol, each on its own loopback port."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Self

from .base import Handler, VirtualHost
from .crates import Crates
from .docker_hub import DockerHub
from .github import GitHub
from .goproxy import GoProxy
from .npm import Npm
from .oci import Oci
from .pypi import PyPI
from .tools import GoDev, NodeDist, PythonOrg

#: Virtual hosts in port order: standalone ``--port P`` gives ``npm`` P, ``pypi`` P+1, …
HOST_NAMES: Final = (
    "npm",
    "pypi",
    "crates-index",
    "crates-api",
    "goproxy",
    "oci",
    "github",
    "docker-hub",
    "nodejs",
    "python-org",
    "go-dev",
)
#: Bundled fixtures: ``data/{npm,pypi,crates,goproxy,oci,github}/*.json`` (see data/README.md).
DATA_DIR: Final = Path(__file__).parent / "data"


class FakeRegistry:
    """Loopback npm, PyPI, crates.io, Go proxy, OCI, GitHub, Docker Hub and tool-release hosts.

    Sockets are bound at construction (so :meth:`url` works before :meth:`start`); ``port`` 0
    picks free ports, otherwise host *i* of :data:`HOST_NAMES` gets ``port + i``. Fixtures come
    from ``fixtures_dir`` (default :data:`DATA_DIR`); register more with ``registry.npm.add(…)``,
    ``.pypi.add``, ``.crates.add``, ``.goproxy.add``, ``.oci.add``, ``.github.add_repo``,
    ``.docker_hub.add``, ``.nodejs.add``, ``.python_org.add``, ``.go_dev.add`` (tools.py).
    Knobs and statistics live on ``registry.host(name)``.
    """

    def __init__(
        self, fixtures_dir: Path | None = None, *, port: int = 0, latency: float = 0.0
    ) -> None:
        self.hosts: dict[str, VirtualHost] = {}
        try:
            for offset, name in enumerate(HOST_NAMES):
                self.hosts[name] = VirtualHost(name, port + offset if port else 0)
        except OSError:
            self.stop()
            raise
        self.npm = Npm(self.url("npm"))
        self.pypi = PyPI(self.url("pypi"))
        self.crates = Crates(self.url("crates-index"), self.url("crates-api"))
        self.goproxy = GoProxy()
        self.oci = Oci(self.url("oci"))
        self.github = GitHub(self.url("github"))
        self.docker_hub = DockerHub(self.url("docker-hub"))
        self.nodejs, self.python_org, self.go_dev = NodeDist(), PythonOrg(), GoDev()
        handlers: list[Handler] = [self.npm.handle, self.pypi.handle, self.crates.handle_index]
        handlers += [
            self.crates.handle_api,
            self.goproxy.handle,
            self.oci.handle,
            self.github.handle,
            self.docker_hub.handle,
        ]
        handlers += [self.nodejs.handle, self.python_org.handle, self.go_dev.handle]
        for name, handler in zip(HOST_NAMES, handlers, strict=True):
            self.hosts[name].handler = handler
        self.set_latency(latency)
        self.load(DATA_DIR if fixtures_dir is None else fixtures_dir)

    def load(self, root: Path) -> None:
        """Register every fixture under ``root`` (layout and file shapes: data/README.md)."""
        for document in _files(root / "npm"):
            self.npm.add_document(document)
        for document in _files(root / "pypi"):
            self.pypi.add_document(document)
        for spec in _files(root / "crates"):
            self.crates.add(spec.pop("name"), _times(spec.pop("versions")), **spec)
        for spec in _files(root / "goproxy"):
            self.goproxy.add(spec.pop("module"), _times(spec.pop("versions")), **spec)
        for spec in _files(root / "oci"):
            self.oci.add(spec["name"], spec["tags"])
        for spec in _files(root / "github"):
            releases, tags = _times(spec.pop("releases", {})), _times(spec.pop("tags", {}))
            self.github.add_repo(spec.pop("owner"), spec.pop("repo"), releases, tags=tags, **spec)

    def url(self, host: str) -> str:
        """Base URL of a virtual host, e.g. ``http://127.0.0.1:41234`` (no trailing slash)."""
        return self.hosts[host].url

    def urls(self) -> dict[str, str]:
        """Every virtual host's base URL, in :data:`HOST_NAMES` order."""
        return {name: host.url for name, host in self.hosts.items()}

    def host(self, name: str) -> VirtualHost:
        """The virtual host ``name`` (knobs: latency, faults, validators; statistics)."""
        return self.hosts[name]

    def set_latency(self, seconds: float) -> None:
        """Set the per-request latency of every host."""
        for host in self.hosts.values():
            host.latency = seconds

    def reset_stats(self) -> None:
        """Reset the statistics of every host."""
        for host in self.hosts.values():
            host.reset_stats()

    @property
    def errors(self) -> list[str]:
        """Tracebacks of handler crashes on any host (each was answered with a 500)."""
        return [error for host in self.hosts.values() for error in host.errors]

    def start(self) -> Self:
        """Start serving on every host."""
        for host in self.hosts.values():
            host.start()
        return self

    def stop(self) -> None:
        """Stop every host (in parallel) and close its socket."""
        with ThreadPoolExecutor(max_workers=len(self.hosts) or 1) as pool:
            list(pool.map(VirtualHost.stop, self.hosts.values()))

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def _files(folder: Path) -> Iterator[dict[str, Any]]:
    """The parsed ``*.json`` files of ``folder`` in name order (none if it does not exist)."""
    for path in sorted(folder.glob("*.json")):
        yield json.loads(path.read_text(encoding="utf-8"))


def _times(raw: dict[str, str | None]) -> dict[str, Any]:
    """ISO-8601 fixture timestamps → datetimes (null stays None)."""
    return {k: None if v is None else datetime.fromisoformat(v) for k, v in raw.items()}
