"""Never a blank when the job clearly died: the exception it died of, when no rule explains it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ascend_doctor import engine
from ascend_doctor.match import parts, scanner
from tests.conftest import diagnose_json, run_cli

DATASET = (
    "Traceback (most recent call last):\n"
    '  File "/work/train.py", line 88, in <module>\n'
    "    for batch in loader:\n"
    '  File "/work/dataset.py", line 57, in __getitem__\n'
    "    label = self.classes[scene]\n"
    "KeyError: 'outdoor_scene'\n"
)
DIED = "No Ascend cause found; the job died of KeyError: 'outdoor_scene' at dataset.py:57"


def _lines(*lines: str) -> str:
    return "".join(line + "\n" for line in lines)


# Each log shape, and the exception line the verdict must name.
SHAPES = {
    "plain": ("step 10 loss 2.3\n" + DATASET, 7),
    "rank prefixes, other ranks interleaved": (
        "".join(
            f"[rank3]: {line}\n" + (f"[rank{1 + index % 2}]: step 10 loss 2.3\n" if index % 2 else "")
            for index, line in enumerate(DATASET.splitlines())
        ),
        8,
    ),
    "torchrun's failure summary after it": (
        DATASET
        + _lines(
            "Traceback (most recent call last):",
            '  File "/usr/local/bin/torchrun", line 8, in <module>',
            "    sys.exit(main())",
            '  File "/usr/lib/python3.10/site-packages/torch/distributed/launcher/api.py", line 264, in launch',
            "    raise ChildFailedError(",
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
            "============================================================",
            "Root Cause (first observed failure):",
            "[0]:",
            "  rank      : 3 (local_rank: 3)",
            "============================================================",
        ),
        6,
    ),
    "a chained exception: the root is named": (
        DATASET
        + _lines(
            "",
            "During handling of the above exception, another exception occurred:",
            "",
            "Traceback (most recent call last):",
            '  File "/work/train.py", line 90, in <module>',
            "    raise RuntimeError('data loading failed') from None",
            "RuntimeError: data loading failed",
        ),
        6,
    ),
    "a DataLoader worker's original traceback": (
        _lines(
            "Traceback (most recent call last):",
            '  File "/usr/lib/python3.10/site-packages/torch/utils/data/_utils/worker.py", line 308, in loop',
            "    data = fetcher.fetch(index)",
            "KeyError: Caught KeyError in DataLoader worker process 0.",
            "Original Traceback (most recent call last):",
            '  File "/work/dataset.py", line 57, in __getitem__',
            "    label = self.classes[scene]",
            "KeyError: 'outdoor_scene'",
        ),
        8,
    ),
    "MindSpore's C++ call stack after it": (
        DATASET
        + _lines(
            "",
            "----------------------------------------------------",
            "- C++ Call Stack: (For framework developers)",
            "----------------------------------------------------",
            "mindspore/ccsrc/pipeline/jit/ps/action.cc:1234 Execute",
        ),
        6,
    ),
    "an exception ignored at exit after it": (
        DATASET
        + _lines(
            "Exception ignored in: <function Pool.__del__ at 0x7f>",
            "Traceback (most recent call last):",
            '  File "/usr/lib/python3.10/multiprocessing/pool.py", line 268, in __del__',
            "ValueError: I/O operation on closed file",
        ),
        6,
    ),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_the_verdict_names_the_exception_the_job_died_of(tmp_path: Path, shape: str) -> None:
    text, line = SHAPES[shape]
    log = tmp_path / "train.log"
    log.write_text(text)
    report, result = diagnose_json(str(log))
    assert report["verdict"].startswith(DIED + " ("), report["verdict"]
    top = report["findings"][0]
    assert (top["rule_id"], top["category"], top["severity"]) == (
        "python.uncaught-exception",
        "not_ascend",
        "error",
    )
    assert top["evidence"][0]["line"] == line
    assert result.exit_code == 1


def test_the_verdict_in_chinese(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text(DATASET)
    report, _ = diagnose_json("--lang", "zh", str(log))
    assert report["verdict"].startswith(
        "未发现昇腾原因；任务因 KeyError: 'outdoor_scene' 退出，抛出位置 dataset.py:57"
    )


def test_an_npu_runtime_error_no_rule_explains_needs_the_plog(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text(
        _lines(
            "Traceback (most recent call last):",
            '  File "/work/train.py", line 40, in step',
            "    loss.backward()",
            "RuntimeError: npuSynchronizeDevice:torch_npu/csrc/core/npu/NPUStream.cpp:806 NPU error, error code is 0",
        )
    )
    report, result = diagnose_json(str(log))
    top = report["findings"][0]
    assert (top["rule_id"], top["category"]) == ("python.unexplained-npu-error", "needs_more_evidence")
    assert report["verdict"].startswith("The job died of an NPU error whose cause the log does not show: ")
    assert "diagnose its plog too" in report["verdict"]
    assert result.exit_code == 1


def test_a_log_that_ends_on_a_bare_exception_line_names_it(tmp_path: Path) -> None:
    """A pasted excerpt: no traceback, only the line it ended with."""
    log = tmp_path / "excerpt.log"
    log.write_text("loading model\nImportError: libc10.so: cannot open shared object file: No such file\n\n")
    report, _ = diagnose_json(str(log))
    assert report["verdict"].startswith(
        "No Ascend cause found; the job died of ImportError: libc10.so: cannot open shared object file"
    )


ECHO = "[ERROR] 2025-02-28-13:41:57 (PID:88213, Device:0, RankID:-1) ERR99999 UNKNOWN applicaiton exception\n"


def test_torch_npus_echo_of_the_exception_does_not_hide_it(tmp_path: Path) -> None:
    """torch_npu ends every failed run with ERR99999: after a plain Python error it says nothing more."""
    log = tmp_path / "train.log"
    log.write_text(DATASET + ECHO)
    report, _ = diagnose_json(str(log))
    assert report["verdict"].startswith(DIED), report["verdict"]
    assert [f["rule_id"] for f in report["findings"]] == ["python.uncaught-exception"]


def test_the_echo_alone_is_still_reported(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("step 10 loss 2.3\n" + ECHO)
    report, _ = diagnose_json(str(log))
    assert [f["category"] for f in report["findings"]] == ["needs_more_evidence"]


CUT = DATASET.rsplit("KeyError", 1)[0]  # the excerpt ends on the frame's source line


def test_a_log_cut_inside_a_traceback_says_so(tmp_path: Path) -> None:
    log = tmp_path / "excerpt.log"
    log.write_text("step 10 loss 2.3\n" + CUT)
    report, result = diagnose_json(str(log))
    assert report["verdict"].startswith("The log ends inside a traceback (last frame dataset.py:57), ")
    assert [(f["rule_id"], f["category"]) for f in report["findings"]] == [
        ("python.traceback-cut-off", "not_ascend")
    ]
    assert result.exit_code == 1


def test_an_npu_jobs_log_cut_inside_a_traceback_needs_more_evidence(tmp_path: Path) -> None:
    log = tmp_path / "excerpt.log"
    log.write_text("[INFO] torch_npu set device npu:0\n" + CUT)
    report, _ = diagnose_json(str(log))
    assert report["findings"][0]["category"] == "needs_more_evidence"


def test_a_named_exception_is_preferred_to_a_traceback_cut_off_after_it(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text(DATASET + "retrying\n" + CUT)
    report, _ = diagnose_json(str(log))
    assert report["verdict"].startswith(DIED), report["verdict"]


def test_a_warning_that_names_a_cause_outranks_the_exception_it_explains(tmp_path: Path) -> None:
    """MindSpore warns of a CANN it does not fit, then dies at init: the warning is why."""
    log = tmp_path / "run_check.log"
    log.write_text(
        "[WARNING] ME(40211:281473512837136,MainProcess):2022-12-05-14:20:11.201.443 "
        "[mindspore/run_check/_check_version.py:278] MindSpore version 1.8.1 and Ascend AI software package "
        "(Ascend Data Center Solution)version 6.0 does not match, the version of software package expect "
        "one of ['5.1']. Please refer to the match info on: https://www.mindspore.cn/install\n"
        + _lines(
            "Traceback (most recent call last):",
            '  File "<string>", line 1, in <module>',
            "RuntimeError: ascend_device_context.cc:190 InitGe] Ge Initialize failed.",
        )
    )
    report, _ = diagnose_json(str(log))
    top = report["findings"][0]
    assert (top["category"], top["severity"]) == ("version_mismatch", "error")
    assert [f["rule_id"] for f in report["findings"]][-1].startswith("python.un")


def test_a_harmless_warning_does_not_explain_the_exception(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text(
        "[W ToKernelNpu.cpp:41] Warning: Device do not support double dtype now, dtype cast repalce with "
        "float. (function operator())\n" + DATASET
    )
    report, _ = diagnose_json(str(log))
    assert report["verdict"].startswith(DIED), report["verdict"]


def test_a_real_ascend_cause_is_not_outranked_by_the_exception(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("EL0004: [PID: 4821] Failed to allocate memory.\n" + DATASET)
    report, _ = diagnose_json(str(log))
    assert report["findings"][0]["category"] == "device_out_of_memory"
    assert all(not f["rule_id"].startswith("python.un") for f in report["findings"])


def test_an_exception_a_rule_explains_is_not_named_again(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text(
        _lines(
            "Traceback (most recent call last):",
            '  File "/work/train.py", line 40, in step',
            "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 60.97 GiB total capacity)",
        )
    )
    report, _ = diagnose_json(str(log))
    assert [f["category"] for f in report["findings"]] == ["device_out_of_memory"]


def test_a_log_a_rule_calls_a_run_that_did_not_fail_gets_no_exception(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "team.yaml").write_text(
        """rules:
  - id: team.run-finished
    category: no_failure
    severity: info
    title: {en: The run finished, zh: 运行已完成}
    cause: {en: The training loop reached its end., zh: 训练循环已结束。}
    fix: {en: Nothing to fix., zh: 无需修复。}
    patterns: ['Training finished in \\d+ s']
    examples: {match: ['Training finished in 3600 s'], no_match: ['Training started']}
