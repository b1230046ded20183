"""Every API call against a real local server (the compiled binary).

The physics checks use the `pump` scenario, whose outcome is known in closed
form: a 120 Mbps constant-rate source of 1500 B packets into a 100 Mbps
bottleneck with a 40 ms base RTT and a 1-BDP FIFO (100 Mbps × 40 ms = 500 kB
= 333 packets of 1500 B).
"""

from __future__ import annotations

import json
import time

import ccscope
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from ccscope import errors

pytestmark = pytest.mark.server

PS = 10**12
MBPS = 10**6


def test_connect_starts_a_server_and_says_hello(client):
    assert client.server_info["version"].startswith("1.")
    assert client.engine_version
    assert client.limits["max_sessions"] > 0
    assert "private local server" in repr(client)


def test_scenarios_lists_the_builtins(client):
    names = [s["name"] for s in client.scenarios()]
    assert names == sorted(names)
    for want in ("pump", "p-rtr-p", "rebbr", "bufferbloat"):
        assert want in names, f"scenarios() = {names}, missing {want}"


def test_open_by_name_dict_and_file(client, tmp_path):
    with client.open("pump", seed=0) as s:
        assert (s.scenario, s.seed, s.flows, s.horizon_ps) == ("pump", 0, ["f0"], 10 * PS)
        assert s.links == ["access", "bottleneck"]
        cfg = s.config
    cfg["runtime"]["duration"] = "1s"
    with client.open(cfg) as s:
        assert s.horizon_ps == PS
    path = tmp_path / "pump.json"
    path.write_text(json.dumps(cfg))
    with client.open(str(path), set=["runtime.duration=2s"]) as s:
        assert s.horizon_ps == 2 * PS


def test_open_sends_the_trace_files_a_scenario_names(client, tmp_path, monkeypatch):
    # A Mahimahi trace of two 1500 B opportunities at millisecond 1, looping
    # every millisecond: 24 Mbps, which the 120 Mbps pump fills. The server
    # reads no files; the client sends the ones the scenario names, relative
    # to the scenario file, or to the working directory for a dict or a
    # built-in's override.
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "mine.trace").write_text("1\n1\n")
    monkeypatch.chdir(tmp_path)
    with client.open("pump", set={"runtime.duration": "2s"}) as s:
        cfg = s.config
    cfg["links"][1]["ab"]["trace"] = {"file": "traces/mine.trace"}
    del cfg["links"][1]["ab"]["rate"]
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "pump.json").write_text(json.dumps(cfg))
    (other / "traces").mkdir()
    (other / "traces" / "mine.trace").write_text("1\n1\n1\n")  # 36 Mbps, beside the file
    for scenario, set, mbps in [
        (cfg, None, 24),
        (str(other / "pump.json"), None, 36),
        ("pump", ["runtime.duration=2s", "links.bottleneck.ab.trace.file=traces/mine.trace"], 24),
        ("pump", {"runtime.duration": "2s", "links.bottleneck.ab.trace": {"file": "traces/mine.trace"}}, 24),
    ]:
        with client.open(scenario, set=set) as s:
            s.run()
            got = s.summary().flow("f0")["goodput_bps"]
            # From the first send at 0 to the end; the first packet arrives
            # after 20 ms of propagation and 1 ms of the trace.
            assert got == pytest.approx(mbps * MBPS * (2 - 0.021) / 2, rel=0.01), (scenario, set, got)
    looked = str(tmp_path / "traces" / "none.trace")
    with pytest.raises(errors.InvalidConfig, match=r'no shipped trace "traces/none\.trace"; no file of that name was sent') as e:
        client.open("pump", set={"links.bottleneck.ab.trace.file": "traces/none.trace"})
    assert e.value.path == "links[bottleneck].ab.trace.file" and e.value.message.endswith(f"(looked for {looked})")
    # A file past the server's message size: the error says what made the message large.
    (tmp_path / "big.trace").write_text("1\n" * (9 << 20))
    with pytest.raises(errors.TooLarge, match=r"the files the scenario names travel with it \(big\.trace 18\.9 MB\)"):
        client.open("pump", set={"links.bottleneck.ab.trace.file": "big.trace"})
    with client.open("pump", set={"runtime.duration": "10ms"}) as s:  # the connection serves on
        s.run()


