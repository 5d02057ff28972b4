"""Loopback fake registry for integration tests and benchmarks (design.md §9).

Start one with ``FakeRegistry()`` (a context manager) or the ``fake_registry`` pytest fixture
from :mod:`.plugin`; run it standalone with ``python -m tests.fake_registry --port 8080``.
"""

from .base import LogEntry, Reply, Request, VirtualHost, http_date
from .crates import Crates, index_path
from .github import GitHub
from .goproxy import GoProxy, decode_path, encode_path
from .npm import Npm
from .oci import Oci
from .pypi import PyPI, normalize
from .registry import DATA_DIR, HOST_NAMES, FakeRegistry

__all__ = [
    "DATA_DIR",
    "HOST_NAMES",
    "Crates",
    "FakeRegistry",
    "GitHub",
    "GoProxy",
    "LogEntry",
    "Npm",
    "Oci",
    "PyPI",
    "Reply",
    "Request",
    "VirtualHost",
    "decode_path",
    "encode_path",
    "http_date",
    "index_path",
    "normalize",
]
