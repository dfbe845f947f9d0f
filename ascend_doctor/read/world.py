"""The job's world size, as the lines that launch it state it (`world_size=8`, `RANK_SIZE=8`,
`--nproc_per_node 8 --nnodes 2`, accelerate's `Num processes: 8`, HCCL's `rankSize:8`).

Read from the first and last bytes of an input whose ranks timed out: with the ranks that did,
it tells which rank never joined.
"""

from __future__ import annotations

from ascend_doctor.regexes import regex

HEAD = 16 * 1024  # the first bytes of an input kept for its launch lines
MAX_WORLD = 1 << 16

_SIZE = regex(rb"(?i:\b(?:dist_)?world[_ ]size|\brank_?size|Num processes)\s*[=:\[]\s*(\d{1,6})\b(?![.\d])")
_PER_NODE = regex(rb"(?i:nproc[_-]per[_-]node)(?:=|\s+)(\d{1,4})\b")
_NODES = regex(rb"(?i:--nnodes)(?:=|\s+)(\d{1,4})\b(?![:\d])")


def world_size(*texts: bytes) -> int:
    """The largest world size the texts state, or 0."""
    sizes = [int(found) for text in texts for found in _SIZE.findall(text)]
    for text in texts:
        per_node = _PER_NODE.findall(text)
        if per_node:
            nodes = _NODES.findall(text)
            sizes.append(int(per_node[-1]) * (int(nodes[-1]) if nodes else 1))
    return max((size for size in sizes if 1 < size <= MAX_WORLD), default=0)
