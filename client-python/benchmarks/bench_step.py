"""Benchmark: the learning loop's pace — env steps/s for one env and for N in parallel.

Measures, against a private server on this machine:

- roundtrip: one ``step`` of 1 ms on ``p-rtr-p`` (no action, no
  observation) through ``Client.call``: p50 and p90 wall time;
- env: ``CCEnv`` (cwnd control, 10 ms interval, ``copy=False``) stepping
  ``p-rtr-p``: env steps per second of wall time, each ``env.step``'s wall
  time (p50, p90: the learning loop's round trip, 10 ms of simulation
  included), and the Python process's CPU time per step (what the client
  side costs);
- vector: ``CCVectorEnv`` with N sessions of one server (default 8):
  env steps (N per vector step) per second;
- server CPU: the server process's CPU time per env step over the env and
  vector runs (from /proc; the simulation's share is in the Go benchmark
  BenchmarkEnvStepEngine).

The scenario is p-rtr-p (one CUBIC flow, 100 Mbps bottleneck, 40 ms base
RTT, 1-BDP FIFO) with the cwnd held at 200 packets: each 10 ms step
simulates about 280 events.

Episodes that end are reset (a 20 s scenario holds 2,000 10 ms steps). The
machine's load shows in wall time; CPU time per step is the steadier figure.

Usage: python client-python/benchmarks/bench_step.py [--steps N] [--envs N] [--url URL]
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

import ccscope
from ccscope.gym import CCEnv, CCVectorEnv


def server_cpu(client: ccscope.Client) -> float | None:
    """The private server process's CPU time (user + system) so far, in seconds."""
    server = getattr(client, "_server", None)
    proc = getattr(server, "proc", None)
    if proc is None:
        return None
    try:
        with open(f"/proc/{proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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
        ts = []
        s0 = server_cpu(client)
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(args.steps):
            t = time.perf_counter()
            _, _, term, _, _ = env.step(action)
            ts.append(time.perf_counter() - t)
            if term:
                env.reset()
        w, c = time.perf_counter() - w0, time.process_time() - c0
        s1 = server_cpu(client)
        env.close()
        ts.sort()
        out["env_steps_per_s"] = args.steps / w
        out["env_step_p50_us"] = ts[len(ts) // 2] * 1e6
        out["env_step_p90_us"] = ts[len(ts) * 9 // 10] * 1e6
        out["env_python_cpu_us_per_step"] = c / args.steps * 1e6
        if s0 is not None and s1 is not None:
            out["env_server_cpu_us_per_step"] = (s1 - s0) / args.steps * 1e6

        n = args.envs
        venv = CCVectorEnv(n, "p-rtr-p", control="cwnd", interval="10ms", copy=False, client=client)
        actions = np.full((n, 1), 200.0, np.float32)
        venv.reset(seed=1)
        vsteps = max(1, args.steps // n)
        s0 = server_cpu(client)
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(vsteps):
            venv.step(actions)
        w, c = time.perf_counter() - w0, time.process_time() - c0
        s1 = server_cpu(client)
        venv.close()
        out[f"vector{n}_env_steps_per_s"] = vsteps * n / w
        out[f"vector{n}_python_cpu_us_per_env_step"] = c / (vsteps * n) * 1e6
        if s0 is not None and s1 is not None:
            out[f"vector{n}_server_cpu_us_per_env_step"] = (s1 - s0) / (vsteps * n) * 1e6
    print(json.dumps({k: round(v, 1) for k, v in out.items()}))


if __name__ == "__main__":
    main()
