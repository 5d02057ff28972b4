"""Developer sessions: tests, lint, typecheck, bench."""

import nox

nox.options.sessions = ["tests", "lint", "typecheck"]
nox.options.default_venv_backend = "venv"


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite (no network; the `live` marker is deselected)."""
    session.install("-e", ".[test]")
    session.run("pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """Run ruff's linter and format check."""
    session.install("-e", ".[lint]")
    session.run("ruff", "check", "src", "tests", "benchmarks", "noxfile.py")
    session.run("ruff", "format", "--check", "src", "tests", "benchmarks", "noxfile.py")


@nox.session
def typecheck(session: nox.Session) -> None:
    """Run mypy in strict mode over src and tests."""
    session.install("-e", ".[typecheck]")
    session.run("mypy")


@nox.session
def bench(session: nox.Session) -> None:
    """Run the benchmarks (``nox -s bench -- NAME`` runs one); each prints ratios of one run."""
    session.install("-e", ".[test]")
    session.run("python", "-m", "benchmarks", *session.posargs)
