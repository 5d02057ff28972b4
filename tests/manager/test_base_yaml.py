"""The YAML reader shared by docker_compose and github_actions (``manager.base.load_yaml``)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from patchula.manager import base
from patchula.manager.base import YamlNode, load_yaml


def _one(text: str) -> YamlNode:
    documents, problem = load_yaml("f.yml", text)
    assert problem is None
    [document] = documents
    return document


def test_nodes_keep_lines_values_and_nulls() -> None:
    """Scalars keep their text and line; plain empty, ``~`` and ``null`` are nulls, quoted not."""
    root = _one("a: 1\nb:\n  - x\n  - ~\n  - 'null'\nc:\nd: null\n")
    assert root.kind == "mapping"
    assert [(k, v.line) for k, v in root.pairs.items()] == [("a", 1), ("b", 3), ("c", 6), ("d", 7)]
    b = root.get("b")
    assert b is not None
    assert [(i.line, i.text()) for i in b.items] == [(3, "x"), (4, None), (5, "null")]
    assert root.pairs["c"].text() is None
    assert root.pairs["a"].text() == "1"


@pytest.mark.parametrize("loader", ["c", "python"])
def test_scalars_keep_where_they_end(loader: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scalar's end line and character column: after a plain value, a closing quote, in flow."""
    if loader == "python":
        monkeypatch.setattr(base, "_yaml_loader", lambda: yaml.SafeLoader)
    root = _one("\ufeffa: x  # c\nb: 'q # r'\nc: {n: \"é\", u: v} # w\nd: >\n  z\n")
    ends = {key: (node.end_line, node.end_column) for key, node in root.pairs.items()}
    assert ends["a"] == (1, 4)
    assert ends["b"] == (2, 10)
    flow = root.pairs["c"]
    assert [(n.end_line, n.end_column) for n in flow.pairs.values()] == [(3, 10), (3, 16)]
    assert (flow.end_line, flow.end_column) == (0, 0)  # only scalars carry an end
    assert ends["d"][0] == 6  # a block scalar ends after its last line


def test_duplicate_keys_last_wins() -> None:
    """A repeated key keeps its last value (and line), as docker compose reads it."""
    root = _one("image: a\nimage: b\n")
    assert (root.pairs["image"].text(), root.pairs["image"].line) == ("b", 2)


def test_merge_keys_and_aliases_share_nodes() -> None:
    """``<<: *base`` merges keys (explicit ones win); an alias shares the anchored node's keys.

    What an alias (or a merge) brings is at the line where it is used.
    """
    root = _one(
        "x-base: &base\n  image: a:1\n  restart: always\n"
        "web:\n  <<: *base\n  image: b:2\nworker: *base\n"
    )
    web = root.pairs["web"]
    assert web.pairs["image"].text() == "b:2"
    assert web.pairs["restart"].text() == "always"
    assert web.pairs["restart"].line == 5  # the ``<<`` line, not the anchor's 3
    assert web.pairs["image"].line == 6
    worker, anchored = root.pairs["worker"], root.pairs["x-base"]
    assert worker.pairs is anchored.pairs  # shared, never copied (alias bombs stay cheap)
    assert (worker.line, anchored.line) == (7, 1)
    image = worker.get("image")
    assert image is not None
    assert (image.text(), image.line, anchored.pairs["image"].line) == ("a:1", 7, 2)


def test_multi_document_files_give_every_document() -> None:
    """Each ``---`` document is its own tree; anchors do not cross documents."""
    documents, problem = load_yaml("f.yml", "a: 1\n---\nb: 2\n")
    assert problem is None
    assert [list(d.pairs) for d in documents] == [["a"], ["b"]]
    documents, problem = load_yaml("f.yml", "a: &x 1\n---\nb: *x\n")
    assert problem is not None
    assert problem.line == 3
    assert "undefined alias" in problem.message


def test_python_tags_construct_nothing() -> None:
    """``!!python/object`` is only a tag: the node is read as data, no object is built."""
    root = _one("image: !!python/object/apply:os.system ['echo hacked']\n")
    assert root.pairs["image"].kind == "sequence"
    assert root.pairs["image"].items[0].text() == "echo hacked"


def test_syntax_errors_are_problems_with_the_line() -> None:
    """A syntax error is one problem with the parser's line."""
    documents, problem = load_yaml("f.yml", "a: 1\nb: [1, 2\nc: 3\n")
    assert documents == []
    assert problem is not None
    assert problem.file == "f.yml"
    assert problem.line == 3
    assert problem.message.startswith("invalid YAML: ")


def test_a_billion_laughs_costs_its_events_only() -> None:
    """Nine levels of ten aliases each (10^9 expanded) build in linear size: aliases are shared."""
    lines = ['a0: &a0 ["lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 10)]
    root = _one("\n".join(lines) + "\n")
    # ``is`` only: a failing ``==`` would print the expanded tree.
    assert root.pairs["a9"].items[0].items is root.pairs["a8"].items


def test_merge_budget_refuses_a_quadratic_merge_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys copied by merges count against the budget; past it the document is refused."""
    monkeypatch.setattr(base, "YAML_BUDGET", 500)
    keys = "\n".join(f"  k{i}: {i}" for i in range(100))
    text = f"base: &b\n{keys}\n" + "".join(f"m{i}:\n  <<: *b\n" for i in range(10))
    _, problem = load_yaml("f.yml", text)
    assert problem is not None
    assert "more than 500 nodes and merged keys" in problem.message


@pytest.mark.parametrize("loader", ["c", "python"])
@pytest.mark.parametrize("text", ["[" * 100_000, "{a: " * 50_000, "- " * 50_000 + "x"])
def test_deep_nesting_is_refused_quickly(
    text: str, loader: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nesting past 1,000 levels is a problem with either parser, never a crash or a long parse."""
    if loader == "python":
        monkeypatch.setattr(base, "_yaml_loader", lambda: yaml.SafeLoader)
    documents, problem = load_yaml("f.yml", text)
    assert documents == []
    assert problem is not None
    assert "nest" in problem.message


def test_nul_characters_are_refused_before_parsing() -> None:
    """NUL characters mean binary content: the shared NUL problem."""
    _, problem = load_yaml("f.yml", "a: 1\n\x00")
    assert problem is not None
    assert problem.message == "file contains NUL characters; not a text manifest"


def test_yaml_is_imported_only_when_a_yaml_file_is_read() -> None:
    """Importing the YAML managers imports no yaml module; extracting a file does."""
    probe = (
        "import sys\n"
        "from patchula.manager import docker_compose, github_actions, dockerfile\n"
        "before = 'yaml' in sys.modules\n"
        "docker_compose.extract('compose.yml', 'services: {}', lambda p: '')\n"
        "print(before, 'yaml' in sys.modules)\n"
    )
    done = subprocess.run(  # noqa: S603 - our own interpreter
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.split() == ["False", "True"]