"""
    )
    log = tmp_path / "train.log"
    log.write_text(
        "step 10 loss 2.3\n" + DATASET + "retrying with the next shard\nTraining finished in 3600 s\n"
    )
    report, result = diagnose_json("--rules", str(rules), str(log))
    assert [f["category"] for f in report["findings"]] == ["no_failure"]
    assert result.exit_code == 0


@pytest.mark.parametrize(
    ("fmt", "failure"),
    [
        ("github", "::error "),
        ("junit", "<failure "),
        ("sarif", '"ruleId": "python.uncaught-exception"'),
        ("gitlab", '"check_name": "python.uncaught-exception"'),
        ("markdown", "KeyError: 'outdoor_scene'"),
        ("text", DIED),
    ],
)
def test_every_format_shows_a_failure(tmp_path: Path, fmt: str, failure: str) -> None:
    log = tmp_path / "train.log"
    log.write_text(DATASET)
    result = run_cli("diagnose", "--format", fmt, "--no-color", str(log))
    assert result.exit_code == 1
    assert failure in result.stdout


def test_a_big_log_scanned_in_parts_names_the_same_exception(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The exception's traceback starts in one part and ends in the last, shorter than the tail."""
    log = tmp_path / "train.log"
    steps = "".join(f"step {step} loss 2.3 lr 1e-4 throughput 312.5 samples/s\n" for step in range(40_000))
    log.write_text(steps + DATASET)
    monkeypatch.setattr(engine, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(scanner, "CHUNK", 64 * 1024)
    monkeypatch.setattr(parts, "CHUNK", 64 * 1024)
    monkeypatch.setattr(parts, "PART_BYTES", 64 * 1024)
    assert len(parts.plan(str(log), log.stat().st_size)) > 10
    whole = json.loads(run_cli("diagnose", "--format", "json", "--jobs", "1", str(log)).stdout)
    split = json.loads(run_cli("diagnose", "--format", "json", "--jobs", "2", str(log)).stdout)
    assert split["findings"] == whole["findings"]
    assert whole["verdict"] == f"{DIED} ({log}:40006)"


def test_a_serving_engine_reporting_that_its_worker_failed_is_no_death_of_its_own() -> None:
    log = _lines(
        "(VllmWorker rank=2 pid=4412) [E compiler_depend.ts:389] [Rank 2] Watchdog caught collective operation "
        "timeout: WorkHCCL(SeqNum=918234, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800012 milliseconds "
        "before timing out.",
        "ERROR 05-20 14:32:49 [core.py:398] EngineCore hit an exception: Traceback (most recent call last):",
        'ERROR 05-20 14:32:49 [core.py:398]   File "/vllm/v1/executor/multiproc_executor.py", line 230, in collective_rpc',
        'ERROR 05-20 14:32:49 [core.py:398]     raise RuntimeError("Worker failed") from None',
        "ERROR 05-20 14:32:49 [core.py:398] RuntimeError: Worker failed",
    )
    report, _ = diagnose_json("-", stdin=log)
    assert report["findings"][0]["category"] == "hccl_timeout"
    assert not any(finding["category"] == "not_ascend" for finding in report["findings"])
