"""Client and Session behaviour against the fake transport (no server)."""

from __future__ import annotations

import ccscope
import pytest
from ccscope import codec, errors
from ccscope.transport import FakeTransport
from fakeserver import PS, FakeServer


@pytest.fixture
def fake():
    srv = FakeServer()
    t = FakeTransport(srv)
    c = ccscope.Client(t, timeout=2)
    yield c, t, srv
    c.close()


def test_hello_is_sent_first_with_the_protocol_version(fake):
    c, t, _ = fake
    assert t.sent[0]["op"] == "hello"
    assert t.sent[0]["version"] == codec.PROTOCOL_VERSION
    assert c.engine_version == "0.1.0"


def test_request_ids_increase_and_responses_match(fake):
    c, t, _ = fake
    c.stats()
    c.stats()
    ids = [r["id"] for r in t.sent]
    assert ids == sorted(set(ids)), f"request ids {ids} not strictly increasing"


def test_open_step_and_position(fake):
    c, t, _ = fake
    s = c.open("toy", seed=0, set={"trace.detail": "change"})
    assert t.sent[-1] == {"id": t.sent[-1]["id"], "op": "open", "scenario": "toy", "seed": 0,
                          "set": {"trace.detail": "change"}}  # fmt: skip
    assert (s.id, s.scenario, s.seed, s.flows, s.horizon_ps) == ("s1", "toy", 0, ["f0"], PS)
    pos = s.step("250ms")
    assert (pos.sim_time_ps, pos.done) == (PS // 4, False)
    assert s.sim_time_ps == PS // 4 and s.sim_time_s == 0.25
    s.step(events=1)
    assert t.sent[-1]["events"] == 1 and "time" not in t.sent[-1]


def test_open_dict_and_json_file(fake, tmp_path):
    c, t, _ = fake
    c.open({"name": "x"})
    assert t.sent[-1]["config"] == {"name": "x"}
    p = tmp_path / "scn.json"
    p.write_text('{"name": "fromfile"}')
    c.open(str(p))
    assert t.sent[-1]["config"] == {"name": "fromfile"}
    c.open(p)
    assert t.sent[-1]["config"] == {"name": "fromfile"}
    # A path without .json is a file too, as on the command line; a bare
    # name is a built-in's.
    q = tmp_path / "scenarios" / "mine"
    q.parent.mkdir()
    q.write_text('{"name": "noext"}')
    c.open(str(q))
    assert t.sent[-1]["config"] == {"name": "noext"} and "scenario" not in t.sent[-1]
    c.open("mine")
    assert t.sent[-1]["scenario"] == "mine" and "config" not in t.sent[-1]


def test_open_sends_files_given_in_memory(fake, tmp_path, monkeypatch):
    c, t, _ = fake
    monkeypatch.chdir(tmp_path)
    (tmp_path / "disk.trace").write_text("3\n")
    (tmp_path / "mem.trace").write_text("on disk, not sent\n")
    cfg = {"links": [{"ab": {"trace": {"file": "mem.trace"}}}, {"ab": {"trace": {"file": "disk.trace"}}}]}
    c.open(cfg, files={"mem.trace": "1\n1\n", "extra.trace": b"2\n"})
    assert t.sent[-1]["files"] == {"mem.trace": "1\n1\n", "disk.trace": b"3\n", "extra.trace": b"2\n"}
    with pytest.raises(TypeError, match="takes {name: text or bytes}, not list"):
        c.open(cfg, files=["mem.trace"])


@pytest.mark.parametrize(
    "kwargs, exc",
    [
        ({}, ValueError),  # neither time nor events
        ({"time": "1s", "events": 3}, ValueError),  # both
        ({"time": "1 fortnight"}, ValueError),  # not a duration
        ({"events": 0}, ValueError),
    ],
)
def test_step_argument_errors_are_caught_before_sending(fake, kwargs, exc):
    c, t, _ = fake
    s = c.open("toy")
    n = len(t.sent)
    with pytest.raises(exc):
        s.step(**kwargs)
    assert len(t.sent) == n, "a bad step reached the wire"


def test_server_errors_raise_their_class(fake):
    c, _, _ = fake
    with pytest.raises(errors.NotFound) as e:
        c.open("nope")
    assert e.value.path == "scenario"
    s = c.open("toy")
    with pytest.raises(errors.BadArguments) as e:
        s.act(link="l0", rate="fast")
    assert e.value.path == "action.rate"


def test_run_feeds_progress_to_the_bar_and_returns_digest(fake, capsys):
    c, _, _ = fake
    s = c.open("toy")
    seen = []
    pos = s.run(progress=False)
    assert pos.done and pos.digest == "0123456789abcdef" and s.digest == pos.digest
    s2 = c.open("toy")
    c._pushes.clear()
    # the low-level call hands this request's progress pushes to the callback
    c.call("run", {"session": s2.id}, on_progress=seen.append)
    assert [p.fraction for p in seen] == [0.25, 0.5, 1.0]


def test_run_with_progress_bar(fake):
    c, _, srv = fake
    srv.now = 0
    s = c.open("toy")
    pos = s.run(progress=True)
    assert pos.done


def test_stream_yields_pushed_batches_and_unsubscribes(fake):
    c, t, srv = fake
    s = c.open("toy")
    batches = list(s.stream("flows", step="200ms"))
    rows = sum(b.num_rows for b in batches)
    assert rows == 10, f"stream rows = {rows}, want 10 (one per 100 ms for 1 s)"
    assert srv.subscribed == []
    steps = [r for r in t.sent if r["op"] == "step"]
    assert [r["time"] for r in steps] == ["200ms"] * 5


def test_stream_left_early_still_unsubscribes(fake):
    c, _, srv = fake
    s = c.open("toy")
    for _ in s.stream("flows", step="100ms"):
        break
    assert srv.subscribed == []


def test_signals_summary_checkpoint(fake, tmp_path):
    c, _, _ = fake
    s = c.open("toy")
    s.step("500ms")
    tb = s.signals("flows")
    assert tb.num_rows == 5
    sec = ccscope.with_seconds(tb)
    assert sec.column_names[:3] == ["t_ps", "t_s", "flow"]
    assert sec["t_s"].to_pylist() == [0.0, 0.1, 0.2, 0.3, 0.4]
    summ = s.summary()
    assert summ["flows"][0]["goodput_bps"] == 9 * 10**7
    assert summ.flow("f0")["rtt_p99_ps"] is None
    assert "90 Mbps" in summ._repr_html_()
    cp = s.checkpoint()
    path = tmp_path / "cp.msgpack"
    cp.save(path)
    assert ccscope.Checkpoint.load(path) == cp
    assert cp.sim_time_ps == PS // 2


def test_checkpoint_load_rejects_other_files(tmp_path):
    p = tmp_path / "x"
    p.write_bytes(codec.encode({"format": "something else"}))
    with pytest.raises(errors.CcscopeError):
        ccscope.Checkpoint.load(p)


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"link": "l0"}, {"link": "l0", "flow": "f0", "rate": 1}, {"flow": "f0"}],
)
def test_actions_need_one_target_and_a_value(kwargs):
    with pytest.raises(ValueError):
        ccscope.make_action(**kwargs)


