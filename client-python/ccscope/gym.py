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

import struct
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

try:
    import gymnasium
    from gymnasium import spaces
except ImportError as e:  # pragma: no cover - depends on the install
    raise ImportError("ccscope.gym needs gymnasium: pip install 'ccscope[gym]'") from e

from . import codec
from .client import Client, connect
from .errors import ProtocolError
from .session import Session, positive_duration, size_bytes

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


# The server's observation array (proto/README.md, "step") holds, by index:
# 0 t_ps, 1 cwnd_pkts, 2 ssthresh_pkts, 3 inflight_pkts, 4 srtt_ps,
# 5 min_rtt_ps, 6 pacing_rate_bps, 7 delivery_rate_bps, 8 delivered_pkts,
# 9 lost_pkts, 10 retrans_pkts, 11 ca_state, 12 bytes_delivered.
_CWND, _LOST, _RETRANS, _CA, _BYTES = 1, 9, 10, 11, 12

#: A flow size no flow reaches (a flow without one runs until the horizon).
_NO_SIZE = 1 << 63

_H = codec.Template.hole
# The observation comes as 13 little-endian int64s (the step's obs_format
# "int64le"): read without converting a list.
_unpack_obs = struct.Struct("<13q").unpack


def _fold(obs: bytes, counts: list[int], first: bool, size: int) -> tuple[tuple, float, bool]:
    """One step's OBSERVATION values and default reward, from the server's
    observation; ``counts`` (lost and retransmitted packets at the last
    step) is updated. Both environments fold every observation here, on
    plain floats (for one or a few environments cheaper than numpy calls).

    The flow has finished when its receiver got all ``size`` bytes, or when
    it is a group's flow the engine released: it observes as zeros then but
    for the bytes it delivered (proto/README.md, "step"), and its counters,
    gone with it, are taken as unchanged.

    Args:
        obs: The step result's ``obs`` (``int64le``).
        counts: ``[lost_pkts, retrans_pkts]`` at the last step.
        first: The episode's first step: the deltas are 0.
        size: The flow's size in bytes (``_NO_SIZE`` for none).

    Returns:
        ``(observation values, default_reward, the flow has finished)``.
    """
    o = _unpack_obs(obs)
    got = o[_BYTES]
    released = o[_CWND] == 0 and got > 0
    lost, retrans = (counts[0], counts[1]) if released else (o[_LOST], o[_RETRANS])
    dl, dr = (0, 0) if first else (lost - counts[0], retrans - counts[1])
    counts[0], counts[1] = lost, retrans
    srtt, min_rtt, rate = o[4] / 1e9, o[5] / 1e9, o[7] / 1e6
    # default_reward on the same values, in the same float64 operations.
    queueing_ms = max(0.0, srtt - min_rtt) if min_rtt > 0 else 0.0
    row = (o[_CWND], o[3], srtt, min_rtt, rate, o[6] / 1e6, dl, dr, o[_CA])
    return row, rate - 0.1 * queueing_ms - 1.0 * dl, released or got >= size


def _flow_size(config: Mapping[str, Any], name: str) -> int:
    """The size in bytes of flow ``name`` (a scenario flow ``f0``, a group's
    ``web/3``, a split flow's leg ``f0.0``) as the canonical scenario gives
    it; ``_NO_SIZE`` when it has none (``"0B"``, absent) or draws its sizes
    from a distribution (a group's flows are then seen ending by the engine
    releasing them)."""
    base = name.partition(".")[0]
    group, slash, _ = base.partition("/")
    for f in config.get("flows", []):
        if f.get("id") == base or (slash and f.get("group") == group):
            n = size_bytes(f.get("size"))
            return n if n else _NO_SIZE
    return _NO_SIZE


