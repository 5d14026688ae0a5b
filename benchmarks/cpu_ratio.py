"""The flow's CPU time against a plain decode's, for any checkout of this project.

    .venv/bin/python benchmarks/cpu_ratio.py [--tree PATH] [--clip PATH]

Wall times on a shared machine move with other people's load; CPU time (``getrusage`` of this
process: every thread of the decode and of the flow, not Prefect's server process) moves far
less. ``--tree`` runs another checkout's code (``git worktree add /tmp/old COMMIT``) with this
virtual environment, through the two functions every version of ``benchmarks/pipeline.py`` has:
``plain_decode`` and ``run_flow`` (after a warm-up flow on a tiny clip). The default clip is the
10-minute 1080p active clip of ``benchmarks/pipeline.py``. It prints one JSON line: the CPU and
wall seconds of both, their ratios, the detector mode and ``cost.json``'s person block.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
CLIP = "benchmarks/.cache/pipeline-1080p-600s-b-noisy.mp4"


def cpu_s() -> float:
    """CPU time of this process so far (``benchmarks._runs.cpu_seconds``, which an older
    ``--tree`` may lack: its ``benchmarks`` package is the one imported here)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=HERE, help="a checkout (default: this one)")
    parser.add_argument("--clip", type=Path, default=None, help=f"default: <tree>/{CLIP}")
    args = parser.parse_args()
    tree = args.tree.resolve()
    sys.path.insert(0, str(tree))
    os.chdir(tree)
    from prefect.testing.utilities import prefect_test_harness

    from benchmarks.pipeline import clip, plain_decode, run_flow  # the tree's own

    path = (args.clip or tree / CLIP).resolve()
    cpu0, wall0 = cpu_s(), time.perf_counter()
    plain_decode(path)
    decode = (cpu_s() - cpu0, time.perf_counter() - wall0)
    with tempfile.TemporaryDirectory() as tmp, prefect_test_harness(server_startup_timeout=180):
        os.environ["VES_DATA_DIR"] = tmp
        run_flow(Path(tmp), clip(2, False), {})  # the first flow in a process pays start-ups
        cpu0 = cpu_s()
        flow_wall, cost, _ = run_flow(Path(tmp), path, {})
        flow = (cpu_s() - cpu0, flow_wall)
    print(
        json.dumps(
            {
                "tree": str(tree),
                "decode_cpu_s": round(decode[0], 1),
                "decode_wall_s": round(decode[1], 1),
                "flow_cpu_s": round(flow[0], 1),
                "flow_wall_s": round(flow[1], 1),
                "cpu_ratio": round(flow[0] / decode[0], 2),
                "wall_ratio": round(flow[1] / decode[1], 2),
                "mode": cost.get("detector_mode"),
                "person": cost.get("detectors", {}).get("person"),
            }
        )
    )


if __name__ == "__main__":
    main()
