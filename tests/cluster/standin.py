"""Local stand-ins for the cluster tools docs/cluster.md uses: `srun`, `pdsh`, `ssh`, `kubectl` and
`hostname`. Each "node" is a directory of $STANDIN_HOMES (its name is the node's); a command run
"on" nodes runs once per node, all at once, each in its own process with HOME and the working
directory set to that node's directory, as it would on the node.

    python standin.py TOOL ARGS...
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _nodes() -> list[str]:
    return sorted(path.name for path in Path(os.environ["STANDIN_HOMES"]).iterdir())


def run_on(nodes: list[str], command: list[str]) -> int:
    """The command on every node at once; the worst exit code, as the tools report it."""
    homes = Path(os.environ["STANDIN_HOMES"])
    running = [
        subprocess.Popen(
            command, cwd=homes / node, env={**os.environ, "HOME": str(homes / node), "STANDIN_NODE": node}
        )
        for node in nodes
    ]
    return max(process.wait() for process in running)


def srun(args: list[str]) -> int:
    """`srun --opt=value... COMMAND...`: COMMAND once on each node of the allocation."""
    while args and args[0].startswith("--"):
        args = args[1:]
    return run_on(_nodes(), args)


def pdsh(args: list[str]) -> int:
    """`pdsh -w HOSTS COMMAND`: COMMAND through a shell on every node (the stand-in's nodes are HOSTS)."""
    assert args[0] == "-w", "pdsh -w HOSTS COMMAND"
    return run_on(_nodes(), ["sh", "-c", " ".join(args[2:])])


def ssh(args: list[str]) -> int:
    """`ssh HOST COMMAND`: COMMAND through a shell on HOST, its output on ours."""
    return run_on([args[0]], ["sh", "-c", " ".join(args[1:])])


def kubectl(args: list[str]) -> int:
    """`kubectl get pods -l LABEL -o name` lists a pod per node; `kubectl exec POD -- COMMAND...`."""
    if args[:2] == ["get", "pods"]:
        assert "-l" in args and args[-2:] == ["-o", "name"], args
        print("\n".join(f"pod/{node}" for node in _nodes()))
        return 0
    assert args[0] == "exec" and args[2] == "--", args
    return run_on([args[1].removeprefix("pod/")], args[3:])


def hostname(_args: list[str]) -> int:
    print(os.environ["STANDIN_NODE"])
    return 0


TOOLS = {"srun": srun, "pdsh": pdsh, "ssh": ssh, "kubectl": kubectl, "hostname": hostname}

if __name__ == "__main__":
    sys.exit(TOOLS[sys.argv[1]](sys.argv[2:]))