def _is_seed(x: Any) -> bool:
    """Whether ``x`` is a seed: a non-negative integer (Python's or numpy's), not a bool."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool) and x >= 0


def _action_value(action: Any, space: spaces.Box) -> float:
    """The number an action holds: a real number, or an array or list of
    shape (1,) (the action space's) holding one; NaN is refused.

    Raises:
        ValueError: Another shape or type, or NaN; the message names the
            action space.
    """
    a = action
    if isinstance(a, np.ndarray):
        if a.shape not in ((1,), ()) or a.dtype.kind not in "iuf":
            raise ValueError(
                f"ccscope.gym: action must be one number, as an array of shape (1,) ({space}) or a scalar; "
                f"got an array of shape {a.shape} and dtype {a.dtype}"
            )
        a = a.item()
    elif isinstance(a, (list, tuple)) and len(a) == 1:
        a = a[0]
    if isinstance(a, bool) or not isinstance(a, (int, float, np.integer, np.floating)):
        raise ValueError(
            f"ccscope.gym: action must be one number, as an array of shape (1,) ({space}) or a scalar; got {action!r}"
        )
    a = float(a)
    if a != a:
        raise ValueError(f"ccscope.gym: action is NaN; it must be a number within {space}")
    return a


class _Stepper:
    """One episode's encoded requests and observation buffers, reused every step.

    Each step is one ``step`` request that carries the action and asks for
    the flow's observation back (one round trip). The request is encoded
    once per episode (:class:`ccscope.codec.IntTemplate`); a step writes
    the request id and the action value into it with one ``struct`` call.
    The observation is written into preallocated arrays, and the default
    reward computed on plain floats.
    """

    def __init__(self, flow: str, control: str, interval: str, bounds: tuple[float, float]) -> None:
        self.flow, self.control, self.interval, self.bounds = flow, control, interval, bounds
        self.cwnd = control == "cwnd"
        self.obs = np.zeros(len(OBSERVATION), dtype=np.float64)
        self.prev = np.zeros(len(OBSERVATION), dtype=np.float64)
        self.counts = [0, 0]
        self.reward = 0.0
        self.done = False
        self.finished = False  # the flow has finished (the episode ended before the horizon)
        self.size = _NO_SIZE
        self.sim_time_ps = 0
        self.events = 0
        self.step_t = self.first_t = codec.IntTemplate(None, 0)
        self.entry_t = codec.Template(None, 0)
        self.first_entry = b""
        self.vals = [0, 0]  # the step request's id and action
        self.args: dict[str, Any] = {}  # a step's arguments but the action

    def reset(self, session: Session) -> None:
        """Start an episode on ``session``: its requests encoded, the buffers cleared."""
        self.size = _flow_size(session.config, self.flow)
        args = {"session": session.id, "time": self.interval, "observe": self.flow, "obs_format": "int64le"}
        self.args = args
        act = {"flow": self.flow, self.control: _H(1)}
        self.first_t = codec.IntTemplate({"id": _H(0), "op": "step", **args}, 1)
        self.step_t = codec.IntTemplate({"id": _H(0), "op": "step", "action": act, **args}, 2)
        # The vector environment's steps entries: the same without id and op.
        self.entry_t = codec.Template({"action": {"flow": self.flow, self.control: _H(0)}, **args}, 1)
        self.first_entry = codec.encode(args)
        self.obs[:] = 0.0
        self.counts[:] = [0, 0]
        self.done = self.finished = False

    def action(self, action: Any, space: spaces.Box) -> int:
        """The action, checked against ``space`` and clipped to the bounds, as
        the integer value of the request's field."""
        lo, hi = self.bounds
        a = _action_value(action, space)
        a = lo if a < lo else hi if a > hi else a
        return round(a) if self.cwnd else int(a * 1e6)

    def observe(self, result: Mapping[str, Any], *, first: bool = False) -> None:
        """Fold a step result into ``obs`` (the previous one kept in ``prev``).

        Args:
            result: The step's result.
            first: The episode's first step: the loss and retransmission
                deltas are 0.
        """
        row, self.reward, self.finished = _fold(result["obs"], self.counts, first, self.size)
        self.prev[:] = self.obs
        self.obs[:] = row
        self.done = result["done"] or self.finished
        self.sim_time_ps = result["sim_time_ps"]
        self.events = result["events"]


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
        positive_duration(interval, name="ccscope.gym: interval")
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
        st.reset(self.session)
        st.observe(self._client.call_ints("step", st.first_t, st.vals), first=True)
        return self._out(), self._update_info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Apply the action, advance ``interval``, observe — one round trip.

        Args:
            action: The cwnd (packets) or pacing rate (Mbps), a number or an
                array of shape (1,); clipped to the action space's bounds.

        Returns:
            ``(observation, reward, terminated, truncated, info)``;
            ``terminated`` when the scenario's horizon is reached or the
            flow has finished (its receiver got the flow's ``size``, or, for
            a group's flow, the engine released it: the observation is then
            zeros); ``info["flow_finished"]`` says which.

        Raises:
            ValueError: The action is not one number (shape, type, NaN).
            RuntimeError: No episode (call :meth:`reset`), or it has ended:
                at the horizon, or its flow has finished and no action can
                reach it.
        """
        if self.session is None:
            raise RuntimeError("ccscope.gym: call reset() before step()")
        st = self._st
        if st.finished:
            raise RuntimeError(f"ccscope.gym: flow {self.flow!r} has finished, which ended the episode; call reset()")
        if st.done:
            raise RuntimeError("ccscope.gym: the episode reached the scenario's horizon; call reset()")
        st.vals[1] = st.action(action, self.action_space)
        st.observe(self._client.call_ints("step", st.step_t, st.vals))
        reward = st.reward if self._reward is default_reward else self._reward(st.prev, st.obs)
        return self._out(), reward, st.done, False, self._update_info()

    def _out(self) -> np.ndarray:
        return self._st.obs.copy() if self._copy else self._st.obs

    def _update_info(self) -> dict[str, Any]:
        info = dict(self._info) if self._copy else self._info
        info["sim_time_ps"] = self._st.sim_time_ps
        info["events"] = self._st.events
        info["flow_finished"] = self._st.finished
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

    All sessions share one connection: a vector step is one ``steps``
    request (proto/README.md) carrying every session's step, action included
    and observation asked for, and one response carrying every result; the
    server steps the sessions concurrently, one goroutine each.
    Sub-environment ``i`` uses seed ``seed + i``, or the ``i``-th of a list
    of seeds (:meth:`reset`). An episode that ends (the horizon, or its flow
    finished) is reset on the next step (gymnasium's ``NEXT_STEP``
    autoreset: that step's action is ignored and it returns the first
    observation with reward 0).

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
        positive_duration(interval, name="ccscope.gym: interval")
        self.num_envs = num_envs
        self.scenario, self.flow, self.control, self.interval = scenario, flow, control, interval
        self._set = dict(set or {})
        self._reward = reward or default_reward
        self._copy = copy
        self._own_client = client is None
        self._client = client if client is not None else connect(url, token=token)
        high = float(max_cwnd_pkts) if control == "cwnd" else float(max_rate_mbps)
        self._bounds = (1.0, high)
        self._pack = codec.packer()
        self._st = [_Stepper(flow, control, interval, self._bounds) for _ in range(num_envs)]
        self._sessions: list[Session | None] = [None] * num_envs
        self._seeds = list(range(num_envs))
        self._needs_reset = np.zeros(num_envs, dtype=bool)
        self._obs = np.zeros((num_envs, len(OBSERVATION)), dtype=np.float64)
        self._rewards = np.zeros(num_envs, dtype=np.float64)
        self._terminated = np.zeros(num_envs, dtype=bool)
        self._truncated = np.zeros(num_envs, dtype=bool)
        # One steps request per vector step. Its common form, every session
        # stepped with its action, is an integer template over all the
        # sessions (hole 0 the id, hole 1 + i sub-env i's action), rebuilt
        # when a session changes; a step that starts an episode splices the
        # entries (each encoded by its sub-environment's stepper) instead.
        self._steps_t = codec.Template({"id": _H(0), "op": "steps", "steps": _H(1)}, 2)
        self._parts: list[bytes] = [codec.array_header(num_envs)] + [b""] * num_envs
        self._acts_t: codec.IntTemplate | None = None
        self._vals = [0] * (num_envs + 1)
        self._prev_obs = np.zeros((num_envs, len(OBSERVATION)), dtype=np.float64)
        self._rows: list[tuple] = [()] * num_envs  # this step's observations
        self._rw = [0.0] * num_envs  # and default rewards
        self._counts = [[0, 0] for _ in range(num_envs)]  # lost, retransmitted at the last step
        self._any_reset = False
        self._done = [False] * num_envs
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
        self._st[i].reset(s)
        self._acts_t = None

    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict]:
        """Start an episode in every session.

        Args:
            seed: As gymnasium's vector environments take it: None (each
                sub-environment goes on to the seed after its last episode's,
                ``num_envs`` on), an integer (sub-env ``i`` seeded ``seed +
                i``), or a list or tuple of exactly ``num_envs`` seeds, one per
                sub-environment, where None keeps that one's next seed.
            options: Unused.

        Returns:
            ``(observations, infos)``.

        Raises:
            ValueError: ``seed`` is none of these (a list of another length,
                a negative seed, a seed that is not an integer).
        """
        self._seeds = self._seed_list(seed)
        for i in range(self.num_envs):
            self._open(i)
        self._needs_reset[:] = True
        self._step_all(None)
        self._needs_reset[:] = False
        self._any_reset = False
        return (self._obs.copy() if self._copy else self._obs), {}

    def _seed_list(self, seed: Any) -> list[int]:
        """Every sub-environment's next seed, from ``reset``'s ``seed``."""
        n = self.num_envs
        if seed is None:
            return self._seeds
        if _is_seed(seed):
            return [int(seed) + i for i in range(n)]
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            raise ValueError(f"ccscope.gym: seed is {seed!r}; a seed is a non-negative integer")
        if not isinstance(seed, (list, tuple)):
            raise ValueError(
                f"ccscope.gym: seed is None, an integer or a list of {n} seeds (one per sub-environment), not {seed!r}"
            )
        if len(seed) != n:
            raise ValueError(
                f"ccscope.gym: seed has {len(seed)} entries; a list of seeds needs exactly {n}, one per sub-environment"
            )
        for i, x in enumerate(seed):
            if x is not None and not _is_seed(x):
                raise ValueError(f"ccscope.gym: seed[{i}] is {x!r}; a seed is a non-negative integer or None")
        return [self._seeds[i] if x is None else int(x) for i, x in enumerate(seed)]

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Step every session in parallel (one round trip for all).

        Args:
            actions: ``(num_envs, 1)`` (or ``(num_envs,)``) numbers.

        Returns:
            ``(observations, rewards, terminations, truncations, infos)``;
            a sub-environment terminates, as :class:`CCEnv` does, at the
            horizon or when its flow has finished.

        Raises:
            ValueError: ``actions`` of another shape, not numbers, or NaN.
        """
        acts = actions if isinstance(actions, np.ndarray) else np.asarray(actions)
        n = self.num_envs
        if acts.shape not in ((n, 1), (n,)) or acts.dtype.kind not in "iuf":
            raise ValueError(
                f"ccscope.gym: actions must be numbers of shape ({n}, 1) or ({n},) "
                f"({self.action_space}); got shape {acts.shape} and dtype {acts.dtype}"
            )
        # The actions clipped and rounded as CCEnv does (round() rounds half
        # to even, int() truncates), on plain floats: for a few values
        # cheaper than numpy calls.
        vals = acts.reshape(n).tolist()
        lo, hi = self._bounds
        cwnd = self.control == "cwnd"
        for i, a in enumerate(vals):
            if a != a:
                raise ValueError(f"ccscope.gym: actions[{i}] is NaN; actions must be numbers, got {acts!r}")
            a = lo if a < lo else hi if a > hi else a
            vals[i] = round(a) if cwnd else int(a * 1e6)
        resetting = self._any_reset
        if resetting:
            for i in np.flatnonzero(self._needs_reset):
                self._open(int(i))
        self._step_all(vals)
        ended = True in self._done
        if ended or resetting:
            self._needs_reset[:] = self._terminated
        self._any_reset = ended
        if self._copy:
            return self._obs.copy(), self._rewards.copy(), self._terminated.copy(), self._truncated.copy(), {}
        return self._obs, self._rewards, self._terminated, self._truncated, {}

    def _step_all(self, vals: list[int] | None) -> None:
        """One steps request for every session: with its action's value
        (``vals``, as the request's integer field), or (a new episode, or
        ``vals`` None) its first step; the results folded into the batch
        arrays."""
        n, fresh = self.num_envs, self._needs_reset
        any_fresh = vals is None or self._any_reset
        fresh_l = fresh.tolist() if any_fresh else []
        if vals is None:
            parts = self._parts
            for i, st in enumerate(self._st):
                parts[i + 1] = st.first_entry
            data = self._steps_t, b"".join(parts)
        else:
            if any_fresh:
                parts, pack = self._parts, self._pack
                for i, st in enumerate(self._st):
                    parts[i + 1] = st.first_entry if fresh_l[i] else st.entry_t.fill(pack(vals[i]))
                data = self._steps_t, b"".join(parts)
            else:
                if self._acts_t is None:
                    entries = [
                        {"action": {"flow": st.flow, st.control: _H(i + 1)}, **st.args} for i, st in enumerate(self._st)
                    ]
                    self._acts_t = codec.IntTemplate({"id": _H(0), "op": "steps", "steps": entries}, n + 1)
                self._vals[1:] = vals
                data = None
        if data is None:
            results = self._client.call_ints("steps", self._acts_t, self._vals)["results"]  # type: ignore[arg-type]
        else:
            results = self._client.call_encoded("steps", *data)["results"]
        if len(results) != n:
            raise ProtocolError(f"ccscope.gym: steps answered {len(results)} results for {n} steps")
        # The observations folded as CCEnv folds its one (_fold), then
        # written with four numpy calls.
        done, rows, rw, counts = self._done, self._rows, self._rw, self._counts
        for i, r in enumerate(results):
            if r.get("ok") is not True:
                raise codec.frame_from_map({"id": None, **r}).exception()  # type: ignore[union-attr]
            res = r["result"]
            rows[i], rw[i], finished = _fold(res["obs"], counts[i], any_fresh and fresh_l[i], self._st[i].size)
            done[i] = res["done"] or finished
        obs, prev = self._obs, self._prev_obs
        np.copyto(prev, obs)
        obs[:] = rows
        self._terminated[:] = done
        rewards = self._rewards
        if self._reward is default_reward:
            rewards[:] = rw
        else:
            for i in range(n):
                rewards[i] = self._reward(prev[i], obs[i])
        if any_fresh:
            rewards[fresh] = 0.0

    def close_extras(self, **kwargs: Any) -> None:
        """Close the sessions and, if the environment made it, the client."""
        for s in self._sessions:
            if s is not None:
                s.close()
        self._sessions = [None] * self.num_envs
        if self._own_client:
            self._client.close()
