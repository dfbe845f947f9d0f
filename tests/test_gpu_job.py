"""A failure that any accelerator's job can have is not called an Ascend one on a GPU job's log."""

from __future__ import annotations

from pathlib import Path

from ascend_doctor.read import accelerator
from tests.conftest import diagnose_json

HOST_OOM = "[Wed Dec  4 15:32:53 2024] Out of memory: Killed process 28141 (python3) total-vm:412331000kB\n"


def _top(tmp_path: Path, text: str) -> dict:
    log = tmp_path / "train.log"
    log.write_text(text, encoding="utf-8")
    report, _ = diagnose_json(str(log))
    return report["findings"][0]


def test_host_memory_exhausted_on_an_a100_is_not_an_ascend_failure(tmp_path: Path) -> None:
    top = _top(tmp_path, "CUDA_VISIBLE_DEVICES=1 torchrun --nproc-per-node 1 train.py\n" + HOST_OOM)
    assert top["category"] == "not_ascend"
    assert top["env"] == []
    assert "NVIDIA GPU (CUDA_VISIBLE_DEVICES)" in top["cause"]


def test_the_same_on_an_npu_job_keeps_its_cause(tmp_path: Path) -> None:
    top = _top(tmp_path, "ASCEND_RT_VISIBLE_DEVICES=1 torchrun --nproc-per-node 1 train.py\n" + HOST_OOM)
    assert top["category"] != "not_ascend"


def test_a_gpu_sign_beside_an_ascend_error_changes_nothing(tmp_path: Path) -> None:
    text = "model copied from an A100 checkpoint\nEL0004: Failed to allocate memory.\n"
    assert _top(tmp_path, text)["category"] == "device_out_of_memory"


def test_cuda_asked_for_where_there_is_none_is_no_gpu_job(tmp_path: Path) -> None:
    text = (
        '  File "train.py", line 12, in <module>\n'
        "    model.to('cuda:0')\n"
        "AssertionError: Torch not compiled with CUDA enabled\n"
    )
    assert _top(tmp_path, text)["category"] == "cuda_api_on_npu"


NO_DRIVER = (
    '  File "main.py", line 205, in main\n'
    "    torch.cuda.set_device(args.local_rank)\n"
    "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
    "installed a driver from http://www.nvidia.com/Download/index.aspx\n"
)


def test_cuda_asked_for_on_an_npu_host_is_a_cuda_call_on_the_npu(tmp_path: Path) -> None:
    text = "[INFO] Setting ds_accelerator to npu (auto detect)\n" + NO_DRIVER
    assert _top(tmp_path, text)["category"] == "cuda_api_on_npu"


def test_cuda_asked_for_where_no_accelerator_shows_is_not_an_ascend_failure(tmp_path: Path) -> None:
    top = _top(tmp_path, NO_DRIVER)
    assert top["category"] == "not_ascend"
    assert top["env"] == []
    assert "show no Ascend NPU and no NVIDIA GPU" in top["cause"]


def test_an_ascend_sign_deep_in_a_log_is_seen_through_the_lines_rules_matched(tmp_path: Path) -> None:
    filler = "step 1 loss 0.5\n" * 20_000  # the sign is neither in the first nor in the last bytes
    text = "CUDA_VISIBLE_DEVICES=0 python bench.py\n" + filler + "[npu:0] " + HOST_OOM
    text += filler
    assert _top(tmp_path, text)["category"] != "not_ascend"


def test_a_job_on_windows_gets_no_ascend_claim(tmp_path: Path) -> None:
    """Ascend's software does not run on Windows: NCCL missing there is no NPU job's wrong backend."""
    text = (
        '  File "H:\\CONDA\\envs\\sd\\lib\\site-packages\\torch\\distributed\\distributed_c10d.py", line 727\n'
        '    raise RuntimeError("Distributed package doesn\'t have NCCL " "built in")\n'
        "RuntimeError: Distributed package doesn't have NCCL built in\n"
    )
    log = tmp_path / "train.log"
    log.write_text(text, encoding="utf-8")
    report, _ = diagnose_json(str(log))
    assert report["findings"]
    assert all(finding["category"] == "not_ascend" for finding in report["findings"])
    assert any("job on Windows (H:\\CONDA" in finding["cause"] for finding in report["findings"])


