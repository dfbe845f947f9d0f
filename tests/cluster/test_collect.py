"""`ascend-doctor collect`: planted secrets never reach the archive, the logs are cut to the window
and the size cap with the manifest saying so, and bad requests get clear errors."""

from __future__ import annotations

import gzip
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, run_cli

SECRETS = {
    "export HF_TOKEN=hf_PlantedSecret0123456789abcd": "hf_PlantedSecret0123456789abcd",
    "python train.py --wandb-api-key 9f8e7d6c5b4a39281706 --lr 3e-4": "9f8e7d6c5b4a39281706",
    "Authorization: Bearer planted.bearer.token.value": "planted.bearer.token.value",
    "curl -H 'authorization: Basic cGxhbnRlZDpwYXNz' https://x": "cGxhbnRlZDpwYXNz",
    "git clone https://planteduser:PlantedPass99@git.example.com/llama.git": "PlantedPass99",
    '{"db_password": "PlantedJsonPw", "step": 3}': "PlantedJsonPw",
    "AWS key AKIAPLANTEDSECRET123 in use": "AKIAPLANTEDSECRET123",
    "token ghp_PlantedGithubToken0123456789abc": "ghp_PlantedGithubToken0123456789abc",
    "MINDSPORE_SECRET='planted quoted secret' other": "planted quoted secret",
    "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.c2lnbmF0dXJlcGxhbnRlZA": "c2lnbmF0dXJlcGxhbnRlZA",
}
ENV_SECRETS = {
    "ASCEND_API_KEY": "PlantedEnvKeyValue",  # a job variable, named like a secret
    "HCCL_TOKEN": "plain words planted",  # a secret's name, a value of any shape
    "MASTER_ADDR": "https://envuser:PlantedEnvUrlPw@10.9.8.7:29500",
    "HF_TOKEN": "hf_PlantedNotAJobVariable123456",  # not a job variable at all
}


def _job(tmp_path: Path) -> Path:
    """The 8-rank OOM job, with secrets planted in a rank's log right at the failure."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for path in (FIXTURES / "hccl-8rank-oom").iterdir():
        text = path.read_text(encoding="utf-8")
        if path.name == "rank3.log":
            text += "2024-06-11 10:27:33,500 - INFO - launch.py:1 - " + "\n".join(SECRETS) + "\n"
        (logs / path.name).write_text(text, encoding="utf-8")
    return logs


def _members(bundle: Path) -> dict[str, str]:
    with tarfile.open(bundle) as archive:
        return {
            member.name: archive.extractfile(member).read().decode("utf-8")  # type: ignore[union-attr]
            for member in archive.getmembers()
        }


def _collect(*args: str, env: dict[str, str] | None = None) -> Any:
    result = run_cli("collect", *args, env=env)
    assert result.exit_code == 0, result.stderr
    return result


def test_planted_secrets_never_reach_the_archive(tmp_path: Path) -> None:
    bundle = tmp_path / "ticket.tar.gz"
    _collect(str(_job(tmp_path)), "-o", str(bundle), env=ENV_SECRETS)
    raw = gzip.decompress(bundle.read_bytes()).decode("utf-8", errors="replace")  # names, headers, all
    for secret in [*SECRETS.values(), *ENV_SECRETS.values(), "PlantedEnvUrlPw"]:
        assert secret not in raw, secret
    members = _members(bundle)
    assert (
        "[REDACTED]"
        in members["ascend-doctor-bundle/logs/" + str(tmp_path / "logs" / "rank3.log").lstrip("/")]
    )
    environment = json.loads(members["ascend-doctor-bundle/environment.json"])["environment"]
    assert environment["ASCEND_API_KEY"] == "[REDACTED]" and "HF_TOKEN" not in environment
    assert environment["MASTER_ADDR"] == "https://[REDACTED]@10.9.8.7:29500"  # the address stays
    report = json.loads(members["ascend-doctor-bundle/report.json"])
    assert report["findings"][0]["rule_id"] == "memory.npu-out-of-memory"
    assert "rank 5" in members["ascend-doctor-bundle/report.md"]


def test_hosts_and_addresses_go_only_when_asked(tmp_path: Path) -> None:
    logs = _job(tmp_path)
    (logs / "rank1.log").write_text(
        (logs / "rank1.log").read_text()
        + "2024-06-11 10:27:34,000 - INFO - x.py:1 - peer gpu-node-07 at 172.16.5.4\n"
    )
    plain, hidden = tmp_path / "plain.tar.gz", tmp_path / "hidden.tar.gz"
    _collect(str(logs), "-o", str(plain), "--node", "gpu-node-07")
    _collect(str(logs), "-o", str(hidden), "--node", "gpu-node-07", "--redact-hosts")
    shown = gzip.decompress(plain.read_bytes()).decode("utf-8", errors="replace")
    assert "172.16.5.4" in shown and "gpu-node-07" in shown and "10.0.0.1" in shown
    redacted = gzip.decompress(hidden.read_bytes()).decode("utf-8", errors="replace")
    for name in ("172.16.5.4", "gpu-node-07", "10.0.0.1"):
        assert name not in redacted, name
    manifest = json.loads(_members(hidden)["ascend-doctor-bundle/MANIFEST.json"])
    assert manifest["node"] == "host-1" and manifest["redacted"]["hosts"] is True


def test_the_window_and_the_size_cap_say_what_they_left_out(tmp_path: Path) -> None:
    logs = _job(tmp_path)
    bundle = tmp_path / "small.tar.gz"
    result = _collect(str(logs), "-o", str(bundle), "--window", "1", "--max-size", "0.004")
    members = _members(bundle)
    manifest = json.loads(members["ascend-doctor-bundle/MANIFEST.json"])
    assert manifest["failure"] == {
        "first_error": "2024-06-11T10:27:20.844",
        "last_error": "2024-06-11T10:27:36.791",
    }
    logs_kept = [log for log in manifest["logs"] if log["kept"]]
    first = manifest["logs"][0]
    assert first["source"].endswith("rank5.log") and first["kept"]  # the failing rank's log first
    assert "18 line(s) outside the time window left out" in first["notes"]
    rank5 = members["ascend-doctor-bundle/" + first["member"]]
    assert "NPU out of memory" in rank5 and "step 34/2000" not in rank5  # 20 minutes before: out
    assert any("cut to its last" in note for log in logs_kept for note in log["notes"])
    assert any(log.get("why") == "the size cap was reached" for log in manifest["logs"])
    assert sum(log["bytes"] for log in logs_kept) <= 0.004 * 1024 * 1024
    assert f"{len(logs_kept)} of 8 log(s)" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-", "-o", "x.tar.gz"], "collect reads files and directories, not stdin"),
        (["missing.log", "-o", "x.tar.gz"], "cannot read missing.log: no such file or directory"),
        (["fixtures"], "Missing option '-o'"),
    ],
)
def test_bad_requests_are_clear_errors(args: list[str], message: str) -> None:
    result = run_cli("collect", *args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
