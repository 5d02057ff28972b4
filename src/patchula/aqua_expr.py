r"""aqua's ``version_filter``: the subset of the expr language its registry entries use.

aqua (and mise's aqua backend) keep a package's tag only when its ``version_filter`` is true
for it (``aquaproj/aqua:pkg/expr/version_filter.go``; ``jdx/mise:src/backend/aqua.rs``,
``version_filter_ok``): ``not (Version startsWith "varcon-")``,
``Version matches "^v\\d+\\.\\d+\\.\\d+"``,
``(not (Version in ["latest", "stable"])) and semver("> 0.4.5")``, or a small program
``let words = ["lsp"]; not any(words, {Version matches #})``. The language is expr-lang
(github.com/expr-lang/expr, "Language Definition"); what is read here:

- literals: strings (``"…"`` with Go escapes, ``'…'``, ```…```), ``true``/``false``, ``nil``,
  integers, arrays ``[a, b]``; names: ``Version`` (the whole tag, prefix included), ``let``
  bindings, ``#`` (the element inside a closure ``{…}``);
- operators, with expr-lang's precedence: ``or``/``||`` < ``and``/``&&`` < ``==`` ``!=``
  ``in`` ``matches`` ``contains`` ``startsWith`` ``endsWith`` (each also as ``not in`` …) <
  unary ``not``/``!``; parentheses;
- functions: ``semver("CONSTRAINTS")`` (the tag against comma-joined ``>=``, ``>``, ``<``,
  ``<=``, ``!=``, ``=`` comparisons, hashicorp/go-version ordering, as aqua's
  ``version_compare.go``), ``semverWithVersion(CONSTRAINTS, VERSION)``,
  ``trimPrefix(S, PREFIX)``, ``any``/``all``/``none``/``one`` (array, closure), ``len``.

``matches`` is a regular expression search (Go RE2 syntax; what the entries use reads the same
in Python's ``re``). ``compile`` raises ``FilterError`` for what is outside this subset, so an
entry patchula cannot read is said to be unread, never guessed; ``FilterError`` from
evaluating one tag (``semver`` on a tag that is no version) drops that tag, as aqua's own
listings do (``err != nil || !f``: skipped); mise keeps such a tag with a warning (shellcheck's
filter guards its ``semver`` from ``latest`` with ``and``, so neither meets one there).
Imports nothing of ours.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import TypeAlias

__all__ = ["Filter", "FilterError", "compile_filter"]


class FilterError(ValueError):
    """An expression outside the subset read here, or one that fails for a given tag."""


# A value of the language: string, bool, int, None, a list, or a closure.
Value: TypeAlias = object
_Env: TypeAlias = dict[str, Value]
_Node: TypeAlias = Callable[[_Env], Value]

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
      | (?P<number>\d+)
      | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
      | (?P<op>==|!=|<=|>=|&&|\|\||[()\[\]{},;#!=<>])
    )""",
    re.VERBOSE,
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": "\0"}
# Binary operators and their expr-lang precedence (parser/operator/operator.go).
_BINARY = {
    "or": 10,
    "||": 10,
    "and": 15,
    "&&": 15,
    "==": 20,
    "!=": 20,
    "<": 20,
    ">": 20,
    "<=": 20,
    ">=": 20,
    "in": 20,
    "matches": 20,
    "contains": 20,
    "startsWith": 20,
    "endsWith": 20,
}
_NEGATABLE = frozenset({"in", "matches", "contains", "startsWith", "endsWith"})
_UNARY_PRECEDENCE = 50


class Filter:
    """A compiled ``version_filter``: ``accepts(tag)`` says whether aqua keeps ``tag``."""

    def __init__(self, source: str, node: _Node) -> None:
        self.source = source
        self._node = node

    def accepts(self, tag: str) -> bool:
        """Whether the expression is true for ``Version = tag``.

        Raises:
            FilterError: the expression fails for this tag (``semver`` of a tag that is no
                version, an operator given the wrong types) or is not a boolean.
        """
        value = self._node({"Version": tag})
        if not isinstance(value, bool):
            msg = f"version_filter {self.source!r} gave {value!r} for {tag!r}, not a boolean"
            raise FilterError(msg)
        return value


