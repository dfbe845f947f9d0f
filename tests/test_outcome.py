"""A run that finished: its harmless warnings are no failure, what it survived is no death, and a
line saying it started is no verdict beside the error that ended it."""

from __future__ import annotations

from tests.conftest import diagnose_json

FALLBACK = (
    "[W VariableFallbackKernel.cpp:51] Warning: CAUTION: The operator 'aten::isin.Tensor_Tensor_out' is not "
    "currently supported on the NPU backend and will fall back to run on the CPU. This may have performance "
    "implications. (function npu_cpu_fallback)"
)
FINISHED = "Training completed. Do not forget to share your model on huggingface.co/models =)"
SERVING = 'INFO:     127.0.0.1:52110 - "POST /v1/chat/completions HTTP/1.1" 200 OK'
OOM = "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 60.97 GiB total capacity)"
TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/work/dataset.py", line 57, in __getitem__\n'
    "    label = self.classes[scene]\n"
    "KeyError: 'outdoor_scene'"
)


def _log(*lines: str) -> str:
    return "".join(line + "\n" for line in lines)


def _ids(report: dict) -> list[str]:
    return [finding["rule_id"] for finding in report["findings"]]


def test_finished_run_leads_and_its_fallback_warning_folds_into_it() -> None:
    report, result = diagnose_json("-", stdin=_log("step 1 loss 2.1", FALLBACK, "step 90 loss 0.4", FINISHED))
    assert _ids(report) == ["outcome.training-finished"]
    finding = report["findings"][0]
    assert finding["category"] == "no_failure"
    assert "operators.cpu-fallback-warning" in finding["also_matched"]
    assert {evidence["line"] for evidence in finding["evidence"]} == {2, 4}
    assert finding["severity"] == "warning"  # the warning it carries still fails `--fail-on warning`
    assert result.exit_code == 0


def test_server_that_answered_and_then_failed_is_a_failure() -> None:
    report, result = diagnose_json("-", stdin=_log("INFO:     Application startup complete.", SERVING, OOM))
    assert report["findings"][0]["category"] == "device_out_of_memory"
    assert not any(finding["category"] == "no_failure" for finding in report["findings"])
    assert result.exit_code == 1


def test_error_the_run_survived_folds_into_the_finished_run_as_a_warning() -> None:
    report, result = diagnose_json("-", stdin=_log(OOM, "retrying with a smaller micro batch", FINISHED))
    assert [finding["category"] for finding in report["findings"]] == ["no_failure"]
    finding = report["findings"][0]
    assert finding["also_matched"] == ["memory.npu-out-of-memory"]
    assert 1 in {evidence["line"] for evidence in finding["evidence"]}
    assert finding["severity"] == "warning"  # it did not fail the run, but `--fail-on warning` sees it
    assert result.exit_code == 0


def test_exception_logged_before_the_run_finished_is_not_what_it_died_of() -> None:
    report, _result = diagnose_json(
        "-", stdin=_log("step 1 loss 2.1", TRACEBACK, "step 2 loss 2.0", FINISHED)
    )
    assert _ids(report) == ["outcome.training-finished"]
    report, _result = diagnose_json("-", stdin=_log(FINISHED, TRACEBACK))
    assert _ids(report) == ["python.uncaught-exception"]


TEARDOWN = (
    "[ERROR] RUNTIME(110342,python3):2023-05-17-08:14:20.771.140 [api_c.cc:249]110342 rtDeviceReset:ErrCode=507000, "
    "desc=[internal error], InnerCode=0x7000000",
    "terminate called after throwing an instance of 'c10::Error'",
    "  what():  NPU error: the device has been reset, error code is 507000",
)


def test_errors_after_training_finished_are_exit_noise() -> None:
    report, result = diagnose_json("-", stdin=_log("step 90 loss 0.4", FINISHED, *TEARDOWN))
    top = report["findings"][0]
    assert (top["rule_id"], top["category"]) == ("outcome.errors-after-finish", "unclean_shutdown_noise")
    assert top["evidence"][0]["line"] == 3
    assert "no_failure" in [finding["category"] for finding in report["findings"]]
    assert not any(finding["severity"] == "error" for finding in report["findings"])
    assert result.exit_code == 0


