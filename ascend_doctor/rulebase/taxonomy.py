"""The cause categories every rule is classified into (a copy of shared/taxonomy.yaml)."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

import yaml


@lru_cache(maxsize=1)
def categories() -> dict[str, str]:
    """Category id -> one-line meaning, in file order."""
    text = resources.files("ascend_doctor.rulebase").joinpath("taxonomy.yaml").read_text("utf-8")
    return dict(yaml.safe_load(text)["categories"])
