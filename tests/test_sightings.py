"""What counts as a sighting of a cause: one finding per cause whatever the severity of the rules
that saw it, and neither the code a traceback quotes nor prose that names a code is the job's own
output (issues 21.5 and 26.1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import FIXTURES, diagnose_json

NCCL_TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/usr/lib/python3.9/site-packages/torch/distributed/distributed_c10d.py", line 1268, in _new_helper\n'
    '    raise RuntimeError("Distributed package doesn\'t have NCCL built in")\n'
    "RuntimeError: Distributed package doesn't have NCCL built in\n"
)
OOM = "EL0004: [PID: 4821] 2024-12-04-10:05:31.002.117 Failed to allocate memory.\n"


def test_a_warning_and_an_error_about_one_backend_are_one_finding() -> None:
    report, _ = diagnose_json(str(FIXTURES / "distributed-nccl-backend.log"))
    backend = [f for f in report["findings"] if f["category"] == "wrong_distributed_backend"]
    assert len(backend) == 1
    assert backend[0]["severity"] == "error"
    assert "distributed.deepspeed-nccl-backend" in backend[0]["also_matched"]
    # The error's line is where the finding is; the DeepSpeed line (a warning rule) follows it.
    assert [evidence["line"] for evidence in backend[0]["evidence"]] == [40, 10]
    assert report["verdict"].endswith("distributed-nccl-backend.log:40)")


@pytest.mark.parametrize("prefix", ["", "[rank2]: "])
def test_the_source_line_a_traceback_quotes_is_not_a_second_sighting(tmp_path: Path, prefix: str) -> None:
    log = tmp_path / "train.log"
    log.write_text("".join(prefix + line + "\n" for line in NCCL_TRACEBACK.splitlines()))
    report, _ = diagnose_json(str(log))
    top = report["findings"][0]
    assert top["category"] == "wrong_distributed_backend"
    assert top["count"] == 1
    assert [evidence["line"] for evidence in top["evidence"]] == [4]


def test_an_exception_line_right_after_a_frame_without_source_is_a_sighting(tmp_path: Path) -> None:
    """Python prints no source line for a frame whose file it cannot read: the next line is the
    exception, not indented, and is what the job printed."""
    log = tmp_path / "train.log"
    log.write_text("".join(line + "\n" for line in NCCL_TRACEBACK.splitlines() if "raise" not in line))
    report, _ = diagnose_json(str(log))
    assert report["findings"][0]["category"] == "wrong_distributed_backend"
    assert report["findings"][0]["evidence"][0]["line"] == 3


PROSE = [
    "Hint: if you see 'EL0004: Failed to allocate memory' lower the batch size",
    "# EL0004 means the device ran out of memory: lower the batch size",
    "> if you see EL0004: Failed to allocate memory, lower the batch size",
    "- `EL0004: Failed to allocate memory`: lower the batch size or use recomputation",
    'echo "EL0004: Failed to allocate memory"',
    "grep -c 'EL0004: Failed to allocate memory' train.log",
    "$ grep 'EL0004: Failed to allocate memory' /var/log/npu/slog/*.log",
    'If training stops with "EL0004: Failed to allocate memory", lower the batch size.',
    "Tip: EL0004: Failed to allocate memory usually means another process holds the card",
    "// EL0004: Failed to allocate memory is raised by the runtime when HBM is exhausted",
    "日志里没看到 EL0004 之类的报错，显存应该是够的",
]


@pytest.mark.parametrize("line", PROSE)
def test_prose_that_names_a_code_is_at_most_a_note(tmp_path: Path, line: str) -> None:
    log = tmp_path / "train.log"
    log.write_text(f"step 10 loss 2.3\n{line}\nstep 20 loss 2.2\n")
    report, result = diagnose_json(str(log))
    assert report["findings"], "the line is still reported, as a note"
    assert {finding["severity"] for finding in report["findings"]} == {"info"}
    assert all(finding["confidence"] <= 0.4 for finding in report["findings"])
    assert report["verdict"] == "No known Ascend failure cause found."
    assert result.exit_code == 0


@pytest.mark.parametrize("line", PROSE[:3])
def test_prose_beside_the_real_error_is_not_a_second_sighting(tmp_path: Path, line: str) -> None:
    log = tmp_path / "train.log"
    log.write_text(f"{line}\nstep 10 loss 2.3\n{OOM}")
    report, result = diagnose_json(str(log))
    top = report["findings"][0]
    assert (top["category"], top["severity"], top["count"]) == ("device_out_of_memory", "error", 1)
    assert top["evidence"][0]["line"] == 3
    assert result.exit_code == 1


REAL_ERROR_LINES = [
    "EL0004: Failed to allocate memory.",
    "# RuntimeError: call aclnnSwiGlu failed, please check if the opp_kernel package is installed",
    "> RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB",
    "RuntimeError: Could not run 'npu::npu_format_cast' with arguments from the 'CPU' backend.",
    "ValueError: Please check whether the environment variable 'ASCEND_OPP_PATH' is set",
    "[ERROR] RUNTIME(4821,python):2024-12-04-10:05:31.002.117 [npu_driver.cc:1235]4821 EL0004 when allocating",
    "运行报错：EL0004: Failed to allocate memory.",
]


@pytest.mark.parametrize("line", REAL_ERROR_LINES)
def test_an_error_line_with_quotes_or_a_heading_mark_is_not_prose(line: str) -> None:
    """The corpus's `# <error>` titles and errors quoted with `>` in an issue are the errors
    themselves, and real messages quote names and say "check if"."""
    from ascend_doctor.read.events import prose

    for start in range(len(line)):
        assert not prose(line, (start, min(start + 6, len(line)))), line[start:]
