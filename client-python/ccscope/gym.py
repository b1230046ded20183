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
from .tables import parse_duration

__all__ = ["CCEnv", "CCVectorEnv", "OBSERVATION"]

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


#: The server's observation array (proto/README.md, "step"), by index.
_T, _CWND, _SSTHRESH, _INFLIGHT, _SRTT, _MINRTT, _PACING, _DELIVERY, _DELIVERED, _LOST, _RETRANS, _CA, _BYTES = range(13)


class _Stepper:
    """One episode's request and observation buffers, reused every step.

    Each step is one ``step`` request that carries the action and asks for
    the flow's observation back (one round trip); the request map is built
    once and only its action value changes; the observation is written into
    preallocated arrays.
    """

    def __init__(self, flow: str, control: str, interval: str, bounds: tuple[float, float]) -> None:
        self.flow, self.control, self.bounds = flow, control, bounds
        self.action: dict[str, Any] = {"flow": flow, control: 0}
        self.args: dict[str, Any] = {"session": "", "time": interval, "action": self.action, "observe": flow}
        self.first: dict[str, Any] = {"session": "", "time": interval, "observe": flow}
        self.raw = np.zeros(13, dtype=np.float64)
        self.obs = np.zeros(len(OBSERVATION), dtype=np.float64)
        self.prev = np.zeros(len(OBSERVATION), dtype=np.float64)
        self.done = False
        self.sim_time_ps = 0
        self.events = 0

    def set_action(self, action: Any) -> None:
        lo, hi = self.bounds
        a = float(action[0]) if hasattr(action, "__len__") else float(action)
        a = lo if a < lo else hi if a > hi else a
        self.action[self.control] = round(a) if self.control == "cwnd" else int(a * 1e6)

    def observe(self, result: Mapping[str, Any]) -> None:
        """Fold a step result into ``obs`` (the previous one kept in ``prev``)."""
        raw, obs = self.raw, self.obs
        lost, retrans = raw[_LOST], raw[_RETRANS]
        raw[:] = result["obs"]
        self.prev[:] = obs
        obs[0] = raw[_CWND]
        obs[1] = raw[_INFLIGHT]
        obs[2] = raw[_SRTT] / 1e9
        obs[3] = raw[_MINRTT] / 1e9
        obs[4] = raw[_DELIVERY] / 1e6
        obs[5] = raw[_PACING] / 1e6
        obs[6] = raw[_LOST] - lost
        obs[7] = raw[_RETRANS] - retrans
        obs[8] = raw[_CA]
        self.done = result["done"]
        self.sim_time_ps = result["sim_time_ps"]
        self.events = result["events"]

    def reset(self, session: str) -> None:
        self.args["session"] = self.first["session"] = session
        self.raw[:] = 0.0
        self.obs[:] = 0.0
        self.done = False


class CCEnv(gymnasium.Env):
    """Control one flow's cwnd or pacing rate every ``interval`` of simulated time.

    Each step is one round trip to the server: the ``step`` request carries
    the action and the reply carries the flow's state. No trace is recorded.

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
        copy: Return a fresh observation array each step (default). With
            False the environment returns the same array, overwritten by the
            next step, and allocates no arrays per step (as gymnasium's
            vector environments' ``copy=False``).
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
        copy: bool = True,
        client: Client | None = None,
        url: str | None = None,
        token: str | None = None,
    ) -> None:
        if control not in ("cwnd", "pacing_rate"):
            raise ValueError(f"ccscope.gym: control is 'cwnd' or 'pacing_rate', not {control!r}")
        parse_duration(interval)
        self.scenario, self.flow, self.control, self.interval = scenario, flow, control, interval
        self._set = dict(set or {})
        self._reward = reward or default_reward
        self._copy = copy
        self._own_client = client is None
        self._client = client if client is not None else connect(url, token=token)
        self.session: Session | None = None
        self._seed = 0
        high = float(max_cwnd_pkts) if control == "cwnd" else float(max_rate_mbps)
        self._st = _Stepper(flow, control, interval, (1.0, high))
        self._info: dict[str, Any] = {"sim_time_ps": 0, "events": 0, "seed": 0}
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
        self._info["seed"] = self._seed
        self._seed += 1
        st = self._st
        st.reset(self.session.id)
        st.observe(self._client.call("step", st.first, timeout=None))
        st.obs[6] = st.obs[7] = 0.0
        return self._out(), self._update_info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Apply the action, advance ``interval``, observe — one round trip.

        Args:
            action: The cwnd (packets) or pacing rate (Mbps), a scalar or a
                one-element array; clipped to the action space.

        Returns:
            ``(observation, reward, terminated, truncated, info)``;
            ``terminated`` when the scenario's horizon is reached.
        """
        if self.session is None:
            raise RuntimeError("ccscope.gym: call reset() before step()")
        st = self._st
        st.set_action(action)
        st.observe(self._client.call("step", st.args, timeout=None))
        return self._out(), self._reward(st.prev, st.obs), st.done, False, self._update_info()

    def _out(self) -> np.ndarray:
        return self._st.obs.copy() if self._copy else self._st.obs

    def _update_info(self) -> dict[str, Any]:
        info = dict(self._info) if self._copy else self._info
        info["sim_time_ps"] = self._st.sim_time_ps
        info["events"] = self._st.events
        return info

    def close(self) -> None:
        """Close the episode's session and, if the environment made it, the client."""
        if self.session is not None:
            self.session.close()
            self.session = None
        if self._own_client:
            self._client.close()


class CCVectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` copies of :class:`CCEnv`, sessions of one server stepped in parallel.

    All sessions share one connection: a vector step sends every session's
    ``step`` (action included, observation asked for) before reading any
    reply, and the server steps the sessions concurrently, one goroutine
    each. Sub-environment ``i`` uses seed ``seed + i``. An episode that
    ends is reset on the next step (gymnasium's ``NEXT_STEP`` autoreset:
    that step's action is ignored and it returns the first observation with
    reward 0).

    Args:
        num_envs: The number of sessions.
        scenario: As for :class:`CCEnv`; the keyword arguments too.
        copy: Return fresh arrays each step (default); with False the
            observation and reward arrays are reused.
    """

    metadata = {"render_modes": [], "autoreset_mode": gymnasium.vector.AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        num_envs: int = 8,
        scenario: str | Mapping[str, Any] = "p-rtr-p",
        *,
        flow: str = "f0",
        control: str = "cwnd",
        interval: str = "10ms",
        max_cwnd_pkts: int = 10_000,
        max_rate_mbps: float = 10_000.0,
        set: Mapping[str, Any] | None = None,
        reward: Reward | None = None,
        copy: bool = True,
        client: Client | None = None,
        url: str | None = None,
        token: str | None = None,
    ) -> None:
        if num_envs < 1:
            raise ValueError(f"ccscope.gym: num_envs must be at least 1, got {num_envs}")
        if control not in ("cwnd", "pacing_rate"):
            raise ValueError(f"ccscope.gym: control is 'cwnd' or 'pacing_rate', not {control!r}")
        parse_duration(interval)
        self.num_envs = num_envs
        self.scenario, self.flow, self.control, self.interval = scenario, flow, control, interval
        self._set = dict(set or {})
        self._reward = reward or default_reward
        self._copy = copy
        self._own_client = client is None
        self._client = client if client is not None else connect(url, token=token)
        high = float(max_cwnd_pkts) if control == "cwnd" else float(max_rate_mbps)
        self._st = [_Stepper(flow, control, interval, (1.0, high)) for _ in range(num_envs)]
        self._sessions: list[Session | None] = [None] * num_envs
        self._seeds = list(range(num_envs))
        self._needs_reset = np.zeros(num_envs, dtype=bool)
        self._obs = np.zeros((num_envs, len(OBSERVATION)), dtype=np.float64)
        self._rewards = np.zeros(num_envs, dtype=np.float64)
        self._terminated = np.zeros(num_envs, dtype=bool)
        self._truncated = np.zeros(num_envs, dtype=bool)
        self._requests: list[tuple[str, dict[str, Any]]] = [("step", st.args) for st in self._st]
        self.single_action_space = spaces.Box(low=np.float32(1.0), high=np.float32(high), shape=(1,), dtype=np.float32)
        self.single_observation_space = spaces.Box(low=-1.0, high=np.inf, shape=(len(OBSERVATION),), dtype=np.float64)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, num_envs)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, num_envs)

    def _open(self, i: int) -> None:
        s = self._sessions[i]
        if s is not None:
            s.close()
        s = self._client.open(self.scenario, seed=self._seeds[i], set=self._set)
        self._sessions[i] = s
        self._seeds[i] += self.num_envs
        self._st[i].reset(s.id)

    def reset(self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """Start an episode in every session (sub-env ``i`` seeded ``seed + i``).

        Returns:
            ``(observations, infos)``.
        """
        if seed is not None:
            self._seeds = list(seed) if isinstance(seed, list) else [seed + i for i in range(self.num_envs)]
        for i in range(self.num_envs):
            self._open(i)
        results = self._client.call_many([("step", st.first) for st in self._st])
        for i, (st, r) in enumerate(zip(self._st, results)):
            st.observe(r)
            st.obs[6] = st.obs[7] = 0.0
            self._obs[i] = st.obs
        self._needs_reset[:] = False
        return (self._obs.copy() if self._copy else self._obs), {}

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Step every session in parallel (one round trip for all).

        Args:
            actions: ``(num_envs, 1)`` (or ``(num_envs,)``) actions.

        Returns:
            ``(observations, rewards, terminations, truncations, infos)``.
        """
        acts = np.asarray(actions, dtype=np.float64).reshape(self.num_envs, -1)
        if self._needs_reset.any():
            for i in np.flatnonzero(self._needs_reset):
                self._open(int(i))
        reqs = self._requests
        for i, st in enumerate(self._st):
            if self._needs_reset[i]:
                reqs[i] = ("step", st.first)
            else:
                st.set_action(acts[i])
                reqs[i] = ("step", st.args)
        results = self._client.call_many(reqs)
        for i, (st, r) in enumerate(zip(self._st, results)):
            st.observe(r)
            if self._needs_reset[i]:
                st.obs[6] = st.obs[7] = 0.0
                self._rewards[i] = 0.0
            else:
                self._rewards[i] = self._reward(st.prev, st.obs)
            self._obs[i] = st.obs
            self._terminated[i] = st.done
        self._needs_reset[:] = self._terminated
        if self._copy:
            return self._obs.copy(), self._rewards.copy(), self._terminated.copy(), self._truncated.copy(), {}
        return self._obs, self._rewards, self._terminated, self._truncated, {}

    def close_extras(self, **kwargs: Any) -> None:
        """Close the sessions and, if the environment made it, the client."""
        for s in self._sessions:
            if s is not None:
                s.close()
        self._sessions = [None] * self.num_envs
        if self._own_client:
            self._client.close()
