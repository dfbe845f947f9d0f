"""Generate the CANN error-code catalogue the package ships, from the knowledge base's codes.yaml.

    python scripts/gen_catalogue.py /path/to/cann-error-codes/codes.yaml

writes `ascend_doctor/rulebase/catalogue.json` (one record per code, loaded by `explain` and by
diagnose when a log line carries a code) and `rules/catalogue.yaml` (the two rules that find codes
in log lines). Only facts are kept: the code, its system, class, title, the message templates CANN
prints, aliases, the aclError a code is converted to, and a link to the upstream file. Upstream's
cause and solution texts, and doc text in Chinese, are never copied: the category and the "what to
check next" advice are ours, chosen by the tables below from the system, class, title and message.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = ROOT / "ascend_doctor" / "rulebase" / "catalogue.json"
RULES = ROOT / "rules" / "catalogue.yaml"

# Repositories whose web host the knowledge base names (hicann/X is gitcode.com/cann/X).
HOSTS = {"hicann": "https://gitcode.com/cann"}
# The fork's HcclResult enum is the same as upstream hcomm's at this commit (codes.yaml README).
HCCL_TYPES = "hicann/hcomm include/hccl/hccl_types.h@2b912e7d2b105735579276a63a51364890c56788"

# Inner codes: never registered (any xx9999, and xx8888 for parameter checks), printed with an
# `Internal error!` (older: `Inner Error!`) header and a traceback of free-text messages.
INNER_CODES = {
    "EH9999": "ACL",
    "EE9999": "runtime",
    "EI9999": "HCCL",
    "EL9999": "driver",
    "E19999": "GE",
    "E29999": "FE",
    "E39999": "AICPU",
    "E49999": "TEFusion",
    "EF9999": "MdatDeploy",
    "EN9999": "DVPP",
    "E18888": "GE",
    "EE8888": "runtime",
    "EZ8888": "operators",
}

# (category, system pattern, text pattern): the first row whose patterns both match the code's
# system and its "class title message" text decides. Titles are enum names: `_` reads as a space.
CATEGORY_TABLE: tuple[tuple[str, str, str], ...] = (
    (
        "host_out_of_memory",
        r".",
        r"(?i)insufficient host memory|host memory (has been )?exhausted|allocate .*host memory"
        r"|host memory by",
    ),
    ("hccl_timeout", r"^(HCCL|HCCP)$", r"(?i)time ?out|times out|timed out"),
    ("hccl_timeout", r".", r"(?i)\bnotify\b.*time ?out|hccl.*time ?out|ffts plus timeout"),
    (
        "device_out_of_memory",
        r".",
        r"(?i)out of memory|\boom\b|insufficient device memory|memory allocation|allocate .*memory"
        r"|memalloc|malloc|mem(ory)? alloc|device memory|\bHBM\b.*(full|insufficient)",
    ),
    (
        "hardware_fault",
        r".",
        r"(?i)\becc\b|multi ?bit|\buce\b|hbm|link (down|error|abnormal)|port is down|heartbeat|"
        r"over ?temperature|hardware|bus error|pcie|device (mem|memory) error|suspect .*(mem|memory) error|"
        r"\bsdma\b|\bcqe\b|poison|bus down",
    ),
    (
        "hccl_init_failure",
        r"^(HCCL|HCCP)$",
        r"(?i)socket|link|transport|init|ranktable|rank table|rootinfo|bind|port|ip address|connect|p2p|"
        r"environment variable|version",
    ),
    ("aicore_exception", r".", r"(?i)ai ?core|\baiv\b|vector core"),
    ("aicpu_exception", r".", r"(?i)ai ?cpu"),
    ("operator_compile_failure", r"^(TBE|TEFusion|FE)$", r"(?i)compil|fusion|\bpass\b"),
    ("operator_binary_missing", r"^(aclnn|operators)$", r"(?i)find kernel|kernel pkg not found"),
    (
        "op_shape_unsupported",
        r"^(aclnn|operators|TBE)$",
        r"(?i)parameter error|param invalid|tiling|infershape",
    ),
    ("graph_fuser_unsupported", r"^(ACL|runtime)$", r"(?i)capture"),
    ("operator_dtype_unsupported", r"^(TBE|operators)$", r"(?i)dtype|data ?type"),
    ("operator_not_implemented", r"^(TBE|operators)$", r"(?i)not registered|unsupported operator"),
    (
        "op_shape_unsupported",
        r"^(TBE|operators)$",
        r"(?i)shape|\bformat|\bdims?\b|dimension|\brank\b|axis|layout|invalid argument|not supported|"
        r"should be|must be|must in|only support",
    ),
    ("operator_dtype_unsupported", r"^ACL$", r"(?i)unsupported data type|datatype invalid"),
    ("op_shape_unsupported", r"^ACL$", r"(?i)format not match|shape invalid|format invalid"),
    ("version_mismatch", r".", r"(?i)version|incompatible"),
    (
        "device_unavailable",
        r".",
        r"(?i)no (valid )?device|device (is )?(not found|absent|invalid|busy|occupied|abnormal)|"
        r"device id|resource busy|resources are busy|occupied by|no permission|device access|"
        r"failed to connect the device|device (does )?not exist|device not ready|resources are occupied",
    ),
    ("npu_context_not_set", r".", r"(?i)context (is )?(empty|null|not set)|ctx (is )?null"),
    ("operator_binary_missing", r".", r"(?i)\bbin(ary)?\b.*(not found|missing|cannot find)|kernel not found"),
    ("operator_compile_failure", r".", r"(?i)compil"),
    ("environment_not_configured", r".", r"(?i)environment variable|env(ironment)? .*not (set|configured)"),
)

# What to check next, in our words: by category, with a few by system for the catch-all.
ADVICE: dict[str, dict[str, str]] = {
    "device_out_of_memory": {
        "en": "Check how much NPU memory the job holds when it fails (npu-smi info; the allocator "
        "summary torch_npu prints) and whether another process shares the card; lower the batch "
        "or sequence size, or free cached memory before the failing step.",
        "zh": "查看失败时作业占用的 NPU 内存（npu-smi info"
        "，torch_npu 打印的内存分配摘要），以及是否有其他进程"
        "共用该卡；减小 batch 或序列长度，或在出错步骤前释放缓存显存。",
    },
    "host_out_of_memory": {
        "en": "Check the host's free memory and the container's memory limit (free -h, dmesg for the "
        "OOM killer, /dev/shm size); reduce data-loader workers or the host-side buffers.",
        "zh": "检查主机可用内存和容器内存上限（free -h、dmesg 中的 OOM killer 记录、/dev/shm 大小）；"
        "减少 DataLoader worker 数或主机侧缓存。",
    },
    "hccl_timeout": {
        "en": "A timeout is usually what the other ranks print while one rank is stuck or dead: find the "
        "rank that failed first (the earliest error across all rank logs, the peer rank the timeout "
        "names) and diagnose that rank's log; raise HCCL_EXEC_TIMEOUT only if that rank was just slow.",
        "zh": "超时通常是其他 rank 在等待某个卡住或已退出的 rank"
        " 时打印的：找出最先失败的 rank（所有 rank 日志中"
        "最早的错误，超时信息中点名的对端 rank），诊断该 rank 的"
        "日志；只有在它只是慢时才调大 HCCL_EXEC_TIMEOUT。",
    },
    "hccl_init_failure": {
        "en": "Check the communicator set-up on every rank: the rank table or MASTER_ADDR/PORT, that the "
        "NICs are up (hccn_tool -i N -link -g), that the ports are free and not blocked by a firewall, "
        "and that HCCL_IF_IP / HCCL_SOCKET_IFNAME name a reachable interface.",
        "zh": "检查每个 rank 的通信域建立：rank table 或 MASTER_ADD"
        "R/PORT，网口是否 up（hccn_tool -i N -link -g），"
        "端口是否空闲、未被防火墙拦截，HCCL_IF_IP / HCCL_SOCKET_IFNAME 是否指向可达的网卡。",
    },
    "hardware_fault": {
        "en": "This points at the device or its links, not the code: run npu-smi info and the device's "
        "health and error-count queries, read the device log (/var/log/npu) around the same time, "
        "and hand the card's ECC / link status to whoever runs the machine.",
        "zh": "这指向设备或其链路而非代码：执行 npu-smi info 及设备健康和错误计数查询，查看同一时间的设备日志"
        "（/var/log/npu），把该卡的 ECC / 链路状态交给机器运维人员。",
    },
    "device_unavailable": {
        "en": "Check that the device exists and is free: npu-smi info (leftover processes holding it), "
        "the devices mapped into the container (/dev/davinci*), ASCEND_RT_VISIBLE_DEVICES, and that "
        "the driver is loaded and matches the firmware.",
        "zh": "检查设备是否存在且空闲：npu-smi info（是否有残留"
        "进程占用），容器中映射的设备（/dev/davinci*），"
        "ASCEND_RT_VISIBLE_DEVICES，以及驱动是否已加载并与固件匹配。",
    },
    "aicore_exception": {
        "en": "Find the failing kernel (the op or kernel name in the plog next to this code) and re-run "
        "with ASCEND_LAUNCH_BLOCKING=1 to tie it to a Python line; check that op's input indices and "
        "shapes, then collect logs with asys and analyse them with msaicerr.",
        "zh": "找出出错的算子（plog 中该错误码附近的算子名或 kernel 名）"
        "，设置 ASCEND_LAUNCH_BLOCKING=1 重跑以定位到"
        " Python 行；检查该算子输入的索引和 shape，再用 asys 收集日志、用 msaicerr 分析。",
    },
    "aicpu_exception": {
        "en": "Find the AI CPU op named in the plog near this code and check its inputs; make sure the "
        "AI CPU kernel package matches the toolkit version, and re-run with ASCEND_LAUNCH_BLOCKING=1.",
        "zh": "找出 plog 中该错误码附近的 AI CPU 算子并检查其输入；确认 AI CPU 算子包与 toolkit 版本匹配，"
        "并设置 ASCEND_LAUNCH_BLOCKING=1 重跑。",
    },
    "operator_compile_failure": {
        "en": "Read the compile error around this code for the operator and the reason; check that "
        "set_env.sh was sourced, the toolkit and ops packages are one version, and try again with a "
        "clean kernel cache (ASCEND_CACHE_PATH / kernel_meta).",
        "zh": "阅读该错误码附近的编译报错，找出算子和原因；确认已 sour"
        "ce set_env.sh、toolkit 与算子包版本一致，"
        "清空算子编译缓存（ASCEND_CACHE_PATH / kernel_meta）后重试。",
    },
    "operator_dtype_unsupported": {
        "en": "The operator rejected a data type: find the op and input named in the message, cast that "
        "input to a type the op supports on NPU (often float16/float32/int32), or check the op's "
        "support list for this chip.",
        "zh": "算子拒绝了某个数据类型：找到报错中的算子和输入，把该输入转换为 NPU 上支持的类型"
        "（常见为 float16/float32/int32），或查阅该芯片上此算子的支持列表。",
    },
    "op_shape_unsupported": {
        "en": "The operator rejected a shape, format or attribute: compare the values in the message "
        "with what the op accepts, print the input shapes just before the call, and reshape or make "
        "the input contiguous.",
        "zh": "算子拒绝了某个 shape、格式或属性：将报错中的值与算子的约束对比，在调用前打印输入 shape，"
        "调整 shape 或使输入连续（contiguous）。",
    },
    "operator_not_implemented": {
        "en": "The op or this form of it is not available here: check the op's support list for this "
        "chip and CANN version, upgrade CANN / torch_npu, or use an equivalent op.",
        "zh": "该算子或其这种用法在此处不可用：查阅此芯片和 CANN 版本的算子支持列表，升级 CANN / torch_npu，"
        "或改用等价算子。",
    },
    "operator_binary_missing": {
        "en": "Check that the ops/kernels package for this chip is installed and matches the toolkit, "
        "and that set_env.sh was sourced (ASCEND_OPP_PATH).",
        "zh": "确认已安装与 toolkit 匹配的本芯片算子/kernels 包，并已 source set_env.sh（ASCEND_OPP_PATH）。",
    },
    "version_mismatch": {
        "en": "Compare the versions on every machine: CANN toolkit and ops packages, driver and firmware "
        "(npu-smi info), torch and torch_npu; all ranks must run the same set.",
        "zh": "比对每台机器上的版本：CANN toolkit 与算子包、驱动与固件（npu-smi info）、torch 与 torch_npu；"
        "所有 rank 必须使用同一套版本。",
    },
    "npu_context_not_set": {
        "en": "The call ran in a thread or process that never selected a device: call "
        "torch.npu.set_device (or aclrtSetDevice) in that thread or worker before any NPU work.",
        "zh": "调用发生在从未选定设备的线程或进程中：在该线程或 worker 做任何 NPU 操作前调用 "
        "torch.npu.set_device（或 aclrtSetDevice）。",
    },
    "environment_not_configured": {
        "en": "Check the environment variable the message names and that CANN's set_env.sh was "
        "sourced in the shell that started the job.",
        "zh": "检查报错中提到的环境变量，并确认启动作业的 shell 中已 source CANN 的 set_env.sh。",
    },
    "graph_fuser_unsupported": {
        "en": "The operation is not allowed while a graph is being captured or compiled: find the op "
        "the message names, move it out of the captured region (or run that part eagerly), or "
        "check that this CANN / torch_npu supports it in graph mode.",
        "zh": "图捕获或图编译期间不允许该操作：找到报错中的算子"
        "，把它移出捕获区域（或让该部分以单算子模式运行），"
        "或确认当前 CANN / torch_npu 在图模式下支持它。",
    },
    "needs_more_evidence": {
        "en": "The code says where the failure surfaced, not why: collect the plog of the same process "
        "(~/ascend/log, or ASCEND_SLOG_PRINT_TO_STDOUT=1), look for the first error before this line, "
        "and re-run with ASCEND_LAUNCH_BLOCKING=1 so the error is reported where it happens.",
        "zh": "该错误码说明故障在哪里暴露，而非原因：收集同一进程的 plog（~/ascend/log，或设置 "
        "ASCEND_SLOG_PRINT_TO_STDOUT=1），查找此行之前的第一个错误，并设置 ASCEND_LAUNCH_BLOCKING=1 重跑，"
        "让错误在发生处报告。",
    },
    "needs_more_evidence:GE": {
        "en": "Graph compile or run failed: read the GE lines just before this code for the node and "
        "op; dump the graph with DUMP_GE_GRAPH=1 and check the plog (~/ascend/log) of the same time.",
        "zh": "图编译或执行失败：阅读该错误码前的 GE 日志，找出节点和算子；设置 DUMP_GE_GRAPH=1 导出图，"
        "并查看同一时间的 plog（~/ascend/log）。",
    },
    "needs_more_evidence:HCCL": {
        "en": "A collective failed: find the first rank that reported an error (compare all rank logs "
        "by time), read its plog around this code, and check the communicator's settings on that rank.",
        "zh": "集合通信失败：找出最先报错的 rank（按时间比对所有 "
        "rank 日志），阅读其 plog 中该错误码附近的内容，"
        "并检查该 rank 的通信域配置。",
    },
    "needs_more_evidence:ACL": {
        "en": "An ACL call returned this code: find which API call (the line names it) and its arguments; "
        "the plog (~/ascend/log) of the same time usually shows the runtime or driver error behind it.",
        "zh": "某个 ACL 接口返回了该错误码：找出是哪个接口调用（日志行中有名字）及其参数；同一时间的 plog"
        "（~/ascend/log）通常给出其背后的 runtime 或驱动错误。",
    },
}

_CJK = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uff00-\uffef]")


def category_of(entry: dict[str, Any]) -> str:
    """The taxonomy category of one code, from the first CATEGORY_TABLE row that fits."""
    text = " ".join(str(entry.get(key) or "") for key in ("class", "title", "message")).replace("_", " ")
    for category, system, pattern in CATEGORY_TABLE:
        if re.search(system, entry["system"]) and re.search(pattern, text):
            return category
    return "needs_more_evidence"


def advice_key(category: str, system: str) -> str:
    """The ADVICE row for a category, specialised by system for the catch-all where one exists."""
    special = f"{category}:{system}"
    return special if special in ADVICE else category


def link(reference: str | None) -> str:
    """`owner/repo path@commit` as a URL where the host is known, else the document's name."""
    if not reference:
        return ""
    match = re.fullmatch(
        r"(?P<owner>[\w.-]+)/(?P<repo>[\w.-]+) (?P<path>\S+)@(?P<commit>[0-9a-f]+)(?: .*)?", reference
    )
    if match is None:
        return reference
    host = HOSTS.get(match["owner"])
    if host is None:
        return f"{match['owner']}/{match['repo']} {match['path']}"
    return f"{host}/{match['repo']}/blob/{match['commit']}/{match['path']}"


