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
