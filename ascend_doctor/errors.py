"""Exit codes and the errors that end a run with one clear line instead of a traceback."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes; documented in the README."""

    CLEAN = 0
    FOUND = 1
    ERROR = 2
    COMMAND_NOT_EXECUTABLE = 126  # `run`: as a shell says it
    COMMAND_NOT_FOUND = 127
    INTERRUPTED = 130


class AscendDoctorError(Exception):
    """An error the user can act on; printed as one `ascend-doctor: error: ...` line."""

    exit_code = ExitCode.ERROR


class ConfigError(AscendDoctorError):
    """Bad flags, environment or configuration file."""


class RuleError(AscendDoctorError):
    """A rule file that cannot be loaded: bad YAML, unknown key, bad regex, duplicate id."""

    def __init__(self, path: str, line: int, message: str, rule_id: str = "") -> None:
        where = f"{path}:{line}" if line else path
        rule = f" rule {rule_id}:" if rule_id else ""
        super().__init__(f"{where}:{rule} {message}")
        self.path = path
        self.line = line
        self.rule_id = rule_id


class RuleErrors(AscendDoctorError):
    """Every problem found in the rule files, one `file:line: rule ID: problem` line each, as a
    compiler lists all its errors instead of stopping at the first."""

    def __init__(self, problems: list[RuleError]) -> None:
        lines = [str(problem) for problem in problems]
        if len(problems) > 1:
            files = len({problem.path for problem in problems})
            lines.append(f"{len(problems)} problems in {files} rule file{'s' if files > 1 else ''}")
        super().__init__("\n".join(lines))
        self.problems = tuple(problems)


class InputError(AscendDoctorError):
    """An input that cannot be diagnosed at all (for example every path is missing)."""


class CommandError(AscendDoctorError):
    """`run` could not start its command: not found (127) or not executable (126), as in a shell."""

    def __init__(self, message: str, exit_code: ExitCode) -> None:
        super().__init__(message)
        self.exit_code = exit_code