def _messages(entry: dict[str, Any]) -> list[str]:
    """The printed templates, current first; doc text in Chinese is upstream's prose, not a template."""
    texts = [entry.get("message"), *(variant.get("message") for variant in entry.get("variants") or ())]
    kept: list[str] = []
    for text in texts:
        if text and not _CJK.search(text) and text not in kept:
            kept.append(text)
    return kept


def _source_of(entry: dict[str, Any]) -> str:
    if entry["class"] == "HcclResult":
        return link(HCCL_TYPES)
    return link(entry.get("doc") or entry["source"])


def record(entry: dict[str, Any]) -> dict[str, Any]:
    """The shipped record of one codes.yaml entry: facts only, plus our category and advice key."""
    category = category_of(entry)
    data: dict[str, Any] = {
        "code": str(entry["code"]),
        "system": entry["system"],
        "class": entry["class"] or "",
        "title": entry["title"] or "",
        "messages": _messages(entry),
        "category": category,
        "advice": advice_key(category, entry["system"]),
        "source": _source_of(entry),
    }
    optional = {
        "aliases": list(entry.get("aliases") or ()),
        "hex": entry.get("code_hex") or "",
        "maps_to": entry.get("maps_to") or "",
        "status": entry.get("upstream_status") or "",
    }
    data.update({key: value for key, value in optional.items() if value})
    return data


