"""ccscope: drive a deterministic packet-level TCP congestion-control simulator.

Quick start::

    import ccscope

    with ccscope.connect() as client:               # starts a private local server
        with client.open("p-rtr-p", set={"trace.detail": "change"}) as s:
            s.run()
            flows = ccscope.with_seconds(s.signals("flows"))   # a pyarrow.Table
            print(s.summary()["flows"][0]["goodput_bps"])

Everything raised is a :class:`ccscope.errors.CcscopeError`; see
:mod:`ccscope.errors` for the tree. Plots live in :mod:`ccscope.plot`
(matplotlib, optional), sweeps in :func:`ccscope.sweep` (:mod:`ccscope.sweeps`), a gymnasium
environment in :mod:`ccscope.gym` (optional), the simulator beside the
real kernel in :func:`ccscope.compare` (:mod:`ccscope.kernel`; Linux, root).
"""

from __future__ import annotations

from . import errors
from ._version import __version__
from .client import Client, connect
from .errors import CcscopeError, ServerDied, ServerError
from .kernel import compare, emulation_available, kernel_hz
from .results import Checkpoint, Position, Summary
from .session import Session, make_action
from .sweeps import grid, sweep
from .tables import CA_STATES, app_latency, flow_names, format_duration, parse_duration, trace_capacity, with_seconds

__all__ = [
    "__version__",
    "connect",
    "Client",
    "Session",
    "Summary",
    "Checkpoint",
    "Position",
    "make_action",
    "with_seconds",
    "app_latency",
    "trace_capacity",
    "flow_names",
    "parse_duration",
    "format_duration",
    "CA_STATES",
    "sweep",
    "grid",
    "compare",
    "emulation_available",
    "kernel_hz",
    "errors",
    "CcscopeError",
    "ServerError",
    "ServerDied",
]
