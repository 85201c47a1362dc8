"""Typed options from plain data: a TOML table of a config, or the model options a checkpoint's config.json
records. A settings dataclass declares every key and, through its default, the key's type; anything else
in the data is a `ConfigError` naming the table and key (and, once `located`, the file).

This sits in the data layer, below every stage that reads options (features, models, training), so the
one set of type rules serves the `[model]`, `[features]` and `[training]` tables alike.
"""
from __future__ import annotations

import math
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any, Mapping, Sequence

from nlivis.data.records import InputError


class ConfigError(InputError):
    """An option that cannot be used: unknown, of the wrong type or out of range. `table` ("[model]") and
    `key` say which (None where the whole table or file is at fault)."""

    def __init__(self, message: str, table: str | None = None, key: str | None = None, path: str | None = None):
        super().__init__(f"{path}: {message}" if path else message, path)
        self.table = table
        self.key = key
        self.bare_message = message

    def located(self, path: str | Path) -> "ConfigError":
        """The same error, its message prefixed with the file it came from."""
        return ConfigError(self.bare_message, self.table, self.key, str(path))


def type_name(default: Any) -> str:
    return {bool: "true or false", int: "an integer", float: "a number", str: "a string"}.get(type(default),
                                                                                               type(default).__name__)


def shown_value(value: Any) -> str:
    """A value as a message shows it (cut, so a 10,000-item list does not fill the terminal)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def typed_options(cls: type, values: Any, table: str) -> dict[str, Any]:
    """`values` checked against the fields of the dataclass `cls`: every key known, every value of its
    default's type (an integer is accepted for a float, and an integral float such as JSON's 300.0 for an
    integer), every number finite. Returns the converted values; problems raise `ConfigError`."""
    if not isinstance(values, Mapping):
        raise ConfigError(f"{table} must be a table of options, got {shown_value(values)}", table)
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(str(key) for key in set(values) - set(known))
    if unknown:
        raise ConfigError(f"{table}: unknown key(s) {unknown}; known keys: {sorted(known)}", table, unknown[0])
    converted: dict[str, Any] = {}
    for key, value in values.items():
        default = known[key].default
        if default is MISSING:  # a field without a default takes any value its class checks itself
            converted[key] = value
            continue
        converted[key] = typed_value(default, value, table, key)
    return converted


def typed_value(default: Any, value: Any, table: str, key: str) -> Any:
    """`value` as the type of `default`, or a `ConfigError` naming table and key."""
    wrong = ConfigError(f"{table} {key}: expected {type_name(default)}, got {shown_value(value)}", table, key)
    if isinstance(default, bool) != isinstance(value, bool):
        raise wrong
    if isinstance(default, float) and isinstance(value, int):
        try:
            value = float(value)
        except OverflowError:  # an integer beyond float range (JSON allows any length)
            raise ConfigError(f"{table} {key}: {shown_value(value)} is beyond the range of a number", table, key) from None
    if isinstance(default, int) and not isinstance(default, bool) and isinstance(value, float) and value.is_integer():
        value = int(value)
    if type(value) is not type(default):
        raise wrong
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{table} {key}: must be a finite number, got {value}", table, key)
    return value


# ------------------------------------------------------------------ numbers given on the command line
# Each returns None for a usable value, else one plain sentence naming the option, for the CLI to print
# as its one-line error (exit code 2) before anything runs or is written.

MAX_EPOCHS = 1_000_000
"""More passes than any run makes; beyond it (1e308 epochs) the trainer's step count overflows."""
SEED_RANGE = (0, 2 ** 32 - 1)
"""Seeds numpy's legacy generator accepts; the trainer's derived seeds (seed × 100,003 + epoch) then stay
within torch's 64-bit range (`--seed 2**70` overflowed torch.manual_seed)."""
MAX_INTEGRATED_GRADIENTS_STEPS = 10_000
"""Explicit integrated-gradients steps: 12.5 × the adaptive default's ceiling of 800. Captum keeps the
Gauss–Legendre points and weights of all steps in memory (100,000,000 steps took 1.6 GB, then a MemoryError)
and evaluates pairs × steps rows."""


def epochs_problem(value: float, option: str = "--epochs") -> str | None:
    """`--epochs` (or [training] epochs): a finite number above 0, at most `MAX_EPOCHS`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return f"{option} must be a finite number of epochs above 0; got {shown_value(value)}"
    if not 0 < value <= MAX_EPOCHS:
        return f"{option} must be above 0 and at most {MAX_EPOCHS:,}; got {value:g}"
    return None


MAX_AUGMENT_RATIO = 20.0
"""Augmented pairs per training pair, at most: twenty times the data is far past where edits stop adding."""


def augment_ratio_problem(value: float, option: str = "--augment-ratio") -> str | None:
    """`--augment-ratio`: a finite number above 0, at most `MAX_AUGMENT_RATIO`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return f"{option} must be a finite number above 0; got {shown_value(value)}"
    if not 0 < value <= MAX_AUGMENT_RATIO:
        return (f"{option} must be above 0 and at most {MAX_AUGMENT_RATIO:g} (augmented pairs per training pair); "
                f"got {value:g}")
    return None


def exclusive_twins_problem(kinds: Sequence[str], negated_share: float) -> str | None:
    """Why exclusive twins (`training.augment.EXCLUSIVE_TWINS`) cannot be drawn with these kinds and negated share, or None."""
    if not negated_share:
        return ("exclusive twins (--augment-exclusive-twins) are drawn only with a negated share above 0 "
                "(--augment-negated-share)")
    if "exclusive" not in kinds:
        return "exclusive twins (--augment-exclusive-twins) need the exclusive kind in --augment"
    return None


def share_problem(value: float, option: str) -> str | None:
    """A share: a finite number from 0 to 1."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return f"{option} must be a number from 0 to 1; got {shown_value(value)}"
    if not 0 <= value <= 1:
        return f"{option} must be from 0 to 1 (a share of each label's augmented pairs); got {value:g}"
    return None


def seed_problem(value: int, option: str = "--seed") -> str | None:
    """`--seed`: an integer from 0 to 2**32 − 1."""
    low, high = SEED_RANGE
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        return f"{option} must be an integer from {low} to {high:,} (the seeds numpy and torch accept); got {shown_value(value)}"
    return None


def integrated_gradients_steps_problem(value: int | None, option: str = "--steps") -> str | None:
    """`explain --steps` / `faithfulness --steps`: None (adaptive) or an integer from 1 to
    `MAX_INTEGRATED_GRADIENTS_STEPS`."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_INTEGRATED_GRADIENTS_STEPS:
        return (f"{option} must be an integer from 1 to {MAX_INTEGRATED_GRADIENTS_STEPS:,} integrated-gradients steps "
                f"(leave it out for the adaptive 50 to 800); got {shown_value(value)}")
    return None


def count_problem(value: int | None, option: str, minimum: int = 1, maximum: int | None = None) -> str | None:
    """A count such as `--max-steps`, `--sample` or `--threads`: None (the default) or an integer within
    [minimum, maximum]."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum or (maximum is not None and value > maximum):
        bound = f"from {minimum:,} to {maximum:,}" if maximum is not None else f"of at least {minimum:,}"
        return f"{option} must be an integer {bound}; got {shown_value(value)}"
    return None