def inner_record(code: str, system: str) -> dict[str, Any]:
    """An inner code: unregistered by design, so it has no title; what follows it says the cause."""
    category = "needs_more_evidence"
    return {
        "code": code,
        "system": system,
        "class": "inner error (unregistered)",
        "title": "Internal_Error",
        "messages": ["Internal error!", "Inner Error!"],
        "category": category,
        "advice": advice_key(category, system),
        "source": "",
    }


def build(entries: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The catalogue document: every entry's record, then the inner codes the entries lack."""
    records = [record(entry) for entry in entries]
    taxonomy = yaml.safe_load((ROOT / "ascend_doctor" / "rulebase" / "taxonomy.yaml").read_text("utf-8"))
    for item in records:
        if item["category"] not in taxonomy["categories"] or item["advice"] not in ADVICE:
            raise SystemExit(
                f"{item['code']}: category {item['category']!r} is not in the taxonomy or has no advice"
            )
    known = {item["code"] for item in records}
    records += [inner_record(code, system) for code, system in INNER_CODES.items() if code not in known]
    return {
        "generated_by": "scripts/gen_catalogue.py",
        "source_codes": len(records)
        - sum(1 for item in records if item["class"] == "inner error (unregistered)"),
        "advice": ADVICE,
        "codes": records,
    }


# The E/W codes are found by their first five characters and one digit more: the prefilter then
# looks for 132 literals, not 620 (with 620, hyperscan scanned the 100 MB bench log 20% slower).
# A code that shares a prefix but is not catalogued is dropped when the finding is made.
PREFIX = 5


def _token_prefixes(records: list[dict[str, Any]]) -> list[str]:
    codes = {item["code"] for item in records if re.fullmatch(r"[EW][0-9A-Z]\d{4}", item["code"])}
    return sorted({code[:PREFIX] for code in codes})


def _chunks(codes: list[str], limit: int) -> list[list[str]]:
    """The code prefixes dealt round-robin into alternations of at most `limit` characters. Each
    holds E and W codes: a prefix all branches share would be factored out of the alternation,
    and the prefilter would then look for `1000` instead of `E1000`."""
    count = 1
    while len("|".join(codes[::count])) > limit:
        count += 1
    chunks = [codes[start::count] for start in range(count)]
    if any(len({code[0] for code in chunk}) < 2 for chunk in chunks):
        raise SystemExit("an alternation of codes has one first letter; its literals would be cut short")
    return chunks


# The shipped file holds one row per code with these fields, and each source once: a list of
# mappings with repeated keys and links was twice the size and took twice as long to parse.
FIELDS = ("code", "system", "class", "title", "messages", "category", "advice", "source")
OPTIONAL = ("aliases", "hex", "maps_to", "status")


def pack(catalogue: dict[str, Any]) -> dict[str, Any]:
    """The document as shipped: rows of FIELDS + OPTIONAL values, sources as indexes."""
    sources = list(dict.fromkeys(item["source"] for item in catalogue["codes"]))
    index = {source: number for number, source in enumerate(sources)}
    rows = []
    for item in catalogue["codes"]:
        row = [index[item[key]] if key == "source" else item[key] for key in FIELDS]
        row += [item.get(key, "") for key in OPTIONAL]
        rows.append(row)
    packed = {key: value for key, value in catalogue.items() if key != "codes"}
    return {**packed, "fields": [*FIELDS, *OPTIONAL], "sources": sources, "codes": rows}


def unpack(document: dict[str, Any]) -> dict[str, Any]:
    """`pack` undone: the records as `build` made them."""
    records = []
    for row in document["codes"]:
        item = dict(zip(document["fields"], row))
        item["source"] = document["sources"][item["source"]]
        records.append({key: value for key, value in item.items() if key in FIELDS or value})
    unpacked = {key: value for key, value in document.items() if key not in ("fields", "sources", "codes")}
    return {**unpacked, "codes": records}


def _main_source(records: Iterable[dict[str, Any]]) -> str:
    """The source most of these codes come from (a registry or header), for a rule's `sources`."""
    counts: dict[str, int] = {}
    for item in records:
        counts[item["source"]] = counts.get(item["source"], 0) + 1
    return max(sorted(counts), key=lambda source: counts[source])


def rules_document(catalogue: dict[str, Any]) -> str:
    """rules/catalogue.yaml: a rule for the E/W codes as whole tokens, one for numeric codes in an
    error framing. Their findings are replaced per code from the catalogue (rulebase/catalogue.py)."""
    token_patterns = [
        rf"(?<![A-Za-z0-9_])(?P<code>(?:{'|'.join(chunk)})[0-9])(?![A-Za-z0-9_])"
        for chunk in _chunks(_token_prefixes(catalogue["codes"]), 1800)
    ]
    header = (
        "# Generated by scripts/gen_catalogue.py from the CANN error-code catalogue: do not edit.\n"
        "# These rules find catalogued codes in log lines; each finding is replaced by the code's\n"
        "# own entry (ascend_doctor/rulebase/catalogue.json) at ranking time, and a line that a more\n"
        "# specific rule explains gives no catalogue finding.\n"
    )
    rules = [
        {
            "id": "catalogue.error-code",
            "category": "needs_more_evidence",
            "severity": "error",
            "confidence": "low",
            "kind": "symptom",
            "title": {
                "en": "CANN error code (from the code catalogue)",
                "zh": "CANN 错误码（来自错误码目录）",
            },
            "cause": {
                "en": "The line carries a CANN error code that no more specific rule explains.",
                "zh": "该行带有一个 CANN 错误码，没有更具体的规则能解释它。",
            },
            "fix": dict(ADVICE["needs_more_evidence"]),
            "patterns": token_patterns,
            "sources": [_main_source(i for i in catalogue["codes"] if i["code"][:1] in "EW" and i["source"])],
            "examples": {
                "match": [
                    "[ERROR] EL0004: Failed to allocate memory requested by HCCL module.",
                    "RuntimeError: ... errCode: EZ0001",
                    "EE9999: Inner Error!",
                ],
                "no_match": ["id=XEL00045 done", "EL0004X", "E99990: nothing"],
            },
        },
        {
            "id": "catalogue.numeric-code",
            "category": "needs_more_evidence",
            "severity": "error",
            "confidence": "low",
            "kind": "symptom",
            "title": {
                "en": "CANN numeric error code (from the code catalogue)",
                "zh": "CANN 数字错误码（来自错误码目录）",
            },
            "cause": {
                "en": "The line reports a numeric CANN return code that no more specific rule explains.",
                "zh": "该行报告了一个数字形式的 CANN 返回码，没有更具体的规则能解释它。",
            },
            "fix": dict(ADVICE["needs_more_evidence"]),
            "patterns": [NUMERIC_PATTERN],
            "sources": [
                _main_source(i for i in catalogue["codes"] if i["code"][:1] not in "EW" and i["source"])
            ],
            "examples": {
                "match": [
                    "aclrtMalloc failed, error code is 207001",
                    "Stream Synchronize failed, stream_id=3, retCode=0x26, [aicore exception]",
                    "aclError:507015",
                    "[Code:-8005] dcmi call failed",
                    "launch failed for Add, errno:561000",
                    "[NNOP][CheckDtypeValid] errno[161002] OpName:[aclnnMatmul_1]",
                ],
                "no_match": ["2024-05-01 12:00:00 pid 507015 size 207001", "the return value was 507015"],
            },
        },
    ]
    return header + yaml.safe_dump({"rules": rules}, allow_unicode=True, sort_keys=False, width=4096)


# Numbers are ambiguous: only in a framing that says "this is an error code". The framing words
# are the prefilter literals; the code itself is looked up in the catalogue afterwards.
NUMERIC_PATTERN = (
    r"(?i:error ?code(?: is| ?[:=])|errcode ?[:=]|ret ?code ?[:=]|acl ?error ?[:=]"
    r"|\berror ?=|errno ?[:=\[]|\[code ?[:=])\s*\[?(?P<code>0x[0-9a-f]+|-?\d+)\b"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("codes_yaml", type=Path, help="codes.yaml of the CANN error-code knowledge base")
    parser.add_argument("--catalogue", type=Path, default=CATALOGUE, help="JSON to write")
    parser.add_argument("--rules", type=Path, default=RULES, help="rule file to write")
    args = parser.parse_args(argv)
    entries = yaml.safe_load(args.codes_yaml.read_text("utf-8"))
    catalogue = build(entries)
    args.catalogue.write_text(
        json.dumps(pack(catalogue), ensure_ascii=False, separators=(",", ":")) + "\n", "utf-8"
    )
    args.rules.write_text(rules_document(catalogue), "utf-8")
    print(f"{len(catalogue['codes'])} codes -> {args.catalogue}, {args.rules}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
