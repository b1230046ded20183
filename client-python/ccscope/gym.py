"""A gymnasium environment for learned congestion control (needs the ``gym`` extra).

Each step the agent sets one flow's congestion window or pacing rate, the
simulation advances by a fixed interval of simulated time, and the agent
observes the flow's sender state. Episodes are reproducible: the same seed
and the same actions give the same observations, bit for bit.

The flow keeps its congestion-control algorithm (the scenario's ``cc``): an
action overrides the window or pacing rate at that instant, as a BPF program
or ``ss``-style tool would on a Linux host, and the algorithm may move the
window again on the next ACKs. Pacing-rate actions hold until the next one.

Example::

    from ccscope.gym import CCEnv

    env = CCEnv("p-rtr-p", control="pacing_rate", interval="20ms")
    obs, info = env.reset(seed=1)
    for _ in range(100):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        if terminated:
            break
    env.close()
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

try:
    import gymnasium
    from gymnasium import spaces
except ImportError as e:  # pragma: no cover - depends on the install
    raise ImportError("ccscope.gym needs gymnasium: pip install 'ccscope[gym]'") from e

from .client import Client, connect
from .session import Session
from .tables import CA_STATES, parse_duration

__all__ = ["CCEnv", "OBSERVATION"]

#: The observation vector's components, in order (units in the names).
OBSERVATION = (
    "cwnd_pkts",
    "inflight_pkts",
    "srtt_ms",
    "min_rtt_ms",
    "delivery_rate_mbps",
    "pacing_rate_mbps",
    "lost_pkts_delta",
    "retrans_pkts_delta",
    "ca_state",
)

Reward = Callable[[np.ndarray, np.ndarray], float]


def default_reward(prev: np.ndarray, obs: np.ndarray, *, delay_weight: float = 0.1, loss_weight: float = 1.0) -> float:
    """Delivery rate (Mbps) minus penalties for queueing delay (ms) and losses.

    Args:
        prev: The previous observation.
        obs: The current observation.
        delay_weight: Mbps given up per ms of srtt above min_rtt.
        loss_weight: Mbps given up per packet lost during the step.

    Returns:
        The reward.
    """
    queueing_ms = max(0.0, float(obs[2] - obs[3])) if obs[3] > 0 else 0.0
    return float(obs[4] - delay_weight * queueing_ms - loss_weight * obs[6])


class CCEnv(gymnasium.Env):
    """Control one flow's cwnd or pacing rate every ``interval`` of simulated time.

    Args:
        scenario: A built-in scenario name, a scenario dict or a JSON path.
        flow: The controlled flow.
        control: ``"cwnd"`` (action: packets) or ``"pacing_rate"`` (action:
            Mbps).
        interval: Simulated time per step (``"10ms"``).
        max_cwnd_pkts: Upper bound of the cwnd action.
        max_rate_mbps: Upper bound of the pacing-rate action.
        set: Scenario overrides (as for :meth:`ccscope.Client.open`).
        reward: ``reward(prev_obs, obs) -> float`` (default
            :func:`default_reward`).
        client: A connected client to use; by default the environment
            connects (to ``url`` or a private server) and closes it on
            :meth:`close`.
        url: A running server.
        token: Its token.

    Attributes:
        session: The current episode's session.
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        scenario: str | Mapping[str, Any] = "p-rtr-p",
        *,
        flow: str = "f0",
        control: str = "cwnd",
        interval: str = "10ms",
        max_cwnd_pkts: int = 10_000,
        max_rate_mbps: float = 10_000.0,
        set: Mapping[str, Any] | None = None,
        reward: Reward | None = None,
        client: Client | None = None,
        url: str | None = None,
        token: str | None = None,
    ) -> None:
        if control not in ("cwnd", "pacing_rate"):
            raise ValueError(f"ccscope.gym: control is 'cwnd' or 'pacing_rate', not {control!r}")
        parse_duration(interval)
        self.scenario, self.flow, self.control, self.interval = scenario, flow, control, interval
        self._set = {**dict(set or {}), "trace.detail": "change"}
        self._reward = reward or default_reward
        self._own_client = client is None
        self._client = client if client is not None else connect(url, token=token)
        self.session: Session | None = None
        self._seed = 0
        self._prev = np.zeros(len(OBSERVATION), dtype=np.float64)
        self._lost = self._retrans = 0
        high = float(max_cwnd_pkts) if control == "cwnd" else float(max_rate_mbps)
        self._bounds = (1.0, high)
        self.action_space = spaces.Box(low=np.float32(1.0), high=np.float32(high), shape=(1,), dtype=np.float32)
        self.observation_space = spaces.Box(low=-1.0, high=np.inf, shape=(len(OBSERVATION),), dtype=np.float64)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """Start an episode: a fresh session at time 0, stepped once.

        Args:
            seed: The simulation seed; without one, episodes use the seed
                after the previous episode's (starting at 0).
            options: Unused.

        Returns:
            ``(observation, info)``.
        """
        super().reset(seed=seed)
        if seed is not None:
            self._seed = seed
        if self.session is not None:
            self.session.close()
        self.session = self._client.open(self.scenario, seed=self._seed, set=self._set)
        self._seed += 1
        self.session.subscribe(["flows"], flows=[self.flow], every_ms=0)
        self._lost = self._retrans = 0
        self._prev = np.zeros(len(OBSERVATION), dtype=np.float64)
        obs = self._advance()
        self._prev = obs
        return obs, self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Apply the action, advance ``interval``, observe.

        Args:
            action: The cwnd (packets) or pacing rate (Mbps), a scalar or a
                one-element array; clipped to the action space.

        Returns:
            ``(observation, reward, terminated, truncated, info)``;
            ``terminated`` when the scenario's horizon is reached.
        """
        if self.session is None:
            raise RuntimeError("ccscope.gym: call reset() before step()")
        a = float(np.clip(np.asarray(action, dtype=np.float64).reshape(-1)[0], *self._bounds))
        if self.control == "cwnd":
            self.session.act(flow=self.flow, cwnd=round(a))
        else:
            self.session.act(flow=self.flow, pacing_rate=int(a * 1e6))
        obs = self._advance()
        reward = self._reward(self._prev, obs)
        self._prev = obs
        return obs, reward, self.session.done, False, self._info()

    def _advance(self) -> np.ndarray:
        assert self.session is not None
        self.session.step(self.interval)
        rows = self.session.received("flows")
        if rows is None or rows.num_rows == 0:
            obs = self._prev.copy()
            obs[6] = obs[7] = 0.0
            return obs
        last = rows.slice(rows.num_rows - 1).to_pylist()[0]
        lost, retrans = int(last["lost_pkts"]), int(last["retrans_pkts"])
        obs = np.array(
            [
                last["cwnd_pkts"],
                last["inflight_pkts"],
                last["srtt_ps"] / 1e9,
                last["min_rtt_ps"] / 1e9,
                last["delivery_rate_bps"] / 1e6,
                last["pacing_rate_bps"] / 1e6,
                lost - self._lost,
                retrans - self._retrans,
                CA_STATES.index(last["ca_state"]) if last["ca_state"] in CA_STATES else -1,
            ],
            dtype=np.float64,
        )
        self._lost, self._retrans = lost, retrans
        return obs

    def _info(self) -> dict[str, Any]:
        assert self.session is not None
        return {"sim_time_ps": self.session.sim_time_ps, "events": self.session.events, "seed": self.session.seed}

    def close(self) -> None:
        """Close the episode's session and, if the environment made it, the client."""
        if self.session is not None:
            self.session.close()
            self.session = None
        if self._own_client:
            self._client.close()
