"""What a check says: its id, status, what it saw, and, when not ok, the fix and the exports."""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple

from ascend_doctor.model import EnvRemedy, Report, Text

NO_TEXT = Text("", "")


class Status(str, Enum):
    """A check's outcome; `skipped` says why in `why`."""

    OK = "ok"
    WARNING = "warning"
    ERROR = "error"
    SKIPPED = "skipped"


class CheckResult(NamedTuple):
    """One check. `saw` is what was read on the machine (versions, paths), as data, untranslated;
    `title` says the outcome, `why` the reason it matters (or why the check was skipped)."""

    id: str
    status: Status
    title: Text
    saw: str = ""
    why: Text = NO_TEXT
    fix: Text = NO_TEXT
    env: tuple[EnvRemedy, ...] = ()


class CheckReport(NamedTuple):
    """Every check in run order; `probe`: the diagnose engine's report on the `--deep` probe's output."""

    results: tuple[CheckResult, ...]
    ascend_found: bool
    probe: Report | None = None
    hints: tuple[Text, ...] = ()  # what to install, when nothing of Ascend was found
    tool_version: str = ""
    lang: str = "en"

    def count(self, status: Status) -> int:
        return sum(1 for result in self.results if result.status is status)

    @property
    def failed(self) -> bool:
        """An error-level check failed (or nothing of Ascend is there to check)."""
        return not self.ascend_found or self.count(Status.ERROR) > 0


def ok(check_id: str, title: Text, saw: str = "") -> CheckResult:
    return CheckResult(check_id, Status.OK, title, saw)


def skipped(check_id: str, title: Text, why: Text, saw: str = "") -> CheckResult:
    return CheckResult(check_id, Status.SKIPPED, title, saw, why)
