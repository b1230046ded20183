"""What the client sends is what the user gave: refused with a reason, never altered."""

from __future__ import annotations

import ccscope
import pytest
from ccscope import errors
from ccscope.transport import FakeTransport
from fakeserver import FakeServer

PS = 10**12


@pytest.fixture
def fake():
    t = FakeTransport(FakeServer())
    with ccscope.Client(t, timeout=2) as c:
        yield c, t


CP = {"format": "ccscope-checkpoint/1", "seed": 1}


def test_fork_takes_actions_and_refuses_none(fake):
    c, t = fake
    with pytest.raises(TypeError, match="actions"):
        c.fork(CP)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match=r"fork needs actions, a non-empty list.*restore\(checkpoint\)"):
        c.fork(CP, [])
    with pytest.raises(TypeError, match=r"fork\(actions=...\) is a list of action maps, not a dict"):
        c.fork(CP, {"link": "bottleneck", "rate": "5Mbps"})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"fork actions\[1\] is a str, not an action map"):
        c.fork(CP, [{"link": "bottleneck", "rate": "5Mbps"}, "cwnd=10"])  # type: ignore[list-item]
    assert [r["op"] for r in t.sent] == ["hello"], "a refused fork was sent"


def test_fork_sends_the_actions_as_given(fake):
    c, t = fake
    with pytest.raises(errors.UnknownOp):  # the fake server has no fork
        c.fork(CP, [{"link": "bottleneck", "rate": "5Mbps", "delay": None}, {"flow": "f0", "dir": "ba", "cwnd": 10}])
    assert t.sent[-1]["actions"] == [{"link": "bottleneck", "dir": "ab", "rate": "5Mbps"},
                                     {"flow": "f0", "dir": "ba", "cwnd": 10}]  # fmt: skip


@pytest.mark.server
def test_fork_of_a_flow_with_a_dir_is_refused_by_the_server(client):
    with client.open("p-rtr-p", set={"runtime.duration": "1s"}) as s:
        s.step("100ms")
        cp = s.checkpoint()
    with pytest.raises(errors.BadArguments, match=r"actions\[0\].dir applies to a link, not a flow") as e:
        client.fork(cp, [{"flow": "f0", "dir": "ba", "cwnd": 10}])
    assert e.value.path == "actions[0].dir"
    with client.fork(cp, [{"link": "bottleneck", "queue_limit": 50}]) as f:
        assert f.sim_time_ps == cp.sim_time_ps


def test_open_takes_one_override_as_a_string(fake):
    c, t = fake
    c.open("toy", set="runtime.duration=5s")
    assert t.sent[-1]["set"] == ["runtime.duration=5s"]
    c.open("toy", set=("trace.detail=change", "runtime.duration=5s"))
    assert t.sent[-1]["set"] == ["trace.detail=change", "runtime.duration=5s"]
    n = len(t.sent)
    with pytest.raises(TypeError, match=r"open\(set=...\)\[1\] is \('runtime.duration', '5s'\), not a 'path=value'"):
        c.open("toy", set=["trace.detail=change", ("runtime.duration", "5s")])
    with pytest.raises(TypeError, match=r"open\(set=...\) has the key 3"):
        c.open("toy", set={3: "x"})
    with pytest.raises(TypeError, match=r"open\(set=...\) is \{path: value\} or a list .*not int"):
        c.open("toy", set=5)  # type: ignore[arg-type]
    assert len(t.sent) == n, "a refused open was sent"


@pytest.mark.server
def test_open_with_one_override_string(client):
    with client.open("pump", set="runtime.duration=1s") as s:
        assert s.horizon_ps == PS