def test_one_rank_finishing_does_not_make_another_ranks_errors_noise() -> None:
    lines = ["[rank7]: " + FINISHED, *("[rank0]: " + line for line in TEARDOWN)]
    report, result = diagnose_json("-", stdin=_log(*lines))
    assert not any(finding["category"] == "unclean_shutdown_noise" for finding in report["findings"])
    assert result.exit_code == 1


EXIT_WARNING = (
    "[W compiler_depend.ts:409] Warning: NPU warning, error code is 507899[Error]: ",
    "[Error]: The driver error occurs.",
    "EH9999: Inner Error!",
    "        rtDeviceSynchronize execute failed, reason=[driver error:internal error]",
    " (function npuSynchronizeUsedDevices)",
)


def test_npu_warnings_at_exit_after_the_exception_the_job_died_of_are_exit_noise() -> None:
    report, result = diagnose_json("-", stdin=_log(TRACEBACK, *EXIT_WARNING))
    assert [finding["rule_id"] for finding in report["findings"]] == ["python.uncaught-exception"]
    assert "outcome.errors-after-finish" in report["findings"][0]["also_matched"]
    assert report["verdict"].startswith("No Ascend cause found; the job died of KeyError: 'outdoor_scene'")
    assert result.exit_code == 1


def test_an_npu_warning_with_no_exception_before_it_is_the_evidence() -> None:
    report, _result = diagnose_json("-", stdin=_log("step 90 loss 0.4", *EXIT_WARNING))
    assert report["findings"][0]["severity"] == "error"
    assert report["findings"][0]["category"] != "unclean_shutdown_noise"


VERSION_WARNING = (
    "[WARNING] ME(12345:281473,MainProcess):2023-06-01-10:00:00.000.000 [mindspore/run_check/_check_version.py:375] "
    'MindSpore version 2.0.0 and "te" wheel package version 6.3 does not match.'
)


def test_a_warning_the_run_survived_folds_into_it_and_one_after_it_does_not() -> None:
    report, _result = diagnose_json("-", stdin=_log(VERSION_WARNING, "step 90 loss 0.4", FINISHED))
    assert [finding["category"] for finding in report["findings"]] == ["no_failure"]
    assert report["findings"][0]["also_matched"] == ["versions.framework-cann-version-check"]
    report, _result = diagnose_json("-", stdin=_log("step 90 loss 0.4", FINISHED, VERSION_WARNING))
    assert [finding["category"] for finding in report["findings"]] == ["version_mismatch", "no_failure"]


def test_a_shell_that_shows_exit_status_zero_ends_the_run_and_its_errors_do_not_lead() -> None:
    stdin = _log(
        "Processed prompts: 100%|██████████| 500/500 [01:12<00:00,  6.88it/s]",
        "[ERROR] 2025-04-23-11:03:21 (PID:40211, Device:0, RankID:-1) ERR99999 UNKNOWN application exception",
        "/usr/lib/python3.10/multiprocessing/resource_tracker.py:224: UserWarning: resource_tracker: "
        "There appear to be 30 leaked semaphore objects to clean up at shutdown",
        "$ echo $?",
        "0",
    )
    report, _ = diagnose_json("-", stdin=stdin)
    assert [finding["category"] for finding in report["findings"]] == ["no_failure"]
    assert report["findings"][0]["severity"] == "warning"  # the error it survived, as a warning
    failed = _log(*stdin.splitlines()[:-1], "1")
    report, _ = diagnose_json("-", stdin=failed)
    assert report["findings"][0]["category"] == "needs_more_evidence"


