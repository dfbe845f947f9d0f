"""Generate ascend_doctor/rulebase/compat.json, the compatibility table `ascend-doctor check` ships,
from the sourced compatibility facts (knowledge/compat/*.yaml: torch_npu, vllm_ascend, cann_driver,
cann_python_deps, mindspore).

Each row keeps its `source`. Only what the checks compare is kept; the prose, the contradictions and
the gaps stay in the compat README next to the facts. Run it again when the facts change:

    python scripts/gen_compat.py [COMPAT_DIR]     # default: the nearest ../shared/knowledge/compat
    python scripts/gen_compat.py --check          # exit 1 when the committed table is stale
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
# The facts sit beside the repository (`../shared/knowledge/compat`), or beside the directory that
# holds a git worktree of it.
SOURCES = [parent / "shared" / "knowledge" / "compat" for parent in ROOT.parents]
DEFAULT_SOURCE = next((path for path in SOURCES if path.is_dir()), SOURCES[0])
OUTPUT = ROOT / "ascend_doctor" / "rulebase" / "compat.json"

# torch_npu rows that pair a wheel with a torch: the built-in map names no torch.
TORCH_NPU_STATUSES = ("active", "eol", "prerelease", "superseded_listing")
# CANN <-> driver rows that name driver (HDK) versions a CANN release goes with.
DRIVER_KINDS = ("hdk_mapping", "framework_doc_pairing", "deployer_required_npu", "installer_pin")
# CANN's own install guides (not downstream projects' pip lines).
DEPS_KINDS = ("cann_install_guide", "cann_quick_install_command", "cann_install_guide_unversioned")


def _pythons(*lists: list[str] | None) -> list[str]:
    """`3.7 (>=3.7.5)` -> `3.7`; the union of the documents' lists, in order."""
    found: list[str] = []
    for values in lists:
        for value in values or ():
            minor = str(value).split(" ", 1)[0]
            if minor not in found:
                found.append(minor)
    return found


def torch_npu_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "torch_npu": str(row["torch_npu"]),
            "torch": str(row["torch"]),
            "cann": [str(cann) for cann in row["cann"]],
            "cann_compatible": [str(cann) for cann in row.get("cann_compatible") or ()],
            "python": _pythons(row.get("python"), row.get("python_per_master_compat_table")),
            "status": row["status"],
            "source": row["source"],
        }
        for row in rows
        if row["status"] in TORCH_NPU_STATUSES
    ]


def vllm_ascend_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    keys = ("vllm_ascend", "vllm", "python", "cann", "torch", "torch_npu", "kind", "source")
    return [{key: row[key] for key in keys} for row in rows if row["kind"] != "main_branch"]


def _driver_versions(row: dict[str, Any]) -> list[str]:
    if row["kind"] == "deployer_required_npu":
        return [row["npu_driver_firmware"]]
    if row["kind"] == "installer_pin":
        return [row["driver_version"]]
    found: list[str] = []
    for value in (row.get("ascend_hdk") or []) + (row.get("ascend_hdk_compatible") or []):
        for version in str(value).split("/"):  # `26.0.RC1/25.7.RC1`: one column, two names
            if version not in found:
                found.append(version)
    return found


def cann_driver_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    table = []
    for row in rows:
        if row["kind"] not in DRIVER_KINDS:
            continue
        entry = {"cann": str(row["cann"]), "driver": _driver_versions(row), "kind": row["kind"]}
        if row["kind"] == "installer_pin":
            entry.update(chip=row["chip"], firmware=row["firmware_version"])
        table.append({**entry, "source": row["source"]})
    return table


def soc_family_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "family": row["family"],
            "soc_names": row["soc_names"],
            "npu_smi_names": row["npu_smi_name_examples"],
            "source": row["source"],
        }
        for row in rows
        if row["kind"] == "soc_family"
    ]


def python_deps_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "cann": None if row["cann"] is None else str(row["cann"]),
            "python": row["python"],
            "packages": {name: bound for name, bound in row["packages"].items()},
            "kind": row["kind"],
            "source": row["source"],
        }
        for row in rows
        if row["kind"] in DEPS_KINDS
    ]


def _python_range(text: str) -> list[str]:
    """MindSpore's install page: `3.9-3.11` -> 3.9, 3.10, 3.11; `Python 3.7.5 or 3.9.0` -> 3.7, 3.9."""
    bounds = re.fullmatch(r"3\.(\d+)-3\.(\d+)", text.strip())
    if bounds:
        return [f"3.{minor}" for minor in range(int(bounds[1]), int(bounds[2]) + 1)]
    return list(dict.fromkeys(re.findall(r"\b3\.\d+", text)))


def mindspore_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """MindSpore <-> CANN (<-> Python): its install page per docs branch, and the MindFormers matrix
    (the only source for 2.7 and later). Rows naming no CANN release number (`V100R020C10`) are left out."""
    table = []
    for row in rows:
        if row["kind"] == "mindspore_install_doc":
            mindspore, python = row["mindspore_series"], _python_range(row["python"])
        elif row["kind"] == "mindformers_matrix":
            mindspore, python = row["mindspore"], []  # it recommends one Python, it gives no range
        else:
            continue
        cann = [name for name in str(row["cann"]).split(", ") if name[:1].isdigit()]
        if mindspore is None or not cann:
            continue
        table.append(
            {
                "mindspore": str(mindspore),
                "cann": cann,
                "python": python,
                "kind": row["kind"],
                "source": row["source"],
            }
        )
    return table


def build(source: Path) -> dict[str, Any]:
    def load(name: str) -> list[dict[str, Any]]:
        return yaml.safe_load((source / name).read_text("utf-8"))

    drivers = load("cann_driver.yaml")
    return {
        "about": (
            "Generated by scripts/gen_compat.py from knowledge/compat/*.yaml (facts collected "
            "2026-11-26, each row with its source). Do not edit: change the facts and run it again."
        ),
        "torch_npu": torch_npu_rows(load("torch_npu.yaml")),
        "vllm_ascend": vllm_ascend_rows(load("vllm_ascend.yaml")),
        "cann_driver": cann_driver_rows(drivers),
        "soc_families": soc_family_rows(drivers),
        "cann_python_deps": python_deps_rows(load("cann_python_deps.yaml")),
        "mindspore": mindspore_rows(load("mindspore.yaml")),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", nargs="?", type=Path, default=DEFAULT_SOURCE, help="the compat/ directory")
    parser.add_argument("--check", action="store_true", help="only say whether compat.json is up to date")
    args = parser.parse_args()
    text = json.dumps(build(args.source), indent=1, ensure_ascii=False) + "\n"
    if args.check:
        current = OUTPUT.read_text("utf-8") if OUTPUT.exists() else ""
        print(f"{OUTPUT.relative_to(ROOT)} is {'up to date' if current == text else 'stale'}")
        return 0 if current == text else 1
    OUTPUT.write_text(text, "utf-8")
    print(f"wrote {OUTPUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
