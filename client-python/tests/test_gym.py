"""ccscope.gym.CCEnv against a real server (needs the TCP endpoint)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("gymnasium")

from ccscope.gym import OBSERVATION, CCEnv
from gymnasium.utils.env_checker import check_env

pytestmark = pytest.mark.server


def test_env_passes_the_gymnasium_checker(client):
    env = CCEnv("p-rtr-p", control="cwnd", interval="10ms", client=client)
    try:
        check_env(env, skip_render_check=True)  # includes: same seed, same first observation
    finally:
        env.close()
    assert not client.closed, "an environment closed a client it did not make"


def _episode(client, seed, steps=60):
    env = CCEnv("p-rtr-p", control="pacing_rate", interval="20ms", client=client)
    try:
        obs, _ = env.reset(seed=seed)
        out = [obs]
        for _ in range(steps):
            obs, _, _, _, info = env.step(np.array([40.0], np.float32))
            out.append(obs)
        return np.array(out), info
    finally:
        env.close()


def test_episodes_replay_exactly_and_the_action_takes_effect(client):
    a, info = _episode(client, seed=3)
    b, _ = _episode(client, seed=3)
    assert np.array_equal(a, b), "the same seed and actions gave different observations"
    assert info["sim_time_ps"] == 61 * 20 * 10**9
    rate = dict(zip(OBSERVATION, a[-1]))
    # Paced at 40 Mbps below a 100 Mbps bottleneck: the pacing rate is the
    # action, and after 1.2 s the delivery rate sampler measures 40 Mbps.
    assert rate["pacing_rate_mbps"] == pytest.approx(40.0)
    assert rate["delivery_rate_mbps"] == pytest.approx(40.0, rel=0.05)
    # With no queue to speak of, srtt is the 40 ms base RTT.
    assert rate["srtt_ms"] == pytest.approx(40.0, rel=0.05)


def test_bad_control_is_refused(client):
    with pytest.raises(ValueError):
        CCEnv("p-rtr-p", control="ssthresh", client=client)


def test_vector_env_matches_single_envs_and_autoresets(client):
    from ccscope.gym import CCVectorEnv

    # Three sessions stepped in parallel give, each, the episode a single
    # environment gives with that seed and those actions.
    venv = CCVectorEnv(3, "p-rtr-p", control="pacing_rate", interval="20ms", client=client)
    try:
        obs, _ = venv.reset(seed=5)
        seq = [obs]
        for k in range(30):
            obs, rew, term, trunc, _ = venv.step(np.array([[20.0], [40.0], [60.0]], np.float32))
            seq.append(obs)
        seq = np.array(seq)
    finally:
        venv.close()
    for i, rate in enumerate((20.0, 40.0, 60.0)):
        env = CCEnv("p-rtr-p", control="pacing_rate", interval="20ms", client=client)
        try:
            o, _ = env.reset(seed=5 + i)
            single = [o] + [env.step(np.array([rate], np.float32))[0] for _ in range(30)]
        finally:
            env.close()
        assert np.array_equal(seq[:, i], np.array(single)), f"sub-env {i} differs from a single env"
        # Paced below the 100 Mbps bottleneck, each delivers its pacing rate.
        final = dict(zip(OBSERVATION, seq[-1, i]))
        assert final["delivery_rate_mbps"] == pytest.approx(rate, rel=0.05)


def test_vector_env_resets_an_ended_episode_on_the_next_step(client):
    from ccscope.gym import CCVectorEnv

    # A 100 ms scenario in 20 ms steps: reset takes the first step, four
    # more reach the horizon, and the step after that starts a new episode
    # (reward 0, first observation again: the same seed gives the same one
    # since sub-env 0's next episode has seed 0 + num_envs = 2 ≠ 0, compare
    # with a fresh reset of that seed).
    venv = CCVectorEnv(2, "p-rtr-p", interval="20ms", set={"runtime.duration": "100ms"}, copy=False, client=client)
    try:
        first, _ = venv.reset(seed=0)
        buf = first
        terms = []
        for _ in range(4):
            obs, rew, term, _, _ = venv.step(np.full((2, 1), 50.0))
            assert obs is buf, "copy=False returns the same buffer"
            terms.append(term.copy())
        assert [t.tolist() for t in terms] == [[False, False]] * 3 + [[True, True]]
        obs, rew, term, _, _ = venv.step(np.full((2, 1), 50.0))
        assert rew.tolist() == [0.0, 0.0] and term.tolist() == [False, False]
        again = obs.copy()
    finally:
        venv.close()
    ref = CCVectorEnv(2, "p-rtr-p", interval="20ms", set={"runtime.duration": "100ms"}, client=client)
    try:
        want, _ = ref.reset(seed=[2, 3])
    finally:
        ref.close()
    assert np.array_equal(again, want)


def test_env_over_the_websockets_transport_gives_the_same_episode(client):
    import ccscope

    # The same seed and actions over the other transport (the websockets
    # library's client) give the same observations.
    a, _ = _episode(client, seed=4, steps=20)
    with ccscope.connect(transport="websockets") as other:
        b, _ = _episode(other, seed=4, steps=20)
    assert np.array_equal(a, b)


def test_vector_env_reports_a_session_error_with_its_path(client):
    from ccscope.errors import BadArguments
    from ccscope.gym import CCVectorEnv

    venv = CCVectorEnv(2, "p-rtr-p", flow="f9", client=client)
    try:
        with pytest.raises(BadArguments) as e:
            venv.reset(seed=0)
        assert e.value.path == "steps[0].observe"
    finally:
        venv.close()


def test_nan_actions_are_refused(client):
    from ccscope.gym import CCVectorEnv

    venv = CCVectorEnv(2, "p-rtr-p", client=client)
    env = CCEnv("p-rtr-p", client=client)
    try:
        venv.reset(seed=0)
        with pytest.raises(ValueError):
            venv.step(np.array([[10.0], [np.nan]]))
        env.reset(seed=0)
        with pytest.raises(ValueError):
            env.step(np.array([np.nan], np.float32))
    finally:
        venv.close()
        env.close()


def test_default_reward_computed_inline_equals_default_reward(client):
    from ccscope.gym import CCVectorEnv, default_reward

    # The environments compute the default reward on the fly (plain floats
    # in CCEnv, array operations in CCVectorEnv); through a wrapper they
    # call default_reward itself. Rewards must match bit for bit.
    def wrapped(prev, obs):
        return default_reward(prev, obs)

    actions = [np.array([a], np.float32) for a in (30.0, 80.0, 300.0, 20.0, 500.0, 60.0) * 5]
    got = {}
    for name, reward in (("inline", None), ("called", wrapped)):
        env = CCEnv("p-rtr-p", control="cwnd", interval="20ms", reward=reward, client=client)
        try:
            env.reset(seed=9)
            got[name] = [env.step(a)[1] for a in actions]
        finally:
            env.close()
        venv = CCVectorEnv(2, "p-rtr-p", control="cwnd", interval="20ms", reward=reward, client=client)
        try:
            venv.reset(seed=9)
            got["v" + name] = [venv.step(np.array([a, a]))[1].tolist() for a in actions]
        finally:
            venv.close()
    assert got["inline"] == got["called"]
    assert got["vinline"] == got["vcalled"]
    assert [r[0] for r in got["vinline"]] == got["inline"], "sub-env 0 (seed 9) differs from CCEnv"
    assert any(r != 0.0 for r in got["inline"])
