"""The one-line verdict: what it claims must hold for the logs that were read."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import diagnose_json

TIMEOUT = (
    "EI0002: [PID: 48200] 2024-12-04-10:36:02.381.007 The wait execution of the Notify register times out. "
    "Reason: The Notify register has not received the Notify record from remote rank [3].base information: "
    "[streamID:[5], taskID[47], tag[AllReduce_10.0.0.1%eth0_60000_0_1]]\n"
)
UCX = "[node2:31337] pml_ucx.c:175 Error: Failed to receive UCX worker address: Not found (-13)\n"
HCCL_INIT = 'RuntimeError: Ascend collective Error: "HcclCommInitRootInfo failed. | Error Number 2\n'
PIP_WARNING = "WARNING: Ignoring invalid distribution -orch (/usr/lib/python3/site-packages)\n"


def _ranks(tmp_path: Path, rank3: str | None) -> Path:
    for rank in (0, 1, 2, 4):
        (tmp_path / f"rank{rank}.log").write_text(f"step 1200 loss 2.1\n{TIMEOUT}")
    if rank3 is not None:
        (tmp_path / "rank3.log").write_text(rank3)
    return tmp_path


def test_timeouts_waiting_for_a_rank_whose_log_is_missing_send_the_user_to_it(tmp_path: Path) -> None:
    report, _ = diagnose_json(str(_ranks(tmp_path, None)))
    assert "4 rank(s) timed out waiting for rank 3" in report["verdict"]
    assert "its own error is not in these logs" in report["verdict"]


def test_timeouts_waiting_for_a_rank_whose_log_was_read_do_not_call_it_missing(tmp_path: Path) -> None:
    report, _ = diagnose_json(str(_ranks(tmp_path, "step 1200 loss 2.1\n")))
    assert "4 rank(s) timed out waiting for rank 3" in report["verdict"]
    assert "not in these logs" not in report["verdict"]
    assert "rank3.log holds no known Ascend error" in report["verdict"]


def test_timeouts_waiting_for_a_rank_that_raised_name_its_exception(tmp_path: Path) -> None:
    rank3 = (
        "Traceback (most recent call last):\n  File \"/work/data.py\", line 30, in load\nKeyError: 'labels'\n"
    )
    report, result = diagnose_json(str(_ranks(tmp_path, rank3)))
    assert report["verdict"] == (
        "No Ascend cause found; the job died of KeyError: 'labels' at data.py:30 — "
        f"started on rank 3 ({tmp_path / 'rank3.log'}:3); 4 other ranks timed out waiting for it"
    )
    assert [f["category"] for f in report["findings"]] == ["not_ascend"]
    assert "hccl.ei0002-notify-timeout" in report["findings"][0]["also_matched"]
    assert result.exit_code == 1


def test_a_cause_outside_ascend_is_the_verdict_only_when_no_ascend_cause_was_found(tmp_path: Path) -> None:
    alone = tmp_path / "ucx.log"
    alone.write_text(PIP_WARNING + UCX)
    report, _ = diagnose_json(str(alone))
    assert [finding["severity"] for finding in report["findings"]] == ["error", "warning"]
    assert report["verdict"].startswith("This is not an Ascend failure: ")
    both = tmp_path / "both.log"
    both.write_text(UCX + HCCL_INIT)
    report, _ = diagnose_json(str(both))
    assert report["findings"][0]["category"] == "not_ascend"
    assert any(finding["category"] != "not_ascend" for finding in report["findings"])
    assert "not an Ascend failure" not in report["verdict"]
    assert report["verdict"].endswith("(" + str(both) + ":1)")


BARE_INNER_ERROR = "EZ9999: Inner Error!\nRuntimeError: The Inner error is reported as above.\n"


def test_timeouts_naming_the_rank_of_a_bare_inner_error_are_its_consequence(tmp_path: Path) -> None:
    report, _ = diagnose_json(
        str(_ranks(tmp_path, "[rank3]: " + BARE_INNER_ERROR.replace("\n", "\n[rank3]: ")))
    )
    assert report["findings"][0]["rule_id"] == "cann.ez9999-inner-error"
    assert "started on rank 3" in report["verdict"]
    assert "4 other ranks timed out waiting for it" in report["verdict"]
    timeouts = next(f for f in report["findings"] if f["category"] == "hccl_timeout")
    assert timeouts["role"] == "consequence"


def test_timeouts_naming_another_rank_are_not_pinned_on_a_bare_inner_error(tmp_path: Path) -> None:
    logs = _ranks(tmp_path, None)
    (logs / "rank5.log").write_text(BARE_INNER_ERROR)
    report, _ = diagnose_json(str(logs))
    assert report["findings"][0]["rule_id"] == "cann.ez9999-inner-error"
    assert "timed out waiting for it" not in report["verdict"]
    assert all(finding["role"] == "cause" for finding in report["findings"])


def test_in_one_log_of_all_ranks_a_cann_line_takes_the_rank_of_its_process(tmp_path: Path) -> None:
    aicore = (
        "EZ9999: [PID: {pid}] 2024-12-04-09:36:00.102.331 The error from device(chipId:3, dieId:0), "
        "serial number is 12, there is an aicore error exception, core id is 0, error code = 0x800000\n"
    )
    header = "[ERROR] 2024-12-04-09:36:00 (PID:48203, Device:3, RankID:3) ERR01100 OPS call acl api failed\n"
    timeouts = "".join(f"[rank{rank}]:" + TIMEOUT for rank in (0, 1, 2))
    for pid, rank in (("48203", 3), ("50000", None)):
        log = tmp_path / f"all-{pid}.log"
        log.write_text(header + aicore.format(pid=pid) + timeouts)
        report, _ = diagnose_json(str(log))
        top = report["findings"][0]
        assert top["category"] == "aicore_exception"
        assert top["evidence"][0].get("rank") == rank
        assert ("started on rank 3" in report["verdict"]) is (rank == 3)


def _acl_failed(rank: int, time: str) -> str:
    """torch_npu's generic line after a failed call, stamped with the process's rank."""
    return f"[ERROR] 2024-12-04-{time} (PID:4820{rank}, Device:{rank}, RankID:{rank}) ERR00100 PTA call acl api failed\n"


def test_the_generic_acl_error_that_timed_out_ranks_print_does_not_hide_the_wait(tmp_path: Path) -> None:
    logs = _ranks(tmp_path, None)
    for rank in (0, 1, 2, 4):
        with (logs / f"rank{rank}.log").open("a") as log:
            log.write(_acl_failed(rank, "10:36:03"))
    report, _ = diagnose_json(str(logs))
    assert report["findings"][0]["category"] == "hccl_timeout"
    assert "4 rank(s) timed out waiting for rank 3" in report["verdict"]


def test_in_one_log_of_all_ranks_the_rank_that_failed_first_is_where_it_started(tmp_path: Path) -> None:
    """`cat rank*.log > all.log`: the timed-out ranks' lines come first, rank 3's failed 30 min before."""
    timed_out = "".join(f"[rank{rank}]:" + TIMEOUT + _acl_failed(rank, "10:36:03") for rank in (0, 1, 2))
    log = tmp_path / "all.log"
    log.write_text(timed_out + _acl_failed(3, "10:06:03") + "[rank4]:" + TIMEOUT)
    report, _ = diagnose_json(str(log))
    assert report["findings"][0]["evidence"][0]["rank"] == 3
    assert "started on rank 3" in report["verdict"]
    assert "4 other ranks timed out waiting for it" in report["verdict"]


WARNING = (
    "[W compiler_depend.ts:133] Warning: Device do not support double dtype now, "
    "dtype cast repalce with float. (function operator())\n"
)


def test_a_warning_is_not_called_the_cause_of_a_job_that_died_of_something_else(tmp_path: Path) -> None:
    log = tmp_path / "rank0.log"
    log.write_text(
        WARNING + 'Traceback (most recent call last):\n  File "train.py", line 40, in main\n'
        "ValueError: could not convert string to float: '1e-4,'\n"
    )
    report, result = diagnose_json(str(log))
    assert [finding["severity"] for finding in report["findings"]] == ["error"]
    assert report["findings"][0]["also_matched"] == ["operators.double-cast-to-float"]
    assert report["verdict"] == (
        "No Ascend cause found; the job died of ValueError: could not convert string to float: '1e-4,' "
        f"at train.py:40 ({log}:4, rank 0)"
    )
    assert result.exit_code == 1


def test_a_warning_alone_is_worth_a_look_but_no_failure(tmp_path: Path) -> None:
    log = tmp_path / "rank0.log"
    log.write_text(WARNING + "step 10 loss 2.3\n")
    report, result = diagnose_json(str(log))
    assert [finding["severity"] for finding in report["findings"]] == ["warning"]
    assert report["verdict"] == (
        f"No known Ascend failure cause found; worth a look: {report['findings'][0]['title']} ({log}:1, rank 0)."
    )
    assert result.exit_code == 0


TIMEOUT_SETTINGS_WARNING = (
    "[W compiler_depend.ts:1159] Warning: The value of HCCL_EVENT_TIMEOUT:1800 is less than or equal to "
    "the value of HCCL_EXEC_TIMEOUT:1836. (function operator())\n"
)


def test_a_startup_warning_about_timeouts_does_not_make_the_failing_rank_a_victim(tmp_path: Path) -> None:
    """Every rank warns about its timeout settings at startup; ranks 0-2 then time out (naming no
    rank), rank 3 fails."""
    watchdog = (
        "[E ProcessGroupHCCL.cpp:600] [Rank {rank}] Watchdog caught collective operation timeout: "
        "WorkHCCL(SeqNum=1892, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800417 milliseconds before timing out.\n"
    )
    for rank in range(4):
        failure = BARE_INNER_ERROR if rank == 3 else watchdog.format(rank=rank)
        (tmp_path / f"rank{rank}.log").write_text(TIMEOUT_SETTINGS_WARNING + "step 1200 loss 2.1\n" + failure)
    report, _ = diagnose_json(str(tmp_path))
    assert report["findings"][0]["rule_id"] == "cann.ez9999-inner-error"


def test_in_one_log_without_ranks_an_error_before_the_timeouts_is_not_their_echo(tmp_path: Path) -> None:
    log = tmp_path / "all.log"
    log.write_text(TIMEOUT + BARE_INNER_ERROR + TIMEOUT)
    report, _ = diagnose_json(str(log))
    assert report["findings"][0]["rule_id"] == "cann.ez9999-inner-error"
    assert "not in these logs" not in report["verdict"]


def test_in_one_log_without_ranks_a_generic_error_stamped_with_the_timeout_is_its_echo(
    tmp_path: Path,
) -> None:
    sync_failed = (
        "[ERROR] RUNTIME(23661,python3):2024-12-04-10:36:02.402.113 [logger.cc:1012] 23661 StreamSynchronize: "
        "Stream synchronize failed, stream_id=5, retCode=0x91, [the model stream execute failed].\n"
    )
    log = tmp_path / "plog.log"
    log.write_text(sync_failed + TIMEOUT)
    report, _ = diagnose_json(str(log))
    assert report["findings"][0]["category"] == "hccl_timeout"
    earlier = tmp_path / "earlier.log"
    earlier.write_text(sync_failed.replace("10:36:02", "10:06:02") + TIMEOUT)
    report, _ = diagnose_json(str(earlier))
    assert report["findings"][0]["category"] == "needs_more_evidence"


MINDSPORE_SYNC_FAILED = (
    "epoch: 1 step: 1250, loss is 0.8925012\n"
    "Traceback (most recent call last):\n"
    '  File "train.py", line 174, in <module>\n'
    "    model.train(cfg.epochs, train_ds, dataset_sink_mode=True)\n"
    "RuntimeError: Sync stream failed:Ascend_0\n"
    "\n"
    "----------------------------------------------------\n"
    "- Ascend Error Message:\n"
    "----------------------------------------------------\n"
)


def test_in_one_log_without_ranks_the_wrapper_of_a_timeout_block_is_its_echo(tmp_path: Path) -> None:
    log = tmp_path / "worker_0.log"
    log.write_text("8 cards hang at the end of each epoch, then EI0002\n" + MINDSPORE_SYNC_FAILED + TIMEOUT)
    report, _ = diagnose_json(str(log))
    assert report["findings"][0]["category"] == "hccl_timeout"


def test_a_bug_in_the_script_before_a_timeout_block_is_never_its_echo(tmp_path: Path) -> None:
    log = tmp_path / "worker_0.log"
    log.write_text("[ERROR] Execute user Python code failed, check 'Python Call Stack' above.\n" + TIMEOUT)
    report, _ = diagnose_json(str(log))
    assert report["findings"][0]["category"] == "not_ascend"


def test_a_rank_s_wrapper_printed_before_its_timeout_block_is_its_echo_whatever_time_it_inherits(
    tmp_path: Path,
) -> None:
    text = (
        "[INFO|trainer.py:3305] 2024-03-28 21:40:02,771 >> Saving model checkpoint\n"
        "[rank5]: RuntimeError: The Inner error is reported as above. The process exits for this inner error, "
        "and the current working operator name is HcclAllGather.\n"
        "[rank5]: " + TIMEOUT.replace("10:36:02", "22:10:03")
    )
    log = tmp_path / "train.log"
    log.write_text(text)
    report, _ = diagnose_json(str(log))
    assert report["findings"][0]["category"] == "hccl_timeout"


def test_the_front_end_reporting_a_dead_engine_after_a_timeout_does_not_hide_it(tmp_path: Path) -> None:
    engine_dead = (
        "ERROR 06-03 22:31:19 [core.py:502] EngineCore encountered a fatal error.\n"
        "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. "
        "See stack trace (above) for the root cause.\n"
    )
    log = tmp_path / "serve.log"
    log.write_text("(VllmWorker rank=0 pid=47205) [rank0]: " + TIMEOUT + engine_dead)
    report, _ = diagnose_json(str(log))
    assert [f["category"] for f in report["findings"]][:2] == ["hccl_timeout", "needs_more_evidence"]
    alone = tmp_path / "alone.log"
    alone.write_text(engine_dead)
    report, _ = diagnose_json(str(alone))
    assert report["findings"][0]["rule_id"] == "vllm.engine-died"


def test_lines_naming_no_rank_do_not_take_the_time_of_the_rank_that_failed_first(tmp_path: Path) -> None:
    timed_out = "".join(
        f"[rank{rank}]:" + TIMEOUT + _acl_failed(rank, "10:36:03") + "EZ9999: Inner Error!\n"
        for rank in (0, 1)
    )
    log = tmp_path / "all.log"
    log.write_text(timed_out + "[rank3]:" + _acl_failed(3, "10:06:03"))
    report, _ = diagnose_json(str(log))
    assert "started on rank 3" in report["verdict"]


def test_a_note_alone_is_no_cause_and_no_place_worth_a_look(tmp_path: Path) -> None:
    from tests.conftest import FIXTURES

    report, result = diagnose_json(str(FIXTURES / "seed003-get-input-const-data-out.log"))
    assert {finding["severity"] for finding in report["findings"]} == {"info"}
    assert report["verdict"] == "No known Ascend failure cause found."
    assert result.exit_code == 0


def test_the_rank_the_timeouts_name_outranks_an_earlier_attempts_failure(tmp_path: Path) -> None:
    """torchrun restarted the job after rank 1 failed to bind its port; on the second attempt
    rank 3 ran out of memory and the others timed out waiting for it."""
    log = tmp_path / "all.log"
    log.write_text(
        "[2024-12-04 09:00:00,000] torch.distributed.run: [INFO] Starting elastic_operator, max_restarts: 3\n"
        "[rank1]:RuntimeError: The server socket has failed to listen on any local network address. "
        "The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).\n"
        "[rank3]:[2024-12-04 10:05:30,000] [INFO] step=200\n"
        "[rank3]:RuntimeError: NPU out of memory. Tried to allocate 1.50 GiB (NPU 3; 29.50 GiB total capacity)\n"
        + "".join(f"[rank{rank}]:" + TIMEOUT for rank in (0, 1, 2))
    )
    report, _ = diagnose_json(str(log))
    assert report["findings"][0]["category"] == "device_out_of_memory"
    assert "started on rank 3" in report["verdict"]


def test_in_one_log_of_all_ranks_the_awaited_ranks_error_is_not_called_missing(tmp_path: Path) -> None:
    log = tmp_path / "all.log"
    log.write_text(
        "".join(f"[rank{rank}]:" + TIMEOUT for rank in (0, 1, 2)) + "[rank3]: step 1200 loss 2.1\n"
    )
    report, _ = diagnose_json(str(log))
    assert "3 rank(s) timed out waiting for rank 3" in report["verdict"]
    assert "not in these logs" not in report["verdict"]
    assert "no known Ascend error of rank 3 was found" in report["verdict"]


def test_the_awaited_rank_timing_out_in_turn_is_not_its_cause(tmp_path: Path) -> None:
    """Rank 3 was only slow (a long validation): the others gave up on it, then it waited for them.
    What each says after its own timeout, the awaited rank included, is an echo of the timeout."""
    echo = "RuntimeError: ACL stream synchronize failed, error code:507011\n"
    log = tmp_path / "all.log"
    log.write_text(
        "".join(f"[rank{rank}] " + TIMEOUT + f"[rank{rank}] " + echo for rank in (0, 1, 2))
        + "[rank3] validation done\n"
        + "[rank3] "
        + TIMEOUT.replace("remote rank [3]", "remote rank [0]")
        + "[rank3] "
        + echo
    )
    report, _ = diagnose_json(str(log))
    assert report["findings"][0]["category"] == "hccl_timeout"
    assert "timed out waiting for rank 3" in report["verdict"]


def test_beside_a_log_of_several_ranks_the_awaited_ranks_error_is_not_called_missing(tmp_path: Path) -> None:
    (tmp_path / "rank0.log").write_text(TIMEOUT)
    (tmp_path / "all.log").write_text("[rank3]: step 1200 loss 2.1\n")
    report, _ = diagnose_json(str(tmp_path / "rank0.log"), str(tmp_path / "all.log"))
    assert "not in these logs" not in report["verdict"]
    assert "no known Ascend error of rank 3 was found" in report["verdict"]


CUDA_OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
    "GPU 5 has a total capacity of 79.15 GiB of which 1.21 GiB is free.\n"
)
NCCL_WATCHDOG = (
    "[rank{rank}]:[E ProcessGroupNCCL.cpp:1182] [Rank {rank}] NCCL watchdog thread terminated with exception: "
    "[Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1842, OpType=ALLREDUCE, "
    "NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600031 milliseconds before timing out.\n"
)


def test_a_gpu_jobs_watchdog_timeouts_are_the_consequence_of_its_cuda_oom(tmp_path: Path) -> None:
    """As HCCL timeouts are for Ascend: rank 5 ran out of GPU memory, the seven others timed out
    waiting for it (and their logs come first); beside a cause outside Ascend they fold into it."""
    for rank in (0, 1, 2, 3, 4, 6, 7):
        (tmp_path / f"rank{rank}.log").write_text(NCCL_WATCHDOG.format(rank=rank))
    (tmp_path / "rank5.log").write_text(CUDA_OOM)
    report, _ = diagnose_json(str(tmp_path))
    findings = report["findings"]
    assert [f["rule_id"] for f in findings] == ["python.cuda-out-of-memory"]
    assert findings[0]["also_matched"] == ["python.nccl-watchdog-timeout"]
    assert findings[0]["ranks"] == [0, 1, 2, 3, 4, 5, 6, 7]
    assert report["verdict"].startswith("This is not an Ascend failure: CUDA out of memory")


SOCKET_TIMEOUT = (
    "[ERROR] 2024-12-04-10:36:02 (PID:4820{rank}, Device:{rank}, RankID:{rank}) ERR02200 DIST call hccl api failed.\n"
    "EI0006: [PID: 4820{rank}] 2024-12-04-10:36:02.007.223 Getting socket times out. Reason: 1. The remote "
    "does not initiate a connect request. some NPUs in the cluster are abnormal.\n"
)


def _socket_timeouts(tmp_path: Path, ranks: range, silent: set[int]) -> Path:
    for rank in ranks:
        text = "step 1200 loss 2.1\n" + ("" if rank in silent else SOCKET_TIMEOUT.format(rank=rank))
        (tmp_path / f"rank_{rank}.log").write_text(text)
    return tmp_path


def test_the_one_rank_of_a_directory_that_printed_no_error_is_named(tmp_path: Path) -> None:
    report, _ = diagnose_json(str(_socket_timeouts(tmp_path, range(8), {5})))
    assert report["findings"][0]["category"] == "hccl_timeout"
    assert report["verdict"].endswith(
        "7 of 8 ranks timed out waiting in a collective; rank 5 shows no error: it never joined "
        f"(it hung, or died without a word): look at its own output ({tmp_path / 'rank_5.log'}) and its plog"
    )


def test_the_silent_rank_in_chinese(tmp_path: Path) -> None:
    report, _ = diagnose_json("--lang", "zh", str(_socket_timeouts(tmp_path, range(4), {2})))
    assert "4 个 rank 中有 3 个在集合通信中等待超时；rank 2 没有任何报错" in report["verdict"]


@pytest.mark.parametrize(
    ("launch", "ranks", "silent"),
    [
        ("torchrun --nnodes 1 --nproc_per_node 8 train.py\n", (0, 1, 2, 3, 4, 5, 6), 7),  # the last rank
        ("[2024-03-01 09:58:16,904] [INFO] [launch.py:163:main] dist_world_size=4\n", (1, 2, 3), 0),
        ("", (0, 1, 2, 4, 5), 3),  # no size stated: the gap among the ranks that timed out
    ],
)
def test_the_silent_rank_of_one_log_of_all_ranks_is_named(
    tmp_path: Path, launch: str, ranks: tuple[int, ...], silent: int
) -> None:
    log = tmp_path / "all.log"
    log.write_text(
        launch
        + "".join(
            "".join(f"[rank{rank}]: {line}\n" for line in SOCKET_TIMEOUT.format(rank=rank).splitlines())
            for rank in ranks
        )
    )
    report, _ = diagnose_json(str(log))
    assert f"rank {silent} shows no error: it never joined" in report["verdict"]
    assert f"{len(ranks)} of {len(ranks) + 1} ranks timed out" in report["verdict"]


@pytest.mark.parametrize("silent", [set(), {2, 5}])
def test_no_rank_is_called_silent_unless_exactly_one_is(tmp_path: Path, silent: set[int]) -> None:
    report, _ = diagnose_json(str(_socket_timeouts(tmp_path, range(8), silent)))
    assert report["findings"][0]["category"] == "hccl_timeout"
    assert "shows no error" not in report["verdict"]


def test_in_chinese_the_verdict_and_its_labels_use_full_width_punctuation(tmp_path: Path) -> None:
    from tests.conftest import run_cli

    log = tmp_path / "train.log"
    log.write_text("step 1\n[rank3]: EL0004: Failed to allocate memory.\n")
    first = run_cli("diagnose", "--lang", "zh", str(log)).stdout.splitlines()[0]
    assert first.startswith("诊断：")
    assert first.endswith(f"（{log}:2，rank 3）")
    assert "(" not in first and ", " not in first
