"""Session arguments checked before anything is sent: a refusal names the argument and the reason."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.server


@pytest.mark.parametrize(
    "step, why",
    [
        ("0s", r"stream\(step=...\) is '0s': it must be above zero"),
        ("0ms", r"stream\(step=...\) is '0ms': it must be above zero"),
        ("-1ms", r"stream\(step=...\) is '-1ms': it must be above zero"),
        (5, r"stream\(step=...\) is 5, not a duration"),
        ("10", r"stream\(step=...\): '10' is not a duration"),
    ],
)
def test_stream_refuses_a_step_that_would_not_advance(client, step, why):
    # Before, step="0s" looped for ever at sim time 0.
    with client.open("p-rtr-p", seed=1) as s:
        with pytest.raises(ValueError, match=why):
            next(s.stream("flows", step=step, until="10ms"))
        assert s.sim_time_ps == 0
        # Nothing was subscribed: a later stream works as ever.
        assert s.subscribe(["queue"]) == ["queue"]


def test_stream_names_a_bad_until(client):
    with (
        client.open("p-rtr-p", seed=1) as s,
        pytest.raises(ValueError, match=r"stream\(until=...\): '1 minute' is not a duration"),
    ):
        next(s.stream("flows", step="1ms", until="1 minute"))


@pytest.mark.parametrize("events", [1.5, True, "3", 0, -2])
def test_step_refuses_events_that_are_not_a_positive_count(client, events):
    # Before, events=1.5 ran one event: int() took what the server refuses.
    with client.open("p-rtr-p", seed=1) as s, pytest.raises(ValueError, match=r"step\(events=...\) is a positive whole number"):
        s.step(events=events)


def test_act_sends_a_flows_dir_for_the_server_to_refuse(client):
    # Before, make_action dropped dir beside flow and the action applied.
    from ccscope.errors import BadArguments

    with client.open("p-rtr-p", seed=1) as s:
        with pytest.raises(BadArguments) as e:
            s.act(flow="f0", dir="ba", cwnd=10)
        assert e.value.path == "action.dir"
        assert s.checkpoint().actions == []


def test_session_fork_needs_actions(client):
    with client.open("p-rtr-p", seed=1) as s:
        s.step("10ms")
        with pytest.raises(TypeError):
            s.fork()  # type: ignore[call-arg]
        with pytest.raises(ValueError, match="fork needs actions"):
            s.fork([])
        with s.fork([{"link": "bottleneck", "queue_limit": 50}]) as f:
            assert f.id != s.id


def test_run_and_step_want_a_duration_with_its_unit(client):
    # Before, until=10 failed inside the regex with "expected string or bytes-like object".
    with client.open("p-rtr-p", seed=1) as s:
        for call in (lambda: s.run(until=10, progress=False), lambda: s.step(10)):
            with pytest.raises(TypeError, match=r"10 is not a duration; give it with its unit, as a string such as '10s'"):
                call()
        assert s.sim_time_ps == 0