@functools.lru_cache(maxsize=256)
def compile_filter(source: str) -> Filter:
    """Parse ``source`` (an aqua ``version_filter``) into a ``Filter``.

    Raises:
        FilterError: ``source`` is not in the subset of the expr language read here (the
            message names what was met).
    """
    tokens = _tokenize(source)
    parser = _Parser(source, tokens)
    node = parser.program()
    return Filter(source, node)


def _tokenize(source: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    position = 0
    text = source.rstrip()
    while position < len(text):
        if text[position:].strip() == "":
            break
        found = _TOKEN.match(text, position)
        if found is None or found.lastgroup is None:
            msg = f"version_filter {source!r}: unexpected {text[position:].strip()[:20]!r}"
            raise FilterError(msg)
        tokens.append((found.lastgroup, found.group(found.lastgroup)))
        position = found.end()
    return tokens


def _string(raw: str) -> str:
    if raw[0] == "`":
        return raw[1:-1]
    body = raw[1:-1]
    out: list[str] = []
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\" and index + 1 < len(body):
            nxt = body[index + 1]
            out.append(_ESCAPES.get(nxt, "\\" + nxt))
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out)


class _Parser:
    """Pratt parser over the tokens; each rule returns a closure over the environment."""

    def __init__(self, source: str, tokens: list[tuple[str, str]]) -> None:
        self.source = source
        self.tokens = tokens
        self.at = 0

    def _fail(self, what: str) -> FilterError:
        return FilterError(f"version_filter {self.source!r}: {what}")

    def peek(self, offset: int = 0) -> tuple[str, str] | None:
        index = self.at + offset
        return self.tokens[index] if index < len(self.tokens) else None

    def take(self, text: str | None = None) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise self._fail("ends too early" if text is None else f"expected {text!r} at the end")
        if text is not None and token[1] != text:
            raise self._fail(f"expected {text!r}, got {token[1]!r}")
        self.at += 1
        return token

    def program(self) -> _Node:
        bindings: list[tuple[str, _Node]] = []
        while self.peek() == ("name", "let"):
            self.take()
            kind, name = self.take()
            if kind != "name":
                raise self._fail(f"let needs a name, got {name!r}")
            self.take("=")
            bindings.append((name, self.expression(0)))
            self.take(";")
        body = self.expression(0)
        if self.peek() is not None:
            raise self._fail(f"unexpected {self.take()[1]!r}")
        if not bindings:
            return body

        def run(env: _Env) -> Value:
            scope = dict(env)
            for name, node in bindings:
                scope[name] = node(scope)
            return body(scope)

        return run

    def expression(self, floor: int) -> _Node:
        left = self.unary()
        while True:
            token = self.peek()
            if token is None or token[0] not in {"name", "op"}:
                return left
            negated = False
            operator = token[1]
            if operator == "not":
                following = self.peek(1)
                if following is None or following[1] not in _NEGATABLE:
                    return left
                negated, operator = True, following[1]
            precedence = _BINARY.get(operator)
            if precedence is None or precedence < floor:
                return left
            self.take()
            if negated:
                self.take()
            right = self.expression(precedence + 1)
            left = _binary(operator, left, right, negated=negated, fail=self._fail)

    def unary(self) -> _Node:
        token = self.peek()
        if token is not None and token[1] in {"not", "!"}:
            self.take()
            operand = self.expression(_UNARY_PRECEDENCE)

            def negate(env: _Env) -> Value:
                return not _bool(operand(env), "not")

            return negate
        return self.primary()

    def primary(self) -> _Node:
        kind, text = self.take()
        if kind == "string":
            value = _string(text)
            return lambda _env: value
        if kind == "number":
            number = int(text)
            return lambda _env: number
        if text == "(":
            inner = self.expression(0)
            self.take(")")
            return inner
        if text == "[":
            items = self._list("]")
            return lambda env: [item(env) for item in items]
        if text == "{":
            body = self.expression(0)
            self.take("}")
            return lambda _env: _Closure(body)
        if text == "#":
            return lambda env: _lookup(env, "#")
        if kind == "name":
            if text in {"true", "false"}:
                flag = text == "true"
                return lambda _env: flag
            if text == "nil":
                return lambda _env: None
            if self.peek() == ("op", "("):
                self.take()
                return _call(text, self._list(")"), self._fail)
            name = text
            return lambda env: _lookup(env, name)
        raise self._fail(f"unexpected {text!r}")

    def _list(self, end: str) -> list[_Node]:
        items: list[_Node] = []
        while self.peek() != ("op", end):
            items.append(self.expression(0))
            if self.peek() == ("op", ","):
                self.take()
            elif self.peek() != ("op", end):
                raise self._fail(f"expected ',' or {end!r}")
        self.take(end)
        return items