def test_what_follows_python_shutting_down_is_exit_noise() -> None:
    stdin = _log(
        "step 90 loss 0.4",
        "Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0xfffef1b0b1c0>",
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3.9/multiprocessing/process.py", line 149, in join',
        "ImportError: sys.meta_path is None, Python is likely shutting down",
        "[W compiler_depend.ts:286] Warning: NPU warning, error code is 107002[Error]: The context is empty.",
        "EE1001: [PID: 63521] 2025-01-13-09:35:11.004.213 The argument is invalid.Reason: rtGetDevMsg execute "
        "failed, reason=[context pointer null]",
        "        ctx is NULL![FUNC:GetDevErrMsg][FILE:api_impl.cc][LINE:5053]",
    )
    report, _ = diagnose_json("-", stdin=stdin)
    assert {finding["category"] for finding in report["findings"]} == {"unclean_shutdown_noise"}


def test_an_exception_before_python_shuts_down_is_still_what_the_job_died_of() -> None:
    stdin = _log(
        TRACEBACK,
        "Exception ignored in: <function Engine.__del__ at 0xfffef1b0b1c0>",
        "ImportError: sys.meta_path is None, Python is likely shutting down",
    )
    report, _ = diagnose_json("-", stdin=stdin)
    assert report["findings"][0]["rule_id"] == "python.uncaught-exception"


def test_a_file_level_end_makes_only_teardown_errors_of_ranks_exit_noise() -> None:
    oom = "[rank3]: " + OOM
    timeout = (
        "[rank10]: EI0002: [PID: 51802] 2024-09-03-21:44:51.094.317 The wait execution of the Notify register "
        "times out. Reason: The Notify register has not received the Notify record from remote rank [3]."
    )
    report, _ = diagnose_json(
        "-", stdin=_log("[after training is done] datetime: 2024-09-03 21:10:01", oom, timeout)
    )
    assert report["findings"][0]["category"] == "device_out_of_memory"
    report, _ = diagnose_json(
        "-", stdin=_log("[after training is done] datetime: 2024-09-03 21:10:01", timeout)
    )
    assert report["findings"][0]["category"] in ("no_failure", "unclean_shutdown_noise")


def test_what_a_process_prints_after_destroying_its_process_group_at_exit_is_exit_noise() -> None:
    stdin = _log(
        "[rank0] Training finished in 5:12:44",
        "[rank0]:[W1024 03:11:07.115002212 ProcessGroupHCCL.cpp:1203] Warning: WARNING: process group has NOT "
        "been destroyed before we destruct ProcessGroupHCCL. (function ~ProcessGroupHCCL)",
        "terminate called after throwing an instance of 'c10::Error'",
        "  what():  Stream destroy failed, error code is 107003",
        "Segmentation fault (core dumped)",
    )
    report, _ = diagnose_json("-", stdin=stdin)
    assert {finding["category"] for finding in report["findings"]} <= {"unclean_shutdown_noise", "no_failure"}
    assert report["findings"][0]["category"] == "unclean_shutdown_noise"


def test_the_exit_time_block_after_an_inner_error_is_that_error_not_exit_noise() -> None:
    stdin = _log(
        "RuntimeError: The Inner error is reported as above. The process exits for this inner error, and the "
        "current working operator name is GatherV2.",
        "[W compiler_depend.ts:409] Warning: NPU warning, error code is 507018[Error]: ",
        "[Error]: The aicpu execution is abnormal. ",
        "EZ9999: [PID: 72331] 2024-11-02-17:52:40.112.905 Kernel task happen error, retCode=0x2a, [aicpu exception].",
        " (function npuSynchronizeUsedDevices)",
    )
    report, _ = diagnose_json("-", stdin=stdin)
    assert report["findings"][0]["category"] == "aicpu_exception"


def test_an_exception_pasted_before_a_check_that_passed_is_still_listed() -> None:
    stdin = _log(
        "RuntimeError: Unsupported device target Ascend. This process only supports one of the ['CPU']. Please "
        "check whether the Ascend environment is installed and configured correctly.",
        "Load dynamic library: libmindspore_ascend.so.2 failed. libge_runner.so: cannot open shared object file: "
        "No such file or directory",
        "In a terminal the same environment works:",
        "The result of multiplication calculation is correct, MindSpore has been installed on platform [Ascend] "
        "successfully!",
    )
    report, _ = diagnose_json("-", stdin=stdin)
    categories = [finding["category"] for finding in report["findings"]]
    assert "environment_not_configured" in categories[:3]
