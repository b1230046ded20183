"""ccscope.trace_capacity: a Mahimahi trace's capacity by window, checked by
hand and against what the simulator's trace link delivers."""

from __future__ import annotations

import bisect

import ccscope
import pytest

OPP = 1504 * 8  # bits per opportunity


def test_capacity_by_window_by_hand(tmp_path):
    # Opportunities at 1, 1 and 3 ms; looping shifts them by 3 ms: 4, 4, 6,
    # then 7, which lies past the 7 ms covered.
    path = tmp_path / "t.trace"
    path.write_text("1\n1\n\n3\n")
    one = ccscope.trace_capacity(path, window="1ms", until="7ms")
    assert one["t_ps"].to_pylist() == [i * 10**9 for i in range(7)]
    assert one["capacity_bps"].to_pylist() == [c * OPP * 1000 for c in (0, 2, 0, 1, 2, 0, 1)]
    # 2 ms windows: 2, 1 and 2 opportunities, then 1 in the last, 1 ms long.
    two = ccscope.trace_capacity(str(path), window="2ms", until=7 * 10**9)
    assert two["capacity_bps"].to_pylist() == [OPP * 1000, OPP * 500, OPP * 1000, OPP * 1000]
    once = ccscope.trace_capacity(path, window="1ms", until="7ms", loop=False)
    assert once["capacity_bps"].to_pylist() == [c * OPP * 1000 for c in (0, 2, 0, 1, 0, 0, 0)]


@pytest.mark.parametrize(
    "text, match",
    [
        ("1\n2x\n", "line 2: '2x' is not a millisecond count"),
        ("5\n3\n", "line 2: 3 ms is before"),
        ("0\n0\n", "no opportunity after 0 ms"),
    ],
)
def test_bad_traces_name_the_line(tmp_path, text, match):
    path = tmp_path / "bad.trace"
    path.write_text(text)
    with pytest.raises(ValueError, match=match):
        ccscope.trace_capacity(path, until="1s")


def test_a_file_needs_until_and_a_direction_a_trace(client, tmp_path):
    path = tmp_path / "t.trace"
    path.write_text("1\n")
    with pytest.raises(ValueError, match="until="):
        ccscope.trace_capacity(path)
    with client.open("pump") as s:
        with pytest.raises(ValueError, match=r"links\[bottleneck\].ab is not driven by a trace"):
            ccscope.trace_capacity(s, link="bottleneck")
        with pytest.raises(ValueError, match="no link 'nope'"):
            ccscope.trace_capacity(s, link="nope")
        with pytest.raises(ValueError, match="give link= .and dir=.: the scenario's trace-driven directions are none"):
            ccscope.trace_capacity(s)


def test_the_one_trace_direction_is_the_default(client):
    # cellular's downlink (bottleneck/ab) is its only trace-driven direction:
    # without link=, that is the one read; asked for the other direction,
    # there is none to read.
    with client.open("cellular") as s:
        assert ccscope.trace_capacity(s).equals(ccscope.trace_capacity(s, link="bottleneck", dir="ab"))
        with pytest.raises(ValueError, match="directions are none"):
            ccscope.trace_capacity(s, dir="ba")


def test_a_backlogged_trace_link_delivers_its_capacity(client):
    # The pump (120 Mbps) into the shipped cellular trace, which it always
    # exceeds: after the first window (whose first two opportunities come
    # before the first packet), each 500 ms delivers, 19 ms of wire later,
    # exactly what the trace's opportunities in it carry: 1500 of each 1504
    # bytes.
    over = {
        "links.bottleneck.ab": {
            "trace": {"file": "traces/cellular.trace"},
            "qdisc": {"kind": "fifo", "limit": "1000p"},
        },
        "trace.detail": "change",
        "runtime.duration": "20s",
    }
    with client.open("pump", set=over) as s:
        s.run(progress=False)
        cap = ccscope.trace_capacity(s, link="bottleneck", window="500ms")
        d = s.signals("delivery")
    t, got = d["t_ps"].to_pylist(), d["bytes_delivered"].to_pylist()

    def delivered_by(at: int) -> int:
        i = bisect.bisect_left(t, at)
        return got[i - 1] if i else 0

    w, wire = 500 * 10**9, 19 * 10**9
    assert cap.num_rows == 40
    for start, bps in list(zip(cap["t_ps"].to_pylist(), cap["capacity_bps"].to_pylist()))[1:-1]:
        bits = 8 * (delivered_by(start + w + wire) - delivered_by(start + wire))
        assert bits == bps * 1500 // 1504 * w // 10**12, start
    mean = sum(cap["capacity_bps"].to_pylist()) / cap.num_rows
    assert 13.6e6 < mean < 13.9e6  # README: the shipped trace averages 13.7 Mbps
