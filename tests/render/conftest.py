"""Renderer tests start outside GitHub Actions, even when CI runs them inside it."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _not_in_github_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests that want Actions set these themselves; nothing may write the real job summary."""
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
