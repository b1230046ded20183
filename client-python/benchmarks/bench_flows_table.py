"""Benchmark: a 20 s p-rtr-p run's every-change flows table into pandas, from connect().

Measures, end to end on one machine:

- connect: start the private server and say hello;
- run: open `p-rtr-p` with trace.detail=change and run it to the end (20 s
  of simulated time; the server records every change of the sender state);
- fetch: the `signals` op for the flows table: the server builds the Arrow
  IPC stream, msgpack frames it, the websocket carries it, the client reads
  the Arrow stream (zero-copy);
- pandas: `Table.to_pandas()`.

rows/s is the flows table's rows over the fetch + pandas time (the transfer
this benchmark is about), and also over the whole wall time from connect().

Usage: python client-python/benchmarks/bench_flows_table.py [--url URL] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import time

import ccscope


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", help="a running server (default: a private one)")
    ap.add_argument("--token")
    ap.add_argument("--scenario", default="p-rtr-p")
    ap.add_argument("--repeat", type=int, default=3, help="fetch + convert this many times; the best is reported")
    args = ap.parse_args()

    t0 = time.perf_counter()
    with ccscope.connect(args.url, token=args.token) as client:
        t_conn = time.perf_counter()
        with client.open(args.scenario, set={"trace.detail": "change"}) as s:
            s.run(progress=False)
            t_run = time.perf_counter()
            best = None
            for _ in range(args.repeat):
                a = time.perf_counter()
                table = s.signals("flows")
                b = time.perf_counter()
                df = table.to_pandas()
                c = time.perf_counter()
                if best is None or c - a < best[0] + best[1]:
                    best = (b - a, c - b)
            t_end = time.perf_counter()
    fetch_s, pandas_s = best
    rows = len(df)
    out = {
        "scenario": args.scenario,
        "sim_s": s.horizon_ps / 1e12,
        "rows": rows,
        "arrow_bytes": table.nbytes,
        "connect_s": round(t_conn - t0, 4),
        "run_s": round(t_run - t_conn, 4),
        "fetch_s": round(fetch_s, 4),
        "to_pandas_s": round(pandas_s, 4),
        "transfer_rows_per_s": round(rows / (fetch_s + pandas_s)),
        "wall_from_connect_s": round(t_conn - t0 + t_run - t_conn + fetch_s + pandas_s, 4),
        "rows_per_s_from_connect": round(rows / (t_conn - t0 + t_run - t_conn + fetch_s + pandas_s)),
        "total_wall_s": round(t_end - t0, 4),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
