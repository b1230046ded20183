"""Benchmark: the learning loop's pace — env steps/s for one env and for N in parallel.

Measures, against a private server on this machine:

- roundtrip: one ``step`` of 1 ms on ``p-rtr-p`` (no action, no
  observation) through ``Client.call``: p50 and p90 wall time;
- env: ``CCEnv`` (cwnd control, 10 ms interval, ``copy=False``) stepping
  ``p-rtr-p``: env steps per second of wall time, and the Python process's
  CPU time per step (what the client side costs);
- vector: ``CCVectorEnv`` with N sessions of one server (default 8):
  env steps (N per vector step) per second.

Episodes that end are reset (a 20 s scenario holds 2,000 10 ms steps). The
machine's load shows in wall time; CPU time per step is the steadier figure.

Usage: python client-python/benchmarks/bench_step.py [--steps N] [--envs N] [--url URL]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import ccscope
from ccscope.gym import CCEnv, CCVectorEnv


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=3000, help="env steps per measurement")
    ap.add_argument("--envs", type=int, default=8, help="sessions of the vector env")
    ap.add_argument("--url", help="a running server (default: a private one)")
    args = ap.parse_args()
    out: dict[str, float] = {}
    with ccscope.connect(args.url) as client:
        with client.open("p-rtr-p") as s:
            s.step("1s")
            req = {"session": s.id, "time": "1ms"}
            ts = []
            for _ in range(args.steps):
                t = time.perf_counter()
                client.call("step", req, timeout=None)
                ts.append(time.perf_counter() - t)
            ts.sort()
            out["roundtrip_p50_us"] = ts[len(ts) // 2] * 1e6
            out["roundtrip_p90_us"] = ts[len(ts) * 9 // 10] * 1e6

        env = CCEnv("p-rtr-p", control="cwnd", interval="10ms", copy=False, client=client)
        action = np.array([200.0], np.float32)
        env.reset(seed=1)
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(args.steps):
            _, _, term, _, _ = env.step(action)
            if term:
                env.reset()
        w, c = time.perf_counter() - w0, time.process_time() - c0
        env.close()
        out["env_steps_per_s"] = args.steps / w
        out["env_python_cpu_us_per_step"] = c / args.steps * 1e6

        n = args.envs
        venv = CCVectorEnv(n, "p-rtr-p", control="cwnd", interval="10ms", copy=False, client=client)
        actions = np.full((n, 1), 200.0, np.float32)
        venv.reset(seed=1)
        vsteps = max(1, args.steps // n)
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(vsteps):
            venv.step(actions)
        w, c = time.perf_counter() - w0, time.process_time() - c0
        venv.close()
        out[f"vector{n}_env_steps_per_s"] = vsteps * n / w
        out[f"vector{n}_python_cpu_us_per_env_step"] = c / (vsteps * n) * 1e6
    print(json.dumps({k: round(v, 1) for k, v in out.items()}))


if __name__ == "__main__":
    main()
