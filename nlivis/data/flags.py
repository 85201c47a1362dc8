"""How an analysis's option is spelled where a person types it: a dataclass field's metadata (`option`), so the
options dataclass is the one declaration that the command line's parser and `--help`, the app's links and the
notebook API all read. The flag's text is read back by the same `type` on the command line and in a link.

It sits in the data layer, below the analyses whose options it describes (`analysis.edit_runs` declares its
`EditOptions` with it, `workflows.specs` the rest)."""
from __future__ import annotations

from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Any, Callable

FLAG = "nlivis.flag"
"""The metadata key of a field's `Flag`."""


class _SameAsField:
    def __repr__(self) -> str:
        return "the field's default"


SAME_AS_FIELD: Any = _SameAsField()


@dataclass(frozen=True)
class Flag:
    """help: what the option does, for `--help` (its default is added there unless the help states it).
    name: the flag ("--max-cases"; default: the field's name, `_` spelled `-`).
    type: how text becomes the value: a callable, or the name of one of the command line's checked number
    types (`nlivis.cli.common.ARGUMENT_TYPES`: "positive_int", "seed", "ig_steps", …); None: the text itself.
    A bool field is a switch: present turns a False default on, or a True default off (then name it `--no-…`).
    choices: the values allowed. required: the command line must give it (the field's default serves the API).
    cli_default: the command line's default where it differs from the API's (text is read by `type`)."""

    help: str
    name: str | None = None
    type: Callable[[str], Any] | str | None = None
    choices: tuple[str, ...] | None = None
    required: bool = False
    cli_default: Any = SAME_AS_FIELD


def option(default: Any, help: str, **flag: Any) -> Any:
    """A dataclass field with `default` and its `Flag` (keyword arguments as `Flag`'s)."""
    return field(default=default, metadata={FLAG: Flag(help, **flag)})


def flag_name(item: Field) -> str:
    """The flag of a field: its `Flag.name`, or `--` and the field's name with `-` for `_`."""
    return item.metadata[FLAG].name or "--" + item.name.replace("_", "-")


def flagged_fields(options: type) -> list[tuple[Field, Flag]]:
    """The fields of an options dataclass that carry a `Flag`, in declaration order (the others keep their
    default wherever a person types options)."""
    return [(item, item.metadata[FLAG]) for item in fields(options) if FLAG in item.metadata]


def default_of(item: Field, flag: Flag) -> Any:
    """What the option is when a person does not give it: `Flag.cli_default`, else the field's default."""
    if flag.cli_default is not SAME_AS_FIELD:
        return flag.cli_default
    return item.default if item.default is not MISSING else None


def comma_separated(text: str) -> tuple[str, ...] | None:
    """A comma-separated list of names (spaces around them dropped, empty ones skipped); None for no text."""
    return tuple(name.strip() for name in text.split(",") if name.strip()) if text else None
