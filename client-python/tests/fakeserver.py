"""A scripted stand-in for the server, speaking protocol 1.0 through FakeTransport.

It keeps just enough state to answer like the spec says (proto/README.md):
one response per request with the request's id, pushes before the response
that caused them, progress pushes carrying the run request's id.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pyarrow as pa

PS = 10**12
CONFIG = {"name": "toy", "runtime": {"seed": 1, "duration": "1s"}, "flows": [{"id": "f0", "cc": "cubic"}]}


def ipc(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue()


def flows_rows(t0: int, t1: int) -> pa.Table:
    ts = list(range(t0, t1, 10**11))  # a row every 100 ms
    return pa.table({
        "t_ps": pa.array(ts, pa.int64()),
        "flow": ["f0"] * len(ts),
        "cwnd_pkts": pa.array([10 + i for i in range(len(ts))], pa.uint32()),
    })  # fmt: skip


class FakeServer:
    """Handler for ccscope.transport.FakeTransport."""

    def __init__(self) -> None:
        self.now = 0
        self.seq = 0
        self.subscribed: list[str] = []
        self.closed: list[str] = []
        self.dropped = 0  # rows the (pretend) server's bounded trace lost

    def _push(self, **kw: Any) -> dict[str, Any]:
        kw.setdefault("session", "s1")
        kw["seq"] = self.seq
        self.seq += 1
        return kw

    def __call__(self, req: dict[str, Any]) -> list[dict[str, Any]]:
        op, rid = req["op"], req["id"]

        def ok(result: dict[str, Any]) -> dict[str, Any]:
            return {"id": rid, "ok": True, "result": result}

        def fail(code: str, message: str, path: str = "") -> dict[str, Any]:
            return {"id": rid, "ok": False, "error": {"code": code, "message": message, "path": path}}

        if op == "hello":
            if not req["version"].startswith("1."):
                return [fail("version", "unsupported")]
            return [ok({"version": "1.0", "server": "ccscope", "engine_version": "0.1.0", "limits": {}})]
        if op == "open":
            if req.get("scenario") == "nope":
                return [fail("not_found", "no built-in scenario 'nope'", "scenario")]
            return [ok({"session": "s1", "config_hash": "ab" * 32, "config": json.dumps(CONFIG),
                        "seed": req.get("seed", 1), "horizon_ps": PS, "sim_time_ps": 0, "events": 0,
                        "flows": ["f0"], "links": ["l0"],
                        "paths": [{"flow": "f0", "bottleneck": "l0/ab", "bottleneck_bps": 100_000_000,
                                   "base_rtt_ps": 40_000_000_000, "bdp_bytes": 500_000}]})]  # fmt: skip
        if op in ("step", "run"):
            if req["session"] != "s1" or "s1" in self.closed:
                return [fail("not_found", "no session", "session")]
            start = self.now
            if op == "step":
                from ccscope.tables import parse_duration

                self.now = min(PS, self.now + parse_duration(req["time"])) if "time" in req else self.now + 1
            else:
                self.now = PS
            out = []
            if op == "run":
                for frac in (0.25, 0.5, 1.0):
                    out.append(self._push(stream="progress", request=rid, sim_time_ps=int(frac * PS),
                                          events=int(frac * 1000), fraction=frac))  # fmt: skip
            if "flows" in self.subscribed and self.now > start:
                out.append(self._push(stream="flows", arrow=ipc(flows_rows(start, self.now))))
            res = {"sim_time_ps": self.now, "events": self.now // 10**9, "done": self.now >= PS}
            if op == "run":
                res["digest"] = "0123456789abcdef"
            return out + [ok(res)]
        if op == "subscribe":
            self.subscribed = sorted(set(self.subscribed) | set(req["tables"]))
            return [ok({"tables": self.subscribed})]
        if op == "unsubscribe":
            gone = set(req.get("tables") or self.subscribed)
            self.subscribed = [t for t in self.subscribed if t not in gone]
            return [ok({"tables": self.subscribed})]
        if op == "signals":
            t = flows_rows(0, self.now)
            return [ok({"arrow": ipc(t), "rows": t.num_rows, "dropped_rows": self.dropped})]
        if op == "act":
            if "rate" in req["action"] and req["action"]["rate"] == "fast":
                return [fail("bad_args", "rate does not parse", "action.rate")]
            return [ok({"index": 0, "at": {"events": 1, "sim_time_ps": self.now, "drained": True}})]
        if op == "summary":
            return [ok({"scenario": "toy", "seed": 1, "sim_time_ps": self.now, "events": 1, "digest": "00",
                        "flows": [{"id": "f0", "goodput_bps": 9 * 10**7, "rtt_p99_ps": None}], "queues": []})]  # fmt: skip
        if op == "checkpoint":
            return [ok({"checkpoint": {"format": "ccscope-checkpoint/1", "engine_version": "0.1.0",
                                       "config": json.dumps(CONFIG), "config_hash": "ab" * 32, "seed": 1,
                                       "at": {"events": 5, "sim_time_ps": self.now, "drained": True},
                                       "digest": "0123456789abcdef", "actions": []}})]  # fmt: skip
        if op == "close":
            self.closed.append(req["session"])
            return [ok({"session": req["session"], "closed": True})]
        if op == "stats":
            return [ok({"sessions": 1})]
        if op == "scenarios":  # a 1.0 server: no "ccs" (1.4)
            return [ok({"scenarios": [{"name": "toy", "description": "a toy"}]})]
        return [fail("unknown_op", f"no op {op!r}")]
