"""`npu-smi info` read as data: the driver version in its header, each chip (card, name, health, HBM
in use) and the processes holding each card. The table's shape differs by hardware (910 A2, A3 with
two chips a card, 310P without HBM, the first 910); install_layout.md §4 has the samples."""

from __future__ import annotations

import re
from typing import NamedTuple

_HEADER = re.compile(r"npu-smi\s+(\S+)\s+Version:\s*(\S+)")
_USAGE = re.compile(r"(\d+)\s*/\s*(\d+)")
_BUS = re.compile(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d$")


class Chip(NamedTuple):
    npu: int
    chip: int
    name: str
    health: str
    memory_used: int | None  # HBM (or, without HBM, device memory) in use, MB
    memory_total: int | None


class Holder(NamedTuple):
    """A process holding a card."""

    npu: int
    chip: int
    pid: int
    name: str
    memory_mb: int | None


class NpuSmi(NamedTuple):
    driver: str
    chips: tuple[Chip, ...]
    processes: tuple[Holder, ...]

    @property
    def cards(self) -> tuple[int, ...]:
        return tuple(sorted({chip.npu for chip in self.chips}))


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _usage(cell: str) -> tuple[int | None, int | None]:
    """The last `used / total` pair in a cell: HBM when the card has it, else device memory."""
    pairs = _USAGE.findall(cell)
    return (int(pairs[-1][0]), int(pairs[-1][1])) if pairs else (None, None)


def _process(cells: list[str]) -> Holder | None:
    """`| 0       0                 | 632268        | python3.1          | 197 | NA |`"""
    if len(cells) < 4:
        return None
    ids = cells[0].split()
    if len(ids) != 2 or not all(part.isdigit() for part in ids) or not cells[1].isdigit():
        return None
    memory = cells[3].split()[0] if cells[3].split() else ""
    return Holder(
        int(ids[0]), int(ids[1]), int(cells[1]), cells[2], int(memory) if memory.isdigit() else None
    )


def parse(text: str) -> NpuSmi | None:
    """None when the text is not an `npu-smi info` table."""
    header = _HEADER.search(text)
    if header is None:
        return None
    chips: list[Chip] = []
    processes: list[Holder] = []
    first: list[str] | None = None  # the card row waiting for its chip row
    for line in text.splitlines():
        if not line.lstrip().startswith("|"):
            continue
        cells = _cells(line)
        if len(cells) < 3:
            continue
        ids = cells[0].split()
        if first is None and len(ids) >= 2 and ids[0].isdigit() and not ids[1].isdigit():
            first = cells  # `| 0     910B2C   | OK   | 88.3  34  0 / 0 |`
            continue
        if first is not None and ids and ids[0].isdigit() and _BUS.match(cells[1]):
            npu, name = first[0].split()[:2]
            used, total = _usage(cells[2])
            chips.append(Chip(int(npu), int(ids[0]), name, first[1], used, total))
            first = None
            continue
        holder = _process(cells)
        if holder is not None:
            processes.append(holder)
    return NpuSmi(header.group(2), tuple(chips), tuple(processes))