def test_cuda_asked_for_on_windows_is_no_npu_job(tmp_path: Path) -> None:
    text = (
        'File "C:\\Users\\me\\AppData\\Local\\Programs\\Python\\Python310\\lib\\site-packages\\torch\\cuda\\'
        '__init__.py", line 284, in _lazy_init\n'
        "AssertionError: Torch not compiled with CUDA enabled\n"
    )
    assert _top(tmp_path, text)["category"] == "not_ascend"


def test_a_windows_job_whose_user_plans_to_move_to_ascend_is_still_no_npu_job(tmp_path: Path) -> None:
    text = (
        "Debugging on my laptop before moving the project to our Ascend server; do I need CANN for this?\n"
        'File "D:\\Anaconda3\\envs\\torch\\lib\\site-packages\\torch\\cuda\\__init__.py", line 239, in _lazy_init\n'
        "AssertionError: Torch not compiled with CUDA enabled\n"
    )
    assert _top(tmp_path, text)["category"] == "not_ascend"


def test_a_writer_who_plans_to_move_to_ascend_later_shows_no_npu(tmp_path: Path) -> None:
    text = (
        "Trying the script on my laptop first, I don't have an Ascend card yet:\n"
        '  File "/home/wei/.venv/lib/python3.10/site-packages/torch/cuda/__init__.py", line 302, in _lazy_init\n'
        "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
        "installed a driver from http://www.nvidia.com/Download/index.aspx\n"
    )
    assert _top(tmp_path, text)["category"] == "not_ascend"
    on_npu = (
        "We plan to move to Ascend later.\n[W compiler_depend.ts:51] torch_npu warning\n"
        + text.split("\n", 1)[1]
    )
    assert _top(tmp_path, on_npu)["category"] == "cuda_api_on_npu"


def test_an_ascend_error_on_a_windows_client_keeps_its_cause(tmp_path: Path) -> None:
    text = (
        'File "C:\\Python310\\lib\\site-packages\\requests\\models.py", line 1021, in raise_for_status\n'
        "server log: EL0004: Failed to allocate memory.\n"
    )
    assert _top(tmp_path, text)["category"] == "device_out_of_memory"


def test_a_cuda_package_failing_on_a_machine_nvidia_smi_shows_is_no_npu_job(tmp_path: Path) -> None:
    text = (
        "$ nvidia-smi --query-gpu=name --format=csv\nNVIDIA H100 80GB HBM3\n"
        "ImportError: /usr/local/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: "
        "undefined symbol: _ZN3c104cuda9SetDeviceEi\n"
    )
    assert _top(tmp_path, text)["category"] == "not_ascend"


CPU_OOM = (
    "[enforce fail at CPUAllocator.cpp:64] . DefaultCPUAllocator: can't allocate memory: you tried to allocate "
    "278528000 bytes. Error code 12 (Cannot allocate memory)\n"
)


def test_host_memory_exhausted_where_no_accelerator_shows_is_no_ascend_failure(tmp_path: Path) -> None:
    assert _top(tmp_path, CPU_OOM)["category"] == "not_ascend"
    assert _top(tmp_path, "import torch_npu\n" + CPU_OOM)["category"] == "host_out_of_memory"


def test_a_plog_line_is_an_ascend_sign_and_an_info_line_is_not() -> None:
    """The plog head alone shows an NPU host, however long its module name; an application's
    `[INFO] ` lines do not, nor does `npu` inside a longer word cut at the edge of the window
    a sign is looked for in."""
    assert accelerator.ascend_sign(b"[ERROR] RUNTIME(31337,python3):2024-12-04-15:32:50.123 [x.cc:1] fail\n")
    assert accelerator.ascend_sign(b"[ERROR] " + b"M" * 80 + b"(31337,python3):2024-12-04 fail\n")
    assert not accelerator.ascend_sign(b"2024-12-04 15:32:50 [INFO] step ok\n" * 50)
    assert not accelerator.ascend_sign(b"scanner " + b"y" * 57 + b"xnpuabc")
    assert accelerator.ascend_sign(b"scanner " + b"y" * 57 + b"x npu abc")
