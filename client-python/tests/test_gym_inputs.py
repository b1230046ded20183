"""ccscope.gym's checks of what a user passes; against a real server."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("gymnasium")

from ccscope.gym import CCEnv, CCVectorEnv  # noqa: E402

pytestmark = pytest.mark.server


# -- interval -----------------------------------------------------------------


@pytest.mark.parametrize("interval", ["0s", "0ms", "-10ms"])
@pytest.mark.parametrize("make", [CCEnv, lambda **kw: CCVectorEnv(2, **kw)], ids=["CCEnv", "CCVectorEnv"])
def test_an_interval_of_zero_or_less_is_refused(client, make, interval):
    # A zero interval never advanced the clock: the episode never ended.
    with pytest.raises(ValueError, match=r"interval is '.*': it must be above zero"):
        make(scenario="p-rtr-p", interval=interval, client=client)


# -- actions ------------------------------------------------------------------


@pytest.fixture
def env(client):
    e = CCEnv("p-rtr-p", control="cwnd", client=client)
    e.reset(seed=1)
    yield e
    e.close()


@pytest.mark.parametrize(
    "action",
    [np.array([1.0, 2.0]), np.ones((1, 1)), [1.0, 2.0], "abc", np.array(["5"]), True, None, [[5.0]]],
    ids=["two", "1x1", "list2", "str", "str-array", "bool", "none", "nested"],
)
def test_an_action_not_of_the_action_space_is_refused(env, action):
    # Before, an array of two used its first element and "abc" its 'a'.
    with pytest.raises(ValueError, match=r"action must be one number, as an array of shape \(1,\)"):
        env.step(action)


def test_a_nan_action_says_so(env):
    with pytest.raises(ValueError, match="action is NaN"):
        env.step([float("nan")])


@pytest.mark.parametrize("action", [np.array([50.0], np.float32), np.float32(50.0), 50, 50.0, [50], (50.0,)])
def test_numbers_and_shape_1_arrays_are_actions(env, action):
    obs, *_ = env.step(action)
    assert obs[0] == 50  # cwnd_pkts


def test_vector_actions_must_have_the_batch_shape(client):
    venv = CCVectorEnv(2, "p-rtr-p", client=client)
    try:
        venv.reset(seed=0)
        for bad in (np.ones((2, 2)), np.ones(4), np.ones((3, 1)), ["1", "2"]):
            with pytest.raises(ValueError, match=r"actions must be numbers of shape \(2, 1\) or \(2,\)"):
                venv.step(bad)
        with pytest.raises(ValueError, match=r"actions\[1\] is NaN"):
            venv.step([10.0, float("nan")])
        obs, *_ = venv.step([30, 40])
        assert obs[:, 0].tolist() == [30.0, 40.0]
    finally:
        venv.close()


# -- seeds --------------------------------------------------------------------


def test_vector_reset_takes_seeds_as_gymnasium_does(client):
    venv = CCVectorEnv(3, "p-rtr-p", client=client)
    try:
        seeds = lambda: [s.seed for s in venv._sessions]  # noqa: E731
        venv.reset(seed=(4, 5, 6))
        assert seeds() == [4, 5, 6]
        venv.reset(seed=10)
        assert seeds() == [10, 11, 12]
        # None keeps that sub-environment's next seed (its last + num_envs).
        venv.reset(seed=[20, None, 22])
        assert seeds() == [20, 14, 22]
        for bad, why in (
            ([1, 2, 3, 4], "seed has 4 entries; a list of seeds needs exactly 3"),
            ([1, 2], "seed has 2 entries; a list of seeds needs exactly 3"),
            ((1, 2), "seed has 2 entries; a list of seeds needs exactly 3"),
            ([1, -2, 3], r"seed\[1\] is -2; a seed is a non-negative integer or None"),
            ([1, 2.5, 3], r"seed\[1\] is 2.5"),
            ("123", "seed is None, an integer or a list of 3 seeds"),
            (-1, "seed is -1; a seed is a non-negative integer"),
        ):
            with pytest.raises(ValueError, match=why):
                venv.reset(seed=bad)
        assert seeds() == [20, 14, 22], "a refused seed changed the sessions"
    finally:
        venv.close()
