"""Help text of command-line arguments in click's own notation.

typer shows an argument as its metavar followed by its Python type (``TARGET <list[str]>``,
``NAME <str>``), which reads as if the type were part of what to type. ``ArgumentsCommand``
shows each argument as the usage line does, POSIX-style: ``NAME`` (required), ``[NAME]``
(optional), ``[TARGET]...`` (optional, repeatable), ``REPORT...`` (required, repeatable).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from typer.core import TyperArgument, TyperCommand

if TYPE_CHECKING:
    from typer._click import Context as ClickContext

__all__ = ["ArgumentsCommand", "argument_label"]


def argument_label(name: str, *, required: bool, repeatable: bool) -> str:
    """``name`` as a usage line writes it: ``[...]`` when optional, ``...`` when repeatable."""
    label = name if required else f"[{name}]"
    return f"{label}..." if repeatable else label


class _Argument(TyperArgument):
    """A ``TyperArgument`` whose help row is its usage label, without typer's type suffix."""

    def get_help_record(self, ctx: ClickContext) -> tuple[str, str] | None:
        record = super().get_help_record(ctx)
        if record is None:
            return None
        name = self.metavar or (self.name or "").upper()
        return argument_label(name, required=self.required, repeatable=self.nargs != 1), record[1]


class ArgumentsCommand(TyperCommand):
    """A typer command whose argument help rows read ``[TARGET]...``, not ``TARGET <list[str]>``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # noqa: ANN401 - click's signature
        super().__init__(*args, **kwargs)
        for param in self.params:
            if type(param) is TyperArgument:
                # Same fields, one method more: only the help row changes.
                param.__class__ = _Argument
