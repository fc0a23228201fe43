# The paper's Table 5 heap growth: grows this worker's memory step by step until the app's function memory (the host's
# and its workers' private resident bytes) is `percent` of the app's memory limit `limit`.
#
# This machine enforces no memory limit (cgroup v1, no memory.max), so the limit is enforced here the way a cgroup v2
# memory.max would charge the app: before each step the function adds up the host's and every worker's private
# resident bytes (VmRSS - RssShmem from /proc/<pid>/status) and the pages of the app's shared-memory files (the cache:
# tmpfs pages are charged to the cgroup as shmem); a step that would take that past the limit fails as the kernel's
# OOM would, and the function answers {"ok": false}. The host's Memory Daemon is what can make room.
import json
import os
import time

import azure.functions as func

MIB = 1 << 20


def _private_bytes(pid: int) -> int:
    rss = shmem = 0
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith("RssShmem:"):
                    shmem = int(line.split()[1]) * 1024
    except OSError:
        return 0
    return max(0, rss - shmem)


def _children(parent: int) -> list:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == parent:
                found.append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    return found


def _shared_memory_bytes() -> int:
    total = 0
    roots = os.environ.get("FUNCTIONS_UNIX_SHARED_MEMORY_DIRECTORIES", "").replace(",", ":").split(":")
    for root in filter(None, roots):
        for folder, _, files in os.walk(root):
            for name in files:
                try:
                    total += os.stat(os.path.join(folder, name)).st_blocks * 512
                except OSError:
                    pass
    return total


def _function_bytes() -> int:
    host = os.getppid()
    return _private_bytes(host) + sum(_private_bytes(p) for p in _children(host))


def main(req: func.HttpRequest) -> func.HttpResponse:
    limit = int(req.params["limit"])
    percent = float(req.params.get("percent", "96"))
    step = int(req.params.get("stepMb", "32")) * MIB
    pause = float(req.params.get("pause", "0.3"))
    target = int(limit * percent / 100)
    held = []
    allocated = 0
    peak = 0
    result = {"ok": True}
    while True:
        function = _function_bytes()
        if function >= target:
            break
        n = min(step, target - function)
        charged = function + _shared_memory_bytes()
        peak = max(peak, charged)
        if charged + n > limit:
            result = {"ok": False, "reason": f"{charged + n} bytes would exceed the {limit}-byte limit "
                                             f"(function {function}, cached {charged - function})"}
            break
        # Every page written, so the worker's RSS grows by the chunk.
        held.append(b"\x01" * n)
        allocated += n
        # Longer than the Memory Daemon's sampling interval (250 ms): it sees each step.
        time.sleep(pause)
    result.update({"allocatedMb": allocated // MIB, "functionMb": _function_bytes() // MIB,
                   "peakChargedMb": peak // MIB, "limitMb": limit // MIB, "targetMb": target // MIB})
    del held
    return func.HttpResponse(json.dumps(result), mimetype="application/json")
