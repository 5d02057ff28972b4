"""``patchula run`` on a Go module against the fake Go module proxy."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from typer.testing import CliRunner

from patchula.cli import app
from tests.fake_registry import FakeRegistry

OLD = datetime(2025, 1, 1, tzinfo=UTC)

GO_MOD = """module example.com/app

go 1.22

require (
\tgithub.com/BurntSushi/toml v1.3.0
\tgolang.org/x/text v0.14.0 // indirect
\texample.com/pseudo v0.0.0-20240101000000-abcdefabcdef
)

replace example.com/local => ../local
"""


def test_go_module_end_to_end(fake_registry: FakeRegistry, tmp_path: Path) -> None:
    """Requires are looked up on the proxy: retracted versions skipped, pseudo-versions compared."""
    fake_registry.goproxy.add(
        "github.com/BurntSushi/toml",
        {"v1.3.0": OLD, "v1.3.2": OLD, "v1.4.0": OLD},
        retracted={"v1.4.0"},
    )
    fake_registry.goproxy.add("golang.org/x/text", {"v0.14.0": OLD, "v0.21.0": OLD})
    fake_registry.goproxy.add("example.com/pseudo", {"v0.1.0": OLD})
    (tmp_path / "go.mod").write_text(GO_MOD)
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(tmp_path),
            "--format",
            "json",
            "--registry",
            f"goproxy={fake_registry.url('goproxy')}",
        ],
        catch_exceptions=False,
    )
    report = json.loads(result.stdout)
    rows = {d["name"]: d for d in report["repositories"][0]["dependencies"]}
    toml = rows["github.com/BurntSushi/toml"]
    assert (toml["current"], toml["latest"], toml["eligible"], toml["updateType"]) == (
        "v1.3.0",
        "v1.3.2",
        "v1.3.2",
        "patch",
    )
    text = rows["golang.org/x/text"]
    assert (text["depType"], text["eligible"], text["updateType"]) == (
        "indirect",
        "v0.21.0",
        "minor",
    )
    pseudo = rows["example.com/pseudo"]
    assert (pseudo["status"], pseudo["eligible"]) == ("outdated", "v0.1.0")
    assert rows["go"]["status"] == "skipped"
    assert result.exit_code == 0
    routes = fake_registry.host("goproxy").requests_by_route
    # list, @latest and .mod for each module; .info only for the dates libyears needs
    assert sorted(r for r in routes if r.endswith(".info")) == [
        "GET /github.com/!burnt!sushi/toml/@v/v1.3.0.info",
        "GET /github.com/!burnt!sushi/toml/@v/v1.3.2.info",  # @latest named the retracted v1.4.0
        "GET /golang.org/x/text/@v/v0.14.0.info",
    ]
    assert fake_registry.host("goproxy").requests == 15  # and a /v2 probe per module
    assert toml["libyears"] == 0.0