def test_open_warns_of_an_override_that_drops_fields(client, recwarn):
    # wifi's flow has tcp {"gro_interval": "200us"}: replacing the object drops it.
    with pytest.warns(UserWarning, match=r'set flows\.f0\.tcp replaces the whole object and drops its "gro_interval"'):
        with client.open("wifi", set={"flows.f0.tcp": {"hz": 250}, "runtime.duration": "10ms"}) as s:
            assert s.config["flows"][0]["tcp"]["gro_interval"] == "0s"
    recwarn.clear()
    with client.open("wifi", set={"flows.f0.tcp.hz": 250, "runtime.duration": "10ms"}) as s:
        assert s.config["flows"][0]["tcp"]["gro_interval"] == "200us"
    assert not [w for w in recwarn if "replaces the whole object" in str(w.message)]


def test_open_and_summary_report_each_flows_path(client):
    # pump: h1 -1 Gbps, 1 ms- r1 -100 Mbps, 19 ms- h2; RTT 2 x 20 ms; BDP 100 Mbps x 40 ms = 500 kB
    from ccscope import plot

    with client.open("pump", set={"runtime.duration": "10ms"}) as s:
        p = s.paths["f0"]
        assert (p["bottleneck"], p["bottleneck_bps"], p["base_rtt_ps"], p["bdp_bytes"]) == (
            "bottleneck/ab", 100 * MBPS, 40 * PS // 1000, 500_000)
        assert plot.path_bdp(s, "f0") == (100e6, pytest.approx(0.040))
        s.run(progress=False)
        f = s.summary().flow("f0")
        assert (f["path_bottleneck_bps"], f["path_base_rtt_ps"], f["path_bdp_bytes"]) == (100 * MBPS, 40 * PS // 1000, 500_000)


def test_step_by_time_is_exact(client):
    # The protocol promises that many small steps dispatch the same events as
    # one big one; the digest is the witness.
    with client.open("pump") as a, client.open("pump") as b:
        for _ in range(10):
            a.step("10ms")
        b.step("100ms")
        ca, cb = a.checkpoint(), b.checkpoint()
        assert (ca.events, ca.digest) == (cb.events, cb.digest)
        assert ca.sim_time_ps == 100 * 10**9


def test_step_by_events(client):
    with client.open("pump") as s:
        pos = s.step(events=1000)
        assert pos.events == 1000 and not pos.done


def test_run_to_the_end_matches_the_pump_model(client):
    with client.open("pump", set={"trace.detail": "change"}) as s:
        pos = s.run(progress=True)
        assert pos.done and pos.sim_time_ps == 10 * PS and pos.digest
        summ = s.summary()
        f = summ.flow("f0")
        # The bottleneck drains at 100 Mbps once the pump has reached it
        # (after the 1 ms access hop), so goodput is 100 Mbps of wire bytes.
        assert f["goodput_bps"] == pytest.approx(100 * MBPS, rel=0.005)
        q = {(x["link"], x["dir"]): x for x in summ["queues"]}[("bottleneck", "ab")]
        # The FIFO holds 1 BDP = 500 kB: 333 whole packets of 1500 B.
        assert q["max_backlog_bytes"] == 333 * 1500
        # Packets reach the router from t = 1 ms at 10,000/s and leave at
        # 8,333.3/s: the queue fills its 333 packets after 333 / 1,666.7 =
        # 0.1998 s, and from then on the excess 1,666.7 packets/s is dropped:
        # 1,666.7 × (10 − 0.001 − 0.1998) = 16,332.
        assert q["drops"] == pytest.approx(16_332, abs=2)
        # A full 333-packet FIFO at 100 Mbps waits 333 × 120 µs ≈ 40 ms.
        assert q["sojourn_p99_ps"] == pytest.approx(333 * 120 * 10**6, rel=0.01)


def test_split_flow_legs_are_flows_of_the_session(client):
    # p-we-p's proxy splits f0: the session lists its legs as the traces name
    # them, with each leg's own CC, and acts on and observes a leg by name.
    legs = [{"cc": "bbr"}, {"cc": "reno"}]
    with client.open("p-we-p", set={"flows.f0.legs": legs, "runtime.duration": "2s", "trace.detail": "change"}) as s:
        assert s.flows == ["f0.0", "f0.1"]
        assert s.paths["f0.1"]["bottleneck"] == "last/ab"
        assert "f0.0 (bbr), f0.1 (reno)" in s._repr_html_()
        s.step("1s")
        s.act(flow="f0.1", cwnd=7)
        obs = client.call("step", {"session": s.id, "events": 1, "observe": "f0.1"})["obs"]
        assert obs[1] == 7  # cwnd_pkts, as the action left it
        f = s.signals("flows", flows=["f0"])
        assert set(f["flow"].unique().to_pylist()) == {"f0.0", "f0.1"}


def test_group_flows_are_named_with_their_groups_cc(client):
    with client.open("dumbbell-n", set={"runtime.duration": "10ms"}) as s:
        assert len(s.flows) == 32 and s.flows[0] == "bulk/0"
        assert "[32 flows]" in repr(s)
        page = s._repr_html_()
        assert "bulk/0 (cubic)" in page and "bulk/31 (cubic) (32 flows)" in page
        # 65 links: a host link per flow end and the bottleneck, listed as the flows are.
        assert f", …, {s.links[-1]} (65 links)" in page and s.links[10] not in page
        s.run(progress=False)
        # The summary's page has the group's row too (FCTs, Jain's index).
        summ = s.summary()
        page = summ._repr_html_()
        assert page.count("<table>") == 3 and "jain_bulk" in page and summ["groups"][0]["group"] == "bulk"


def test_signals_tables_and_filters(client):
    with client.open("pump", set={"trace.detail": "change", "runtime.duration": "1s"}) as s:
        s.run(progress=False)
        d = s.signals("delivery", flows=["f0"])
        assert d.column_names == ["t_ps", "flow", "bytes_delivered"]
        assert d.schema.field("t_ps").type == pa.int64()
        assert pc.all(pc.equal(d["flow"], "f0")).as_py()
        # Cumulative delivered bytes grow at the 100 Mbps bottleneck rate.
        t = ccscope.with_seconds(d)
        last = t.slice(t.num_rows - 1)
        rate = last["bytes_delivered"][0].as_py() * 8 / (last["t_s"][0].as_py() - t["t_s"][0].as_py())
        assert rate == pytest.approx(100 * MBPS, rel=0.01)
        q = s.signals("queue")
        assert set(q["link"].unique().to_pylist()) <= {"access", "bottleneck"}
        assert s.to_pandas("delivery").shape[0] == d.num_rows
        assert s.to_polars("delivery").height == d.num_rows
        ev = s.signals("events")
        assert set(ev["kind"].unique().to_pylist()) <= {"drop", "send", "ack", "loss", "retransmit"}
        with pytest.raises(errors.NotFound):
            s.signals("nonsense")
        with pytest.raises(errors.NotFound):
            s.signals("flows", flows=["f9"])


def test_stream_yields_the_same_rows_as_signals(client):
    with client.open("pump", set={"trace.detail": "change", "runtime.duration": "2s"}) as s:
        batches = list(s.stream("delivery", step="250ms"))
        assert batches and all(isinstance(b, pa.RecordBatch) for b in batches)
        streamed = pa.Table.from_batches(batches)
        full = s.signals("delivery")
        assert streamed.equals(full), f"streamed {streamed.num_rows} rows, signals() has {full.num_rows}"
        assert s.done


def test_subscribe_received_and_iteration(client):
    with client.open("pump", set={"trace.detail": "change", "runtime.duration": "500ms"}) as s:
        assert sorted(s.subscribe(["queue", "delivery"], every_ms=0)) == ["delivery", "queue"]
        s.step("100ms")
        q = s.received("queue")
        assert q is not None and q.num_rows > 0
        assert s.received("queue") is None
        assert s.unsubscribe() == []
        rows = sum(b.num_rows for b in s)  # iterating streams `flows` to the end
        assert rows == 0  # a pump has no TCP sender state
        assert s.done


def test_act_checkpoint_restore_fork(client, tmp_path):
    with client.open("pump") as s:
        s.step("2s")
        a = s.act(link="bottleneck", queue_limit=100)
        assert a["index"] == 0 and a["at"]["sim_time_ps"] == 2 * PS
        s.step("1s")
        cp = s.checkpoint()
        assert cp.sim_time_ps == 3 * PS and len(cp.actions) == 1
        assert cp.actions[0]["action"]["queue_limit"] == "100p"
        path = tmp_path / "cp.ccscope"
        cp.save(path)
        loaded = ccscope.Checkpoint.load(path)
        assert loaded == cp
        with client.restore(loaded) as r:
            assert (r.sim_time_ps, r.events, r.digest) == (cp.sim_time_ps, cp.events, cp.digest)
            s.run(progress=False)
            r.run(progress=False)
            assert r.digest == s.digest, "a restored session diverged from its original"
        # Halving the buffer again at 3 s: a 50-packet FIFO waits at most
        # 50 × 120 µs = 6 ms, the 100-packet one 12 ms.
        with client.fork(cp, [{"link": "bottleneck", "queue_limit": 50}]) as f:
            f.run(progress=False)
            q = {(x["link"], x["dir"]): x for x in f.summary()["queues"]}[("bottleneck", "ab")]
            assert q["sojourn_p50_ps"] <= 50 * 120 * 10**6 * 1.01
        with client.open("pump") as live:
            live.step("1s")
            with live.fork([{"link": "bottleneck", "rate": "50Mbps"}]) as lf:
                assert lf.sim_time_ps == PS
                lf.run(progress=False)
                assert lf.summary().flow("f0")["goodput_bps"] < 80 * MBPS


def test_act_on_a_flow_and_bad_actions(client):
    with client.open("pump") as s:
        s.step("10ms")
        with pytest.raises(errors.NotFound):
            s.act(link="nope", rate="1Mbps")
        with pytest.raises(errors.BadArguments) as e:
            s.act(link="bottleneck", rate="fast")
        assert e.value.path == "action.rate"
        with pytest.raises(errors.NotFound):
            s.act(flow="f9", cwnd=10)


def test_act_path_models(client):
    with client.open("pump") as s:
        s.step("10ms")
        s.act(link="bottleneck", loss={"kind": "gilbert_elliott", "p_gb": 0.01, "p_bg": 0.3}, outage="50ms")
        with pytest.raises(errors.BadArguments) as e:
            s.act(link="bottleneck", jitter={"kind": "wobbly"})
        assert e.value.path == "action.jitter.kind"
        logged = s.checkpoint().actions[0]["action"]
        assert logged["loss"]["kind"] == "gilbert_elliott" and logged["outage"] == "50ms"


def test_stats(client):
    with client.open("pump"):
        st = client.stats()
        assert st["sessions"] >= 1 and st["connections"] >= 1


@pytest.mark.parametrize(
    "scenario, kwargs, exc, path, why",
    [
        ("no-such-scenario", {}, errors.NotFound, "scenario", 'no built-in scenario "no-such-scenario"'),
        ("pump", {"set": {"links.bottleneck.rate": "fast"}}, errors.InvalidConfig, "links[bottleneck].rate",
         '"fast" is not a rate'),
        ("pump", {"set": {"links.nowhere.rate": "1Mbps"}}, errors.InvalidConfig, "set.links.nowhere.rate",
         'no element with id "nowhere" in "links"'),
        ("pump", {"set": ["no equals sign"]}, errors.InvalidConfig, "set.no equals sign", "an override is path=value"),
        ({"name": "x"}, {}, errors.InvalidConfig, "runtime", 'give at least {"duration": "10s"}'),
    ],
)
def test_bad_open_raises(client, scenario, kwargs, exc, path, why):
    with pytest.raises(exc) as e:
        client.open(scenario, **kwargs)
    assert e.value.path == path
    assert why in e.value.message


def test_bad_requests_raise(client):
    with pytest.raises(errors.UnknownOp):
        client.call("frobnicate")
    with client.open("pump") as s:
        with pytest.raises(errors.BadArguments) as e:
            client.call("step", {"session": s.id, "time": "1 parsec"})
        assert e.value.path == "time"
        assert 'has unknown unit "parsec"' in e.value.message
        with pytest.raises(errors.BadArguments) as e:
            client.call("step", {"session": s.id, "time": "1s", "tyme": "1s"})
        assert e.value.path == "tyme"
        assert "unknown argument tyme for step" in e.value.message
        cp = s.checkpoint()
    bad = dict(cp.data, digest="0000000000000000")
    with pytest.raises(errors.ReplayMismatch):
        client.restore(bad)
    with pytest.raises(errors.NotFound):
        s.step("1s")  # closed by the with block
    # Arguments the client cannot send are errors that name them, and the
    # connection goes on serving.
    with pytest.raises(TypeError, match="checkpoint is a Checkpoint .* or its map, not str"):
        client.restore("nope")
    with pytest.raises(TypeError, match="not list"):
        client.fork([1, 2], [])
    with pytest.raises(OverflowError, match="open argument 'seed'"):
        client.open("pump", seed=2**64)
    with client.open("pump", seed=2**64 - 1) as s:
        assert s.seed == 2**64 - 1


def test_version_refusal_closes_the_connection(binary_env):
    with ccscope.connect() as c:
        with pytest.raises(errors.ProtocolVersionError):
            c.call("hello", {"version": "2.0"})
        assert c.closed


def test_connect_to_a_url_with_and_without_token(client):
    url = client._server.url
    base, _, query = url.partition("?")
    token = query.removeprefix("token=")
    with ccscope.connect(url) as c2:
        assert c2.scenarios()
    with ccscope.connect(base, token=token) as c3:
        assert "private" not in repr(c3)
        assert c3.stats()["connections"] >= 2
    with pytest.raises(errors.Unauthorized):
        ccscope.connect(base, token="0" * 32)
    with pytest.raises(errors.Unauthorized):
        ccscope.connect(base)
    with pytest.raises(errors.ConnectionLost):
        ccscope.connect("ws://127.0.0.1:1/", timeout=2)


def test_run_receives_progress_pushes(client):
    # Progress pushes come about every 100 ms of wall time during a run
    # (a 400 s pump run takes ~0.8 s here), each with the run's request id
    # and a growing clock. The server looks at the clock between chunks it
    # sizes to take at most 8 ms (one the machine stalls takes longer), so
    # at least one push per 3 × 108 ms the run took, however fast the
    # machine.
    seen = []
    with client.open("pump", set={"runtime.duration": "400s"}) as s:
        start = time.monotonic()
        res = client.call("run", {"session": s.id}, timeout=None, on_progress=seen.append)
        took = time.monotonic() - start
    assert len(seen) >= int(took / 0.324), f"{len(seen)} progress pushes in a run of {took:.2f} s"
    times = [p.sim_time_ps for p in seen]
    assert times == sorted(times) and all(0 < p.fraction <= 1 for p in seen)
    assert {p.request for p in seen} == {client._next_id - 2}  # the run's id (close came after)
    assert res["sim_time_ps"] == 400 * PS


def test_link_table_holds_the_handovers(client):
    # leo-handover's changes take the bottleneck down at 15, 30 and 45 s
    # for 120 to 180 ms and move its delay; between them its capacity
    # process runs through its states. The link table says so, as a step
    # function.
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import ccscope.plot

    with client.open("leo-handover", set={"trace.detail": "sampled"}) as s:
        s.run(progress=False)
        lk = s.signals("link")
        cfg = s.config
        fig = ccscope.plot.queue(s, link="bottleneck")
    assert [a.get_ylabel() for a in fig.axes[:3]] == ["backlog (KB)", "sojourn (ms)", "service rate (Mbps)"]
    mpl.pyplot.close(fig)
    ab = lk.filter(pc.and_(pc.equal(lk["link"], "bottleneck"), pc.equal(lk["dir"], "ab")))
    t, rate, delay = (ab[c].to_pylist() for c in ("t_ps", "rate_bps", "delay_ps"))
    assert t == sorted(t) and t[0] == 0

    def at(ps):
        i = max(k for k, x in enumerate(t) if x <= ps)
        return rate[i], delay[i]

    link = next(lk_ for lk_ in cfg["links"] if lk_["id"] == "bottleneck")
    states = {int(st["rate"].removesuffix("Mbps")) * MBPS for st in link["ab"]["capacity"]["states"]}
    base = ccscope.parse_duration(link["ab"]["delay"])
    assert at(14 * PS) in {(r, base) for r in states}
    for ch in cfg["changes"]:
        start = ccscope.parse_duration(ch["at"])
        if ch["dir"] != "ab":
            continue
        end, d = start + ccscope.parse_duration(ch["outage"]), ccscope.parse_duration(ch["delay"])
        assert at(start) == (0, d) and at(end - 1) == (0, d)
        assert at(end)[0] in states and at(end)[1] == d
    assert len(set(rate) - {0}) >= 2  # the process moved between states


def test_report_writes_the_run_so_far_as_a_page(client, tmp_path):
    # The page of `ccscope run --report`, of the session's trace so far: its
    # embedded time axis ends at the session's clock, and it draws the flow.
    with client.open("p-rtr-p", set={"runtime.duration": "2s", "trace.detail": "change"}) as s:
        with pytest.raises(errors.InvalidRequest, match="has not run yet"):
            s.report(tmp_path / "early.html")
        s.step("300ms")
        out = s.report(tmp_path / "run.html")
        assert out == tmp_path / "run.html"
        page = out.read_text()
        data = json.loads(page.split('<script type="application/json" id="ccscope-data">')[1].split("</script>")[0])
        grid = data["grid"]
        assert 300 * PS // 1000 <= grid["w_ps"] * grid["n"] < 300 * PS // 1000 + grid["n"]
        assert "flow f0 · cubic" in [g["title"] for g in data["groups"]]
        s.report(tmp_path / "coarse.html", buckets=50)
        assert '"n":50' in (tmp_path / "coarse.html").read_text()
        with pytest.raises(errors.BadArguments, match="buckets"):
            s.report(tmp_path / "bad.html", buckets=0)
        with pytest.raises(ValueError, match="must end in .html"):
            s.report(tmp_path / "run.txt")
        with pytest.raises(errors.NotFound, match="f9"):
            s.report(tmp_path / "nf.html", flows=["f9"])
    # Many flows: the first 32 are drawn unless flows= names others.
    with client.open("dumbbell-n", set={"flows.bulk.count": 40, "runtime.duration": "50ms", "trace.detail": "change"}) as s:
        s.run(progress=False)
        page = s.report(tmp_path / "many.html").read_text()
        assert "the page draws the panels of 32 of the run&#39;s 40 flows" in page
        page = s.report(tmp_path / "one.html", flows=["bulk/39"]).read_text()
        assert "flow bulk/39 · cubic" in page and "flow bulk/0 · cubic" not in page
    # A split flow's id draws both legs, as signals(flows=) selects both.
    with client.open("p-we-p", set={"runtime.duration": "50ms", "trace.detail": "change"}) as s:
        s.run(progress=False)
        page = s.report(tmp_path / "legs.html", flows=["f0"]).read_text()
        assert "flow f0.0 · cubic" in page and "flow f0.1 · cubic" in page
