"""Offline knowledge besides the rules: the environment variables ascend-doctor can explain."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import yaml

from ascend_doctor.model import Text


@dataclass(frozen=True)
class EnvVar:
    """One environment variable: what it controls, its default and range, when to change it."""

    name: str
    layer: str
    meaning: Text
    default: str
    values: str
    when: Text
    sources: tuple[str, ...]


@lru_cache(maxsize=1)
def env_vars() -> dict[str, EnvVar]:
    """Name -> EnvVar, from the packaged knowledge/env_vars.yaml."""
    path = resources.files("ascend_doctor").joinpath("knowledge", "env_vars.yaml")
    if not path.is_file():
        return {}
    entries = yaml.safe_load(path.read_text("utf-8"))["env_vars"]
    result = {}
    for entry in entries:
        result[entry["name"]] = EnvVar(
            name=entry["name"],
            layer=entry.get("layer", ""),
            meaning=Text(**entry["meaning"]),
            default=str(entry.get("default", "")),
            values=str(entry.get("values", "")),
            when=Text(**entry["when"]),
            sources=tuple(entry.get("sources", ())),
        )
    return result