def test_action_defaults_dir_ab():
    assert ccscope.make_action(link="b", queue_limit=50) == {"link": "b", "dir": "ab", "queue_limit": 50}


def test_action_carries_path_models():
    a = ccscope.make_action(
        link="b", loss={"kind": "periodic", "every": 10}, jitter={"kind": "5g_nr"}, outage="100ms", duplicate=0.01
    )
    assert a == {
        "link": "b", "dir": "ab", "loss": {"kind": "periodic", "every": 10},
        "jitter": {"kind": "5g_nr"}, "outage": "100ms", "duplicate": 0.01,
    }  # fmt: skip


def test_action_duplicate_zero_is_sent():
    assert ccscope.make_action(link="b", duplicate=0) == {"link": "b", "dir": "ab", "duplicate": 0}


def test_session_context_closes(fake):
    c, _, srv = fake
    with c.open("toy") as s:
        pass
    assert s.closed and srv.closed == ["s1"]
    s.close()  # idempotent
    assert srv.closed == ["s1"]


def test_session_html(fake):
    c, _, _ = fake
    s = c.open("toy")
    h = s._repr_html_()
    assert "toy" in h and "f0 (cubic)" in h and "seed" in h


def test_lost_connection_raises_connection_lost():
    t = FakeTransport(lambda req: [{"id": req["id"], "ok": True, "result": {}}] if req["op"] == "hello" else [])
    c = ccscope.Client(t, timeout=2)
    with pytest.raises(errors.ConnectionLost):
        c.stats()
    assert c.closed
    with pytest.raises(errors.ConnectionLost):
        c.stats()


def test_timeout_closes_the_client():
    t = FakeTransport(lambda req: [{"id": req["id"], "ok": True, "result": {}}] if req["op"] == "hello" else [])
    c = ccscope.Client(t, timeout=0.05)
    t._handler = None
    t.closed = False
    # recv returns None on timeout while open; make it wait instead of ending
    orig = t.recv
    t.recv = lambda timeout: None if timeout is not None else orig(timeout)
    with pytest.raises(errors.ConnectionLost, match="no response"):
        c.stats()
    assert c.closed


def test_response_to_another_request_is_a_protocol_error():
    def handler(req):
        if req["op"] == "hello":
            return [{"id": req["id"], "ok": True, "result": {}}]
        return [{"id": req["id"] + 100, "ok": True, "result": {}}]

    c = ccscope.Client(FakeTransport(handler), timeout=1)
    with pytest.raises(errors.ProtocolError):
        c.stats()


def test_version_refusal():
    def handler(req):
        return [{"id": req["id"], "ok": False, "error": {"code": "version", "message": "major 2 only"}}]

    with pytest.raises(errors.ProtocolVersionError):
        ccscope.Client(FakeTransport(handler))


def test_signals_marks_dropped_rows(fake):
    c, _, srv = fake
    s = c.open("toy")
    s.step("300ms")
    assert s.signals("flows").schema.metadata is None and s.dropped_rows == {"flows": 0}
    srv.dropped = 42
    t = s.signals("flows")
    assert s.dropped_rows == {"flows": 42}
    assert t.schema.metadata[b"ccscope.dropped_rows"] == b"42"


def test_ccs_from_a_server_before_1_4_says_so(fake):
    # The fake speaks 1.0, whose scenarios result has no "ccs".
    c, _, _ = fake
    assert [x["name"] for x in c.scenarios()] == ["toy"]
    with pytest.raises(errors.ProtocolError, match="protocol 1.4"):
        c.ccs()
