"""Configs as data: TOML files with single inheritance (`extends = "parent.toml"`) and deep merge.

An ablation is a small file that extends its parent and overrides a few keys; `load_config` returns
the merged plain dict (with `extends` resolved away and `config_name` set to the file's stem).
"""
from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any, Mapping

CONFIG_DIR = Path(__file__).resolve().parents[2] / "configs"
"""The project's config folder; `load_config("gcnn")` looks here."""


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """`override` wins key by key; nested tables merge, everything else is replaced."""
    merged = copy.deepcopy(dict(base))
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def resolve_config_path(name_or_path: str | Path) -> Path:
    """A path as given if it exists, else `configs/<name>.toml`."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    candidate = CONFIG_DIR / (path.name if path.suffix == ".toml" else f"{path.name}.toml")
    if candidate.is_file():
        return candidate
    known = sorted(p.stem for p in CONFIG_DIR.glob("*.toml"))
    raise FileNotFoundError(f"config {str(name_or_path)!r} not found; known configs: {known}")


def load_config(name_or_path: str | Path, _seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """Load a TOML config, following `extends` chains (cycles are an error naming the chain)."""
    path = resolve_config_path(name_or_path).resolve()
    if path in _seen:
        chain = " → ".join(p.name for p in (*_seen, path))
        raise ValueError(f"config inheritance cycle: {chain}")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{path}: not valid TOML ({error})") from error
    parent = data.pop("extends", None)
    if parent is not None:
        base = load_config(path.parent / parent, (*_seen, path))
        data = deep_merge(base, data)
    data["config_name"] = path.stem
    return data


def all_configs() -> dict[str, dict[str, Any]]:
    """Every config in the project's folder, by name (used by the parametrised model test)."""
    return {p.stem: load_config(p) for p in sorted(CONFIG_DIR.glob("*.toml"))}