class _Closure:
    def __init__(self, body: _Node) -> None:
        self.body = body

    def __call__(self, env: _Env, element: Value) -> bool:
        return _bool(self.body({**env, "#": element}), "a closure")


def _lookup(env: _Env, name: str) -> Value:
    if name not in env:
        msg = f"unknown name {name!r}"
        raise FilterError(msg)
    return env[name]


def _bool(value: Value, where: str) -> bool:
    if not isinstance(value, bool):
        msg = f"{where} needs a boolean, got {value!r}"
        raise FilterError(msg)
    return value


def _text(value: Value, operator: str) -> str:
    if not isinstance(value, str):
        msg = f"{operator} needs strings, got {value!r}"
        raise FilterError(msg)
    return value


@functools.lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        msg = f"matches: bad regular expression {pattern!r}: {exc}"
        raise FilterError(msg) from None


def _binary(
    operator: str,
    left: _Node,
    right: _Node,
    *,
    negated: bool,
    fail: Callable[[str], FilterError],
) -> _Node:
    if operator in {"or", "||"}:
        return lambda env: _bool(left(env), operator) or _bool(right(env), operator)
    if operator in {"and", "&&"}:
        return lambda env: _bool(left(env), operator) and _bool(right(env), operator)
    test = _TESTS.get(operator)
    if test is None:  # pragma: no cover - _BINARY and _TESTS list the same operators
        raise fail(f"operator {operator!r} is not read")

    def run(env: _Env) -> Value:
        result = test(left(env), right(env))
        return not result if negated else result

    return run


def _in(item: Value, container: Value) -> bool:
    if not isinstance(container, list):
        msg = f"in needs an array, got {container!r}"
        raise FilterError(msg)
    return item in container


def _compared(operator: str) -> Callable[[Value, Value], bool]:
    def test(a: Value, b: Value) -> bool:
        if isinstance(a, int) and isinstance(b, int):
            x, y = a, b
            return {"<": x < y, ">": x > y, "<=": x <= y, ">=": x >= y}[operator]
        s, t = _text(a, operator), _text(b, operator)
        return {"<": s < t, ">": s > t, "<=": s <= t, ">=": s >= t}[operator]

    return test


_TESTS: dict[str, Callable[[Value, Value], bool]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": _compared("<"),
    ">": _compared(">"),
    "<=": _compared("<="),
    ">=": _compared(">="),
    "in": _in,
    "matches": lambda a, b: _regex(_text(b, "matches")).search(_text(a, "matches")) is not None,
    "contains": lambda a, b: _text(b, "contains") in _text(a, "contains"),
    "startsWith": lambda a, b: _text(a, "startsWith").startswith(_text(b, "startsWith")),
    "endsWith": lambda a, b: _text(a, "endsWith").endswith(_text(b, "endsWith")),
}


def _call(name: str, args: list[_Node], fail: Callable[[str], FilterError]) -> _Node:
    arity = {"semver": 1, "semverWithVersion": 2, "trimPrefix": 2, "len": 1}
    if name in {"any", "all", "none", "one"}:
        arity[name] = 2
    if name not in arity:
        raise fail(f"function {name!r} is not read")
    if len(args) != arity[name]:
        raise fail(f"{name} takes {arity[name]} arguments, got {len(args)}")
    if name == "semver":
        (constraints,) = args
        return lambda env: semver_satisfies(
            _text(constraints(env), "semver"), _text(_lookup(env, "Version"), "semver")
        )
    if name == "semverWithVersion":
        constraints, version = args
        return lambda env: semver_satisfies(
            _text(constraints(env), name), _text(version(env), name)
        )
    if name == "trimPrefix":
        text, prefix = args
        return lambda env: _text(text(env), name).removeprefix(_text(prefix(env), name))
    if name == "len":
        (value,) = args

        def length(env: _Env) -> Value:
            found = value(env)
            if not isinstance(found, str | list):
                msg = f"len needs a string or an array, got {found!r}"
                raise FilterError(msg)
            return len(found)

        return length
    return _predicate(name, args[0], args[1])


