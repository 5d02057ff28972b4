"""Start-up imports only what a command needs (issue 12), checked on ``sys.modules``, untimed."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import patchula.cli
import patchula.datasource
import patchula.manager
import patchula.scan
import patchula.versioning

# Run in a fresh interpreter: the CLI's entry point with these arguments, then the names of
# every module imported, written to the file named by the last argument.
_PROBE = """
import json, sys
out = sys.argv.pop()
sys.argv = ["patchula", *sys.argv[1:]]
from patchula.cli import main
import gc
before = [stats["collections"] for stats in gc.get_stats()]
try:
    main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
collections = [stats["collections"] - n for stats, n in zip(gc.get_stats(), before)]
# The report classes whose validators and serializers were built (pydantic's "complete").
model = sys.modules.get("patchula.report.model")
built = sorted(
    name
    for name, cls in (vars(model) if model else {}).items()
    if isinstance(cls, type)
    and cls.__module__ == "patchula.report.model"
    and getattr(cls, "__pydantic_complete__", False)
)
with open(out, "w") as handle:
    json.dump(
        {"code": code, "modules": sorted(sys.modules), "built": built, "gc": collections}, handle
    )
"""

NETWORK = ("httpx", "httpcore", "h2", "hpack", "hyperframe", "patchula.http.transport")


def _plugins(package: object, *, skip: tuple[str, ...] = ("base",)) -> list[str]:
    folder = Path(package.__file__).parent  # type: ignore[attr-defined]
    return [
        f"{package.__name__}.{p.stem}"  # type: ignore[attr-defined]
        for p in sorted(folder.glob("*.py"))
        if p.stem not in {"__init__", *skip}
    ]


DATASOURCE_MODULES = _plugins(patchula.datasource)
MANAGER_MODULES = _plugins(patchula.manager, skip=("base", "paths"))
VERSIONING_MODULES = _plugins(patchula.versioning)
PLUGINS = (*DATASOURCE_MODULES, *MANAGER_MODULES, *VERSIONING_MODULES)


def _imported(tmp_path: Path, *args: str) -> tuple[int, set[str], str]:
    """Run ``patchula ARGS`` in a new interpreter; its exit code, modules and stdout."""
    code, modules, stdout, _ = _probed(tmp_path, *args)
    return code, modules, stdout


def _probed(tmp_path: Path, *args: str) -> tuple[int, set[str], str, list[str]]:
    """``_imported``, and the report classes whose schemas the run built."""
    found = _probe(tmp_path, *args)
    return found["code"], set(found["modules"]), found["stdout"], found["built"]


def _probe(tmp_path: Path, *args: str) -> dict[str, Any]:
    """What the probe wrote for ``patchula ARGS``, and the ``stdout`` of the run.

    Keys: ``code``, ``modules``, ``built``, ``gc`` (collections per generation during ``main``).
    """
    out = tmp_path / "modules.json"
    home = tmp_path / "home"  # no ~/.npmrc, ~/.netrc or config of the machine's user
    home.mkdir(exist_ok=True)
    # Piped output without a width: the plain table (COLUMNS or a forced TTY would choose rich).
    unset = {"COLUMNS", "FORCE_COLOR", "TTY_COMPATIBLE"}
    env = {k: v for k, v in os.environ.items() if not k.startswith("PATCHULA_") and k not in unset}
    env |= {"HOME": str(home), "NO_COLOR": "1"}
    done = subprocess.run(  # noqa: S603 - our own interpreter and probe
        [sys.executable, "-c", _PROBE, *args, str(out)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(out.read_text())
    found["stdout"] = done.stdout
    return found


def test_the_plugin_lists_are_real() -> None:
    """The probe's module lists name every plugin module (so the checks below can fail)."""
    assert "patchula.datasource.npm" in DATASOURCE_MODULES
    assert len(DATASOURCE_MODULES) == len(patchula.datasource.DATASOURCES)
    assert len(MANAGER_MODULES) == len(patchula.manager.MANAGERS)
    assert len(VERSIONING_MODULES) == len(patchula.versioning.VERSIONINGS)


