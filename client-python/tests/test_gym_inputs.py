"""ccscope.gym's checks of what a user passes (intervals, actions, seeds), and
the end of an episode when the controlled flow finishes; against a real server."""

from __future__ import annotations

import struct

import numpy as np
import pytest

pytest.importorskip("gymnasium")

from ccscope import gym  # noqa: E402
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


# -- a flow that finishes -----------------------------------------------------

# rrul with one flow per group, the upload 300 KB: up/0 finishes in about
# 0.6 s of the 30 s run, and the engine then releases it.
RRUL = {"flows.up.size": "300KB", "flows.up.count": 1, "flows.down.count": 1}


def _until_terminated(env, most):
    """Step ``env`` (cwnd 100) until it terminates; its last observation and info."""
    for _ in range(most):
        obs, _, terminated, truncated, info = env.step([100])
        if terminated:
            assert not truncated
            return obs, info
    pytest.fail(f"the episode did not end in {most} steps")


@pytest.mark.parametrize("size_known", [True, False], ids=["size", "released"])
def test_a_finished_group_flow_ends_the_episode(client, monkeypatch, size_known):
    # Before, the step after the flow finished failed: flow "up/0" is not running.
    # Without its size (a group drawing sizes from a distribution), the
    # episode ends when the engine releases the flow: zeros but its bytes.
    if not size_known:
        monkeypatch.setattr(gym, "_flow_size", lambda config, name: gym._NO_SIZE)
    env = CCEnv("rrul", flow="up/0", set=RRUL, interval="20ms", client=client)
    try:
        env.reset(seed=1)
        obs, info = _until_terminated(env, 100)
        assert info["flow_finished"] and 0 < info["sim_time_ps"] < 2 * 10**12
        if not size_known:
            assert not obs.any()
        with pytest.raises(RuntimeError, match="flow 'up/0' has finished, which ended the episode; call reset"):
            env.step([100])
        env.reset(seed=1)  # a new episode steps again
        assert not env.step([100])[2]
    finally:
        env.close()


def test_a_step_past_the_horizon_raises(client):
    # Before, it went on answering terminated, and over a longer scenario it
    # applied the action and observed a new state past the episode's end.
    env = CCEnv("p-rtr-p", set={"runtime.duration": "50ms"}, interval="10ms", client=client)
    try:
        env.reset(seed=1)
        obs, info = _until_terminated(env, 10)
        assert not info["flow_finished"] and info["sim_time_ps"] == 50 * 10**9
        with pytest.raises(RuntimeError, match="reached the scenario's horizon; call reset"):
            env.step([100])
        env.reset(seed=1)
        assert not env.step([100])[2]
    finally:
        env.close()


def test_a_finished_flow_ends_the_vector_envs_episode_and_it_resets(client):
    venv = CCVectorEnv(2, "rrul", flow="up/0", set=RRUL, interval="50ms", client=client)
    try:
        venv.reset(seed=1)
        for _ in range(100):
            _, _, term, _, _ = venv.step([[100], [100]])
            if term.all():
                break
        assert term.tolist() == [True, True]
        _, rew, term, _, _ = venv.step([[100], [100]])  # NEXT_STEP autoreset
        assert rew.tolist() == [0.0, 0.0] and term.tolist() == [False, False]
        venv.step([[100], [100]])
    finally:
        venv.close()


def test_a_sized_scenario_flow_ends_the_episode_when_delivered(client):
    # A scenario flow (not a group's) stays after it finishes; its episode
    # ends at the step its receiver has all of its size.
    env = CCEnv("p-rtr-p", set={"flows.f0.size": "300KB"}, interval="20ms", client=client)
    try:
        env.reset(seed=1)
        obs, info = _until_terminated(env, 200)
        assert info["flow_finished"] and info["sim_time_ps"] < 10**12 and obs[0] > 0
    finally:
        env.close()


def test_a_released_flow_folds_to_zeros_without_negative_deltas():
    from ccscope.gym import _NO_SIZE, _fold

    counts = [7, 9]
    running = struct.pack("<13q", 10, 20, 0, 5, 40 * 10**9, 40 * 10**9, 10**6, 10**6, 100, 7, 9, 0, 1000)
    row, _, finished = _fold(running, counts, False, _NO_SIZE)
    assert not finished and row[0] == 20
    # Released (proto: zeros but t_ps and bytes_delivered): finished, and
    # the loss and retransmission deltas are 0, not minus the totals.
    gone = struct.pack("<13q", 20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 300_000)
    row, reward, finished = _fold(gone, counts, False, _NO_SIZE)
    assert finished and row[6] == 0 and row[7] == 0 and reward == 0.0 and counts == [7, 9]
    # Not yet started (zeros, nothing delivered): not finished.
    idle = struct.pack("<13q", 20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    assert not _fold(idle, [0, 0], False, _NO_SIZE)[2]
    # Delivered its size: finished.
    assert _fold(running, [7, 9], False, 1000)[2]