def _predicate(name: str, items: _Node, closure: _Node) -> _Node:
    def run(env: _Env) -> Value:
        values = items(env)
        test = closure(env)
        if not isinstance(values, list) or not isinstance(test, _Closure):
            msg = f"{name} needs an array and a closure {{…}}"
            raise FilterError(msg)
        hits = sum(1 for value in values if test(env, value))
        if name == "any":
            return hits > 0
        if name == "all":
            return hits == len(values)
        if name == "none":
            return hits == 0
        return hits == 1

    return run


# hashicorp/go-version: ``v`` optional, numeric segments, ``-prerelease``, ``+metadata``.
_GO_VERSION = re.compile(
    r"v?(?P<segments>\d+(?:\.\d+)*)"
    r"(?:-(?P<pre>[0-9A-Za-z.-]+)|(?P<bare>[A-Za-z][0-9A-Za-z.-]*))?"
    r"(?:\+(?P<meta>[0-9A-Za-z.-]+))?"
)
_OPERATORS = (">=", "<=", "!=", ">", "<", "=")


def _go_version(text: str) -> tuple[tuple[int, ...], str]:
    found = _GO_VERSION.fullmatch(text.strip())
    if found is None:
        msg = f"{text!r} is not a version"
        raise FilterError(msg)
    segments = tuple(int(part) for part in found["segments"].split("."))
    return segments, found["pre"] or found["bare"] or ""


def _compare_pre(a: str, b: str) -> int:
    if a == b:
        return 0
    if not a:
        return 1  # a release is newer than its prereleases
    if not b:
        return -1
    for x, y in zip(a.split("."), b.split("."), strict=False):
        if x == y:
            continue
        if x.isdigit() and y.isdigit():
            return -1 if int(x) < int(y) else 1
        if x.isdigit() != y.isdigit():
            return -1 if x.isdigit() else 1
        return -1 if x < y else 1
    return (len(a.split(".")) > len(b.split("."))) - (len(a.split(".")) < len(b.split(".")))


def _compare(a: tuple[tuple[int, ...], str], b: tuple[tuple[int, ...], str]) -> int:
    width = max(len(a[0]), len(b[0]))
    x = a[0] + (0,) * (width - len(a[0]))
    y = b[0] + (0,) * (width - len(b[0]))
    if x != y:
        return -1 if x < y else 1
    return _compare_pre(a[1], b[1])


def semver_satisfies(constraints: str, version: str) -> bool:
    """Whether ``version`` meets every comma-joined comparison of ``constraints``.

    As aqua's ``semver``: each part is ``>=``, ``<=``, ``!=``, ``>``, ``<`` or ``=`` and a
    version, compared in hashicorp/go-version order (a ``v`` optional, missing segments 0, a
    prerelease before its release); a 40-hex commit is never satisfied.

    Raises:
        FilterError: ``version`` or a constraint's version is not a version, or a part has no
            operator.
    """
    if re.fullmatch(r"[0-9a-f]{40}", version):
        return False
    have = _go_version(version)
    for part in (p.strip() for p in constraints.strip().split(",")):
        operator = next((op for op in _OPERATORS if part.startswith(op)), None)
        if operator is None:
            msg = f"semver: {part!r} has no operator (one of >=, >, <, <=, !=, =)"
            raise FilterError(msg)
        order = _compare(have, _go_version(part[len(operator) :]))
        ok = {
            ">=": order >= 0,
            "<=": order <= 0,
            "!=": order != 0,
            ">": order > 0,
            "<": order < 0,
            "=": order == 0,
        }[operator]
        if not ok:
            return False
    return True


def keeps(filter_source: str | None, tags: Sequence[str]) -> list[bool]:
    """For each of ``tags``, whether the ``version_filter`` ``filter_source`` keeps it.

    ``None`` keeps all. A tag the expression fails for is dropped, as aqua skips it.

    Raises:
        FilterError: ``filter_source`` does not compile.
    """
    if filter_source is None:
        return [True] * len(tags)
    compiled = compile_filter(filter_source)
    kept: list[bool] = []
    for tag in tags:
        try:
            kept.append(compiled.accepts(tag))
        except FilterError:
            kept.append(False)
    return kept
