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
