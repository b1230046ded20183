"""Ctrl-C during a long run or step stops it on the server (the cancel op):
the client, the session and the client's other sessions stay usable."""

from __future__ import annotations

import os
import signal
import threading

import ccscope
import pytest
from ccscope import codec
from ccscope.client import Client
from ccscope.transport import FakeTransport

LONG = {"runtime.duration": "86400s"}  # a day simulated: minutes of wall time (about 14 on p-rtr-p) if not stopped

#: The server CPU a run may take after the cancel is sent. The server looks
#: for a cancel between slices of stepping: a time chunk aims at 2-8 ms of
#: work (server/state.go, chunkWallHi), a batch of events is 65,536 events
#: (stepBatch, some 10-70 ms at 0.15-1 us an event). A second is over ten
#: such slices and their pushes, where a run not stopped goes on for many
#: minutes (86,400 sim s at some 100 sim s per second). It is
#: CPU time, not wall time: a loaded machine stretches the second, not the
#: work in it.
CANCEL_CPU_S = 1.0


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) process pid has taken, from /proc/<pid>/stat (proc(5))."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(") ", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _interrupt_after(seconds: float) -> threading.Timer:
    """SIGINT to this process (the main thread raises KeyboardInterrupt) after seconds."""
    t = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    t.start()
    return t


@pytest.mark.server
@pytest.mark.parametrize("how", ["run", "run_quiet", "step_time", "step_events"])
def test_ctrl_c_cancels_on_the_server(binary_env, how, monkeypatch):
    with ccscope.connect(timeout=5) as c:
        other = c.open("p-rtr-p", set={"runtime.duration": "10s"})
        s = c.open("p-rtr-p", set=LONG)
        # The server's CPU time when the client sends the cancel: how soon
        # the run stops is measured in the server's work after it, which
        # load on the machine does not change.
        pid, at_cancel = c._server.proc.pid, []
        send = c._transport.send

        def send_noting_cancel(data: bytes) -> None:
            if codec.decode(data).get("op") == "cancel":
                at_cancel.append(_cpu_s(pid))
            send(data)

        monkeypatch.setattr(c._transport, "send", send_noting_cancel)
        timer = _interrupt_after(1.0)
        with pytest.raises(KeyboardInterrupt):
            if how == "run":
                s.run()
            elif how == "run_quiet":
                s.run(progress=False)
            elif how == "step_time":
                s.step("86000s")
            else:
                s.step(events=1 << 40)
        timer.join()
        assert len(at_cancel) == 1, "Ctrl-C sent no cancel"
        took = _cpu_s(pid) - at_cancel[0]
        assert took < CANCEL_CPU_S, f"the run took {took:.2f} s of server CPU after the cancel, want under {CANCEL_CPU_S} s"
        # The session took in where the server stopped, and is usable there.
        assert 0 < s.sim_time_ps < s.horizon_ps
        summary = s.summary()
        assert (summary["sim_time_ps"], summary["events"]) == (s.sim_time_ps, s.events)
        # It stands where a session stepped to the same point would.
        ref = c.open("p-rtr-p", set=LONG)
        if how == "step_events":
            ref.step(events=s.events)
        else:
            ref.step(f"{s.sim_time_ps}ps")
        for x in (s, ref):
            x.step("200ms")
        assert s.summary()["digest"] == ref.summary()["digest"]
        # The client and its other sessions go on.
        assert other.step("1s").sim_time_ps == 10**12
        s.close()
        assert s.closed and not c.closed


class _CtrlC(FakeTransport):
    """A fake transport on which Ctrl-C comes while the client waits for a run."""

    def __init__(self, handler) -> None:
        super().__init__(handler)
        self.armed = False

    def send(self, data: bytes) -> None:
        super().send(data)
        self.armed |= self.sent[-1]["op"] == "run"

    def recv(self, timeout):
        if self.armed:
            self.armed = False
            raise KeyboardInterrupt
        return super().recv(timeout)


def _fake(version: str, *, run_first: bool = False):
    """A server of protocol ``version`` that answers a run only when it is
    cancelled (1.1), or late, before the next request's answer (1.0)."""
    runs: list[int] = []
    stopped = {"sim_time_ps": 5 * 10**11, "events": 77, "done": False, "digest": "00ff", "cancelled": True}

    def handler(req):
        op, rid = req["op"], req["id"]
        late = [{"id": r, "ok": True, "result": stopped} for r in runs]
        runs.clear()
        if op == "hello":
            return [{"id": rid, "ok": True, "result": {"version": version, "limits": {}}}]
        if op == "open":
            opened = {"session": "s1", "config": "{}", "horizon_ps": 10**15, "sim_time_ps": 0, "events": 0}
            return [{"id": rid, "ok": True, "result": opened}]
        if op == "run":
            runs.append(rid)
            return []
        answer = {"id": rid, "ok": True, "result": {"session": "s1"} if op == "cancel" else {"sim_time_ps": 1}}
        return [*late, answer] if op != "cancel" or run_first else [answer, *late]

    return handler


@pytest.mark.parametrize("run_first", [False, True])
def test_ctrl_c_sends_cancel_and_takes_in_where_the_run_stopped(run_first):
    t = _CtrlC(_fake("1.1", run_first=run_first))
    c = Client(t)
    s = c.open("x")
    with pytest.raises(KeyboardInterrupt):
        s.run(progress=False)
    assert [r["op"] for r in t.sent] == ["hello", "open", "run", "cancel"]
    assert t.sent[-1]["session"] == "s1"
    assert (s.sim_time_ps, s.events, s.digest) == (5 * 10**11, 77, "00ff")
    assert c.call("summary", {"session": "s1"}) == {"sim_time_ps": 1}  # the cancel's answer was set aside
    assert not c.closed


def test_ctrl_c_on_a_server_without_cancel_is_a_plain_interrupt():
    t = _CtrlC(_fake("1.0"))
    c = Client(t)
    s = c.open("x")
    with pytest.raises(KeyboardInterrupt):
        s.run(progress=False)
    assert [r["op"] for r in t.sent] == ["hello", "open", "run"]
    assert s.sim_time_ps == 0
    assert c.call("summary", {"session": "s1"}) == {"sim_time_ps": 1}  # the run's late answer was set aside
