"""Offline knowledge besides the rules: the environment variables ascend-doctor can explain."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any, NamedTuple

import yaml

from ascend_doctor.model import Text


class EnvVar(NamedTuple):
    """One environment variable: what it controls, its default and range, when to change it."""

    name: str
    layer: str
    meaning: Text
    default: str
    values: str
    when: Text
    sources: tuple[str, ...]
    aliases: tuple[str, ...] = ()


def _env_var(entry: dict[str, Any]) -> EnvVar:
    return EnvVar(
        name=entry["name"],
        layer=entry.get("layer", ""),
        meaning=Text(**entry["meaning"]),
        default=str(entry.get("default", "")),
        values=str(entry.get("values", "")),
        when=Text(**entry["when"]),
        sources=tuple(entry.get("sources", ())),
        aliases=tuple(entry.get("aliases", ())),
    )


@lru_cache(maxsize=1)
def env_vars() -> dict[str, EnvVar]:
    """Name -> EnvVar, from the packaged knowledge/env_vars.yaml."""
    path = resources.files("ascend_doctor.rulebase").joinpath("knowledge", "env_vars.yaml")
    entries = yaml.safe_load(path.read_text("utf-8"))["env_vars"]
    return {entry["name"]: _env_var(entry) for entry in entries}


@lru_cache(maxsize=1)
def _by_upper_name() -> dict[str, EnvVar]:
    return {name.upper(): var for var in env_vars().values() for name in (var.name, *var.aliases)}


def find_env_var(name: str) -> EnvVar | None:
    """The variable called `name` or aliased so, ignoring case (`hccl_connect_timeout` works)."""
    return _by_upper_name().get(name.strip().upper())


def env_var_names() -> list[str]:
    """Every name `find_env_var` knows, aliases included."""
    return [name for var in env_vars().values() for name in (var.name, *var.aliases)]
