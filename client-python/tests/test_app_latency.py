"""ccscope.app_latency: one-way application latency of a constant-rate flow, against the path's arithmetic."""

from __future__ import annotations

import ccscope
import pytest

pytestmark = pytest.mark.server

PROBE = {
    "name": "probe",
    "runtime": {"duration": "2s"},
    "nodes": [{"id": "h1", "kind": "endpoint"}, {"id": "r1", "kind": "router"}, {"id": "h2", "kind": "endpoint"}],
    "links": [
        {"id": "access", "a": "h1", "b": "r1", "rate": "1Gbps", "delay": "1ms"},
        {"id": "bottleneck", "a": "r1", "b": "h2", "rate": "20Mbps", "delay": "16500us"},
    ],
    "flows": [{"id": "f1", "src": "h1", "dst": "h2", "cc": "cubic", "app": {"kind": "rate", "rate": "100Kbps"}}],
    "trace": {"detail": "sampled"},
}


def test_one_way_latency_on_an_idle_path(client):
    # The handshake: a 52 B SYN and SYN-ACK (IP + TCP + timestamps) each
    # serialised at 1 Gbps and 20 Mbps, plus the 35 ms base RTT. Then one
    # 1448 B segment (1500 B on the wire) per 11584 bits / 100 kb/s =
    # 115.84 ms, each taking 17.5 ms of propagation plus 1500 B at 1 Gbps
    # (12 µs) and at 20 Mbps (600 µs) = 18.112 ms, one way. The first
    # segment leaves right behind the handshake's last ACK (52 B), which
    # reaches the 20 Mbps link 12 µs − 0.416 µs ahead of it and holds it for
    # 20.8 µs: 9.216 µs more.
    first = 35_000_000_000 + 2 * (416_000 + 20_800_000)
    with client.open(PROBE) as s:
        s.run(progress=False)
        lat = ccscope.app_latency(s.signals("delivery"), "f1", first_write_ps=first, write_interval_ps=115_840_000_000)
    assert lat.num_rows == 17  # writes at 35 ms + k · 115.84 ms delivered within 2 s
    assert lat["latency_ps"].to_pylist() == [18_121_216_000] + [18_112_000_000] * 16
