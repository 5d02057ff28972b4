"""Which files each manager reads, by the repository-relative POSIX path alone.

One pure function per manager id, which that manager's module exports as its ``matches``, and
``RULES``: each id's function beside its datasource id. Discovery asks every manager about every
path through ``RULES``, so a scan imports only the managers whose files it found: the other
modules, with their regular expressions and dataclasses, cost about 30 ms at start-up (issue
12). ``tests/manager/test_registry.py`` checks that ``RULES`` names each manager's own
``matches`` and ``DATASOURCE``. Imports nothing of ours.

Names follow Renovate's ``managerFilePatterns`` where the manager says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import NamedTuple

IMAGE_DATASOURCE = "docker"
ACTION_DATASOURCE = "github-tags"

_NPM_LOCKS = frozenset({"package-lock.json", "npm-shrinkwrap.json"})

# Renovate's managerFilePatterns for its dockerfile manager: ``Dockerfile``, ``x.Dockerfile``,
# ``Dockerfile.x``, ``Dockerfile-x``, ``Containerfile`` and ``Containerfile.x``, with a lower- or
# upper-case first letter. ``Dockerfile.dockerignore`` is BuildKit's ignore file of a Dockerfile
# (docs.docker.com/build/concepts/context/#filename-and-location), not a Dockerfile.
_DOCKERFILE = re.compile(
    r"(?:^|/|\.)(?:[Dd]ocker|[Cc]ontainer)file$|(?:^|/)(?:[Dd]ocker|[Cc]ontainer)file[^/]*$"
)
# Renovate's loose ``dockerfile*`` pattern also names source and data files about Dockerfiles
# (``dockerfile.py``, ``Dockerfile.md``, ``dockerfile_test.go``): a file with one of these
# extensions is never a Dockerfile, and reading its ``from x import y`` lines as FROM
# instructions would report errors in a healthy checkout.
_NOT_DOCKERFILE_SUFFIXES = frozenset(
    {
        ".dockerignore", ".py", ".pyi", ".pyc", ".go", ".rs", ".js", ".mjs", ".cjs", ".ts",
        ".tsx", ".jsx", ".java", ".kt", ".rb", ".php", ".c", ".h", ".cc", ".cpp", ".hpp",
        ".cs", ".swift", ".scala", ".md", ".rst", ".adoc", ".html", ".css", ".json", ".yml",
        ".yaml", ".toml", ".xml", ".ini", ".cfg", ".lock", ".sh", ".bash", ".zsh", ".fish",
        ".ps1", ".bat", ".snap", ".png", ".svg", ".gz", ".zip", ".tar",
    }
)  # fmt: skip
_COMPOSE = re.compile(r"(?:^|/)(?:docker-)?compose[^/]*\.ya?ml$")
# Renovate's managerFilePatterns for github-actions: workflows (also Gitea's and Forgejo's
# folders and workflow templates) and ``action.yml`` / ``action.yaml`` anywhere.
_ACTIONS = re.compile(
    r"(?:^|/)(?:workflow-templates|\.(?:github|gitea|forgejo)/(?:workflows|actions))/.+\.ya?ml$"
    r"|(?:^|/)action\.ya?ml$"
)
_MISE_NAME = re.compile(r"\.?mise(?:\.[^/]+)?\.toml")
_MISE_CONFIG_PATHS = re.compile(
    r"(?:^|/)(?:\.config/mise\.toml|\.config/mise/config(?:\.[^/]+)?\.toml|\.mise/config\.toml"
    r"|mise/config\.toml|(?:\.config/mise|\.mise)/conf\.d/[^/]+\.toml)$"
)
_REQUIREMENTS_NAMED = re.compile(
    r"[\w-]*(?:requirements|constraints)[\w-]*(?:\.[\w-]+)?\.(?:txt|pip)", re.ASCII
)
_REQUIREMENTS_IN = re.compile(r"[\w-]+\.in", re.ASCII)
_NOT_REQUIREMENTS_IN = frozenset({"manifest", "makefile", "gnumakefile", "configure"})
_REQUIREMENTS_SUFFIXES = (".txt", ".in")

CARGO_MANIFEST = "Cargo.toml"
TOOL_VERSIONS_FILE = ".tool-versions"
# File name → the tool it pins.
VERSION_FILES = {
    ".nvmrc": "node",
    ".node-version": "node",
    ".python-version": "python",
    ".go-version": "go",
    ".ruby-version": "ruby",
    ".terraform-version": "terraform",
}


def _basename(path: str) -> str:
    return path.rpartition("/")[2]


def _outside_node_modules(path: str, names: frozenset[str] | str) -> bool:
    parts = path.split("/")
    name = parts[-1]
    found = name == names if isinstance(names, str) else name in names
    return found and "node_modules" not in parts[:-1]


def package_json(path: str) -> bool:
    """Return whether ``path`` is a ``package.json`` outside ``node_modules``."""
    return _outside_node_modules(path, "package.json")


def package_lock(path: str) -> bool:
    """Return whether ``path`` is an npm lockfile outside ``node_modules``."""
    return _outside_node_modules(path, _NPM_LOCKS)


def yarn_lock(path: str) -> bool:
    """Return whether ``path`` is a ``yarn.lock`` outside ``node_modules``."""
    return _outside_node_modules(path, "yarn.lock")


def pnpm_lock(path: str) -> bool:
    """Return whether ``path`` is a ``pnpm-lock.yaml`` outside ``node_modules``."""
    return _outside_node_modules(path, "pnpm-lock.yaml")


def bun_lock(path: str) -> bool:
    """Return whether ``path`` is a ``bun.lock`` outside ``node_modules``."""
    return _outside_node_modules(path, "bun.lock")


def requirements_txt(path: str) -> bool:
    """Return whether ``path`` is a pip requirements or constraints file by its name.

    Matches names containing ``requirements`` or ``constraints`` that end in ``.txt`` or
    ``.pip`` (``requirements.txt``, ``requirements-dev.txt``, ``requirements.dev.txt``,
    ``requirements1.txt``, ``dev_requirements.txt``, ``requirements.pip``,
    ``constraints-dev.txt``: Renovate's default pattern, widened), pip-tools inputs ``*.in``
    with a one-part stem except ``MANIFEST.in``, ``Makefile.in`` and ``configure.in``
    (``requirements.in``, ``tools.in``), and any ``.txt``/``.in`` file directly inside a
    ``requirements/`` directory.
    """
    parts = path.split("/")
    basename = parts[-1]
    if _REQUIREMENTS_NAMED.fullmatch(basename) is not None:
        return True
    if _REQUIREMENTS_IN.fullmatch(basename) is not None:
        return basename[: -len(".in")].lower() not in _NOT_REQUIREMENTS_IN
    parent = parts[-2] if len(parts) > 1 else ""
    return parent == "requirements" and basename.endswith(_REQUIREMENTS_SUFFIXES)


_CONSTRAINTS_STEM = re.compile(r"(?:.*[-_.])?constraints(?:[-_.].*)?", re.IGNORECASE)


def is_constraints_name(path: str) -> bool:
    """Return whether ``path`` is named as a pip constraints file.

    ``constraints.txt``, ``constraints-dev.txt``, ``requirements/constraints.in``,
    ``test_constraints.txt``: the word ``constraints`` as a dash, underscore or dot separated
    part of the name without its suffix. The requirements manager reads such a file as a
    constraints file even on its own: pip installs nothing from one, so it gives no rows.
    """
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return _CONSTRAINTS_STEM.fullmatch(stem) is not None


def pyproject(path: str) -> bool:
    """Return whether ``path`` is a ``pyproject.toml``."""
    return _basename(path) == "pyproject.toml"


def hatch_toml(path: str) -> bool:
    """Return whether ``path`` is a ``hatch.toml`` (Hatch's own configuration file)."""
    return _basename(path) == "hatch.toml"


def setup_cfg(path: str) -> bool:
    """Return whether ``path`` is a ``setup.cfg`` (Renovate's setup-cfg pattern)."""
    return _basename(path) == "setup.cfg"


def uv_lock(path: str) -> bool:
    """Return whether ``path`` is a ``uv.lock``."""
    return _basename(path) == "uv.lock"


def poetry_lock(path: str) -> bool:
    """Return whether ``path`` is a ``poetry.lock``."""
    return _basename(path) == "poetry.lock"


def pdm_lock(path: str) -> bool:
    """Return whether ``path`` is a ``pdm.lock``."""
    return _basename(path) == "pdm.lock"


def pipfile(path: str) -> bool:
    """Return whether ``path`` is a ``Pipfile``."""
    return _basename(path) == "Pipfile"


def pipfile_lock(path: str) -> bool:
    """Return whether ``path`` is a ``Pipfile.lock``."""
    return _basename(path) == "Pipfile.lock"


def cargo_toml(path: str) -> bool:
    """Return whether ``path`` is a ``Cargo.toml``."""
    return _basename(path) == CARGO_MANIFEST


def cargo_lock(path: str) -> bool:
    """Return whether ``path`` is a ``Cargo.lock``."""
    return _basename(path) == "Cargo.lock"


def go_mod(path: str) -> bool:
    """Return whether ``path`` is a ``go.mod`` (a ``go.work`` is not a module)."""
    return _basename(path) == "go.mod"


def dockerfile(path: str) -> bool:
    """Return whether ``path`` names a Dockerfile or Containerfile (Renovate's patterns).

    Names with a source-code, documentation, data or archive extension (``dockerfile.py``,
    ``Dockerfile.md``) are left out, although Renovate's pattern names them.
    """
    name = _basename(path)
    suffix = name[name.rfind(".") :].lower() if "." in name else ""
    if suffix in _NOT_DOCKERFILE_SUFFIXES:
        return False
    return _DOCKERFILE.search(path) is not None


def docker_compose(path: str) -> bool:
    """Return whether ``path`` is a compose file by Renovate's name patterns."""
    return _COMPOSE.search(path) is not None


def github_actions(path: str) -> bool:
    """Return whether ``path`` is a workflow or an action metadata file (Renovate's patterns)."""
    return _ACTIONS.search(path) is not None


def mise_toml(path: str) -> bool:
    """Return whether ``path`` is one of the config files mise reads tools from."""
    name = _basename(path)
    # ``mise.plugin.toml`` is a plugin's manifest, not a config (jdx/mise schema/mise.plugin.json).
    if _MISE_NAME.fullmatch(name) is not None and name != "mise.plugin.toml":
        return True
    return _MISE_CONFIG_PATHS.search(path) is not None


def tool_versions(path: str) -> bool:
    """Return whether ``path`` is a ``.tool-versions`` file."""
    return _basename(path) == TOOL_VERSIONS_FILE


def version_file(path: str) -> bool:
    """Return whether ``path`` is one of the version files in ``VERSION_FILES``."""
    return _basename(path) in VERSION_FILES


class PathRule(NamedTuple):
    """A manager as discovery sees it: ``matches(path)`` and its ``datasource`` id."""

    matches: Callable[[str], bool]
    datasource: str


#: Manager id → its path rule, in ``MANAGERS`` order.
RULES: dict[str, PathRule] = {
    "package_json": PathRule(package_json, "npm"),
    "package_lock": PathRule(package_lock, "npm"),
    "yarn_lock": PathRule(yarn_lock, "npm"),
    "pnpm_lock": PathRule(pnpm_lock, "npm"),
    "bun_lock": PathRule(bun_lock, "npm"),
    "requirements_txt": PathRule(requirements_txt, "pypi"),
    "pyproject": PathRule(pyproject, "pypi"),
    "setup_cfg": PathRule(setup_cfg, "pypi"),
    "hatch_toml": PathRule(hatch_toml, "pypi"),
    "uv_lock": PathRule(uv_lock, "pypi"),
    "poetry_lock": PathRule(poetry_lock, "pypi"),
    "pdm_lock": PathRule(pdm_lock, "pypi"),
    "pipfile": PathRule(pipfile, "pypi"),
    "pipfile_lock": PathRule(pipfile_lock, "pypi"),
    "cargo_toml": PathRule(cargo_toml, "crates"),
    "cargo_lock": PathRule(cargo_lock, "crates"),
    "go_mod": PathRule(go_mod, "goproxy"),
    "dockerfile": PathRule(dockerfile, IMAGE_DATASOURCE),
    "docker_compose": PathRule(docker_compose, IMAGE_DATASOURCE),
    "github_actions": PathRule(github_actions, ACTION_DATASOURCE),
    # The datasource most of a tool file's rows use; each row names its own.
    "mise_toml": PathRule(mise_toml, "node"),
    "tool_versions": PathRule(tool_versions, "node"),
    "version_file": PathRule(version_file, "node"),
}


def rules(managers: Iterable[str] | None = None) -> dict[str, PathRule]:
    """``RULES`` narrowed to the ids in ``managers`` (unknown ids ignored; ``None``: all)."""
    if managers is None:
        return RULES
    chosen = set(managers)
    return {key: rule for key, rule in RULES.items() if key in chosen}