def test_importing_the_cli_imports_no_command_machinery() -> None:
    """``import patchula.cli`` builds the typer app only: no HTTP, pydantic, rich or plugin."""
    probe = "import sys, patchula.cli; print('\\n'.join(sorted(sys.modules)))"
    done = subprocess.run(  # noqa: S603 - our own interpreter
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    modules = set(done.stdout.split())
    assert "patchula.cli" in modules
    unwanted = {*NETWORK, "pydantic", "rich", "sqlite3", "anyio", *PLUGINS}
    unwanted |= {"patchula.settings", "patchula.scan", "patchula.cache", "patchula.report.model"}
    assert sorted(modules & unwanted) == []


def test_version_imports_no_command_machinery(tmp_path: Path) -> None:
    """``patchula --version`` prints the version; no HTTP, pydantic, rich or plugin is imported."""
    code, modules, stdout = _imported(tmp_path, "--version")
    assert (code, stdout) == (0, "patchula 0.1.0\n")
    unwanted = {*NETWORK, "pydantic", "rich", "sqlite3", *PLUGINS, "patchula.settings"}
    assert sorted(modules & unwanted) == []


@pytest.mark.parametrize("output", ["table", "json"])
def test_a_run_without_manifests_imports_no_http_and_no_plugin(tmp_path: Path, output: str) -> None:
    """A checkout without manifests: the cache is opened and a report made, no plugin imported.

    No HTTP client, datasource, manager or versioning scheme, and no rich: piped output is the
    plain table.
    """
    empty = tmp_path / "empty"
    empty.mkdir()
    cache = tmp_path / "cache.sqlite"
    code, modules, stdout, built = _probed(
        tmp_path, "run", str(empty), "--cache", str(cache), "--format", output
    )
    assert code == 0
    # The table reads the report's fields; only JSON builds its serializers (defer_build).
    assert ("ScanReport" in built) == (output == "json")
    if output == "table":
        assert built == []
    assert cache.is_file()  # the cache was opened (and created): a real run, not a shortcut
    assert ("no dependencies found" in stdout) == (output == "table")
    assert "patchula.scan" in modules
    unwanted = {*NETWORK, *PLUGINS, "rich", "yaml"}
    # Nothing to match or look up, no ~/.netrc or config file to parse (issue 12).
    unwanted |= {"pathspec", "urllib.request", "netrc", "tomllib", "patchula.http.fetcher"}
    # No lookup outcome to record in the cache's lookup tasks.
    unwanted |= {"patchula.warm", "patchula.cache.tasks"}
    if output == "json":
        assert json.loads(stdout)["summary"]["dependencies"] == 0
    assert sorted(modules & unwanted) == []


def test_a_run_with_lookups_imports_what_it_uses(tmp_path: Path) -> None:
    """A run with a package.json imports the npm manager, datasource and scheme and HTTP.

    The registry is unreachable (port 9 on loopback), so the lookup is an error row (exit 3);
    the other ecosystems' plugins stay unimported.
    """
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "package.json").write_text('{"dependencies": {"left-pad": "1.0.0"}}')
    code, modules, _ = _imported(
        tmp_path,
        *("run", str(checkout), "--no-cache", "--format", "json"),
        *("--registry", "npm=http://127.0.0.1:9", "--request-deadline", "5"),
    )
    assert code == 3
    used = {"httpx", "patchula.http.transport", "patchula.http.fetcher", "patchula.datasource.npm"}
    used |= {"patchula.manager.package_json", "patchula.versioning.npm"}
    assert used <= modules
    others = {
        "patchula.datasource.pypi",
        "patchula.datasource.crates",
        "patchula.datasource.goproxy",
    }
    # Discovery asks every manager about every path through manager/paths.py: only the
    # manager whose file was found is imported.
    others |= set(MANAGER_MODULES) - {"patchula.manager.package_json"}
    # Python's and images' parsers are for those managers (packaging compiles its grammar).
    others |= {"packaging.requirements", "packaging.utils", "patchula.imageref"}
    # The default ignore-paths globs name directories (``**/NAME/**``) and there is no
    # .gitignore: matched without pathspec.
    others.add("pathspec")
    assert "patchula.manager.paths" in modules
    assert sorted(modules & others) == []


def test_the_lookup_tasks_are_imported_at_the_first_lookup_outcome(tmp_path: Path) -> None:
    """With a cache, a run's first lookup outcome imports the task recorder, which records it.

    The counterpart of the run without manifests, which never imports it.
    """
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "package.json").write_text('{"dependencies": {"left-pad": "1.0.0"}}')
    cache = tmp_path / "cache.sqlite"
    code, modules, _ = _imported(
        tmp_path,
        *("run", str(checkout), "--cache", str(cache), "--format", "json"),
        *("--registry", "npm=http://127.0.0.1:9", "--request-deadline", "5"),
    )
    assert code == 3
    assert {"patchula.warm", "patchula.cache.tasks"} <= modules
    with contextlib.closing(sqlite3.connect(cache)) as conn:
        rows = conn.execute("SELECT datasource, package, status FROM lookup_tasks").fetchall()
    assert rows == [("npm", "left-pad", "pending")]


def test_a_command_starts_with_the_scans_young_collection_threshold(tmp_path: Path) -> None:
    """The imports of a run without manifests make a few young collections, not dozens.

    With CPython's default threshold (700) they made ~80 young and 7 middle collections. The
    CLI's threshold is the scan's.
    """
    assert patchula.cli.START_GC_YOUNG_THRESHOLD == patchula.scan.GC_YOUNG_THRESHOLD
    empty = tmp_path / "empty"
    empty.mkdir()
    found = _probe(tmp_path, "run", str(empty), "--cache", str(tmp_path / "cache.sqlite"))
    assert found["code"] == 0
    young, middle, _ = found["gc"]
    assert young <= 10
    assert middle <= 1
