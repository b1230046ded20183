"""The simulator beside the real kernel: ``ccscope.compare``.

:func:`compare` runs one scenario twice per seed — in the simulator, and on
this machine's Linux TCP stack through ``ccscope compare`` (network
namespaces, real sockets, the engine's own link and queue code relaying
packets in real time) — and returns the two side by side as a pandas
DataFrame. Emulation needs Linux, root and ``/dev/net/tun``;
:func:`emulation_available` says whether this machine has them.
:func:`ccscope.plot.sim_vs_kernel` overlays the two runs' cwnd, srtt and
delivery rate.
"""

from __future__ import annotations

import gzip
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._server import _terminate, find_binary
from .client import _is_scenario_file
from .errors import EmulationError

if TYPE_CHECKING:
    import pandas

__all__ = ["compare", "emulation_available", "kernel_hz"]


def emulation_available() -> str | None:
    """Say why emulation cannot run here, or None if it can.

    Returns:
        None on Linux as root with ``/dev/net/tun`` and iproute2's ``ip``;
        otherwise the reason, as a sentence.
    """
    if not sys.platform.startswith("linux"):
        return "emulation needs Linux (network namespaces and TUN devices)"
    if os.geteuid() != 0:
        return "emulation needs root (network namespaces, TUN devices)"
    if not os.path.exists("/dev/net/tun"):
        return "emulation needs /dev/net/tun"
    if shutil.which("ip") is None:
        return "emulation needs iproute2's ip command"
    return None


def kernel_hz() -> int | None:
    """The running kernel's CONFIG_HZ, or None where it cannot be read.

    It is read from ``/proc/config.gz`` or ``/boot/config-<release>``. Pass
    it as a flow's ``tcp.hz`` so the simulator's timers tick as this
    kernel's do (``ccscope compare`` notes each flow whose ``hz`` differs).
    """
    try:
        with gzip.open("/proc/config.gz", "rt") as f:
            text = f.read()
    except OSError:
        try:
            text = Path(f"/boot/config-{platform.release()}").read_text()
        except OSError:
            return None
    for line in text.splitlines():
        if line.startswith("CONFIG_HZ="):
            try:
                return int(line.removeprefix("CONFIG_HZ="))
            except ValueError:
                return None
    return None


def _overrides(set: Mapping[str, Any] | Sequence[str] | None) -> list[str]:
    if set is None:
        return []
    if isinstance(set, Mapping):
        return [f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in set.items()]
    return list(set)


def _run_reporting(cmd: list[str], timeout: float | None, progress: bool) -> tuple[int, str, str]:
    """Run cmd and return its exit code, stdout and stderr; with progress, echo its
    progress lines (``compare: …``) to our stderr as they come."""
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace"
    )
    out: list[str] = []
    err: list[str] = []

    def read_out() -> None:
        out.append(proc.stdout.read())

    def read_err() -> None:
        for line in proc.stderr:
            err.append(line)
            if progress and line.startswith("compare: "):
                print(line, end="", file=sys.stderr, flush=True)

    readers = [threading.Thread(target=f, daemon=True) for f in (read_out, read_err)]
    for r in readers:
        r.start()
    try:
        code = proc.wait(timeout=timeout)
    except BaseException as e:  # the timeout, or the user's interrupt
        # SIGTERM, as Ctrl-C: the command takes down the namespaces it made.
        _terminate(proc)
        for r in readers:
            r.join()
        if isinstance(e, subprocess.TimeoutExpired):
            raise EmulationError(f"ccscope.compare: no result within {timeout} s", stderr="".join(err)) from None
        raise
    for r in readers:
        r.join()
    return code, "".join(out), "".join(err)


def _without_progress(stderr: str) -> str:
    """stderr without the progress lines, for an error's message."""
    return "".join(line for line in stderr.splitlines(keepends=True) if not line.startswith("compare: "))


def compare(
    scenario: str | Mapping[str, Any],
    *,
    seeds: Sequence[int] | None = None,
    set: Mapping[str, Any] | Sequence[str] | None = None,
    duration: str | None = None,
    trace_dir: str | os.PathLike[str] | None = None,
    report: str | os.PathLike[str] | None = None,
    retries: int = 2,
    cc_state: bool = False,
    progress: bool = True,
    binary: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
) -> pandas.DataFrame:
    """Run a scenario in the simulator and on the kernel and line them up.

    Args:
        scenario: A built-in's name, a scenario file's path, or a scenario as
            a dict.
        seeds: The seeds to run (default: the scenario's ``runtime.seed``).
        set: Overrides, ``{path: value}`` or ``["path=value"]``.
        duration: Both runs' duration, e.g. ``"5s"`` (the kernel run takes
            that long in wall-clock time).
        trace_dir: Write both runs' trace tables there as Parquet
            (``sim-seedN.flows.parquet``, ``kernel-seedN.flows.parquet``, …),
            for :func:`ccscope.plot.sim_vs_kernel`.
        report: Write each seed's two runs as one self-contained HTML page
            there (a name ending in ``.html``; ``NAME-seedN.html`` for
            several seeds): the simulator's panels with the kernel's series
            dashed in them, and the seed's rows as a table.
        retries: Run a seed's kernel side up to this many more times while
            its relay runs late (p99 over 1 ms: the host did not keep up in
            real time), keeping the least late run; a note says so. Each
            retry takes the run's duration again.
        cc_state: Read each kernel sender's CC state with bpftrace (BBR's
            ``rtt_cnt``, ``mode``, ``full_bw_cnt``, ``full_bw``, …; CUBIC's
            ``last_max_cwnd``, ``k``, ``cnt``, …) into the kernel runs'
            ``signals`` tables, named as the simulator's CCs name theirs
            (needs bpftrace and a kernel with BTF; with ``trace_dir``).
        progress: Echo the command's progress, a line per run
            (``compare: seed 1: running on the kernel for 3s``), to stderr
            as it comes.
        binary: The ``ccscope`` binary (default: as :func:`ccscope.connect`
            finds it).
        timeout: Seconds to wait for the command; None (the default) waits
            as long as it runs: each seed's kernel run takes the scenario's
            duration in wall-clock time, and each retry takes it again. On
            expiry, or an interrupt, the command is stopped as Ctrl-C would
            stop it, and takes down the network namespaces it made.

    Returns:
        A DataFrame with one row per seed, flow and metric: ``seed, flow,
        group, metric, unit, sim, kernel, rel_diff`` (``(kernel − sim) /
        sim``; ``group`` is the group a flow belongs to, "" otherwise).
        Metrics: ``goodput`` (Mbps), ``t_1MB``, ``t_10MB``, ``t_100MB`` (ms
        from the first payload byte delivered, at the receiver on both
        sides), ``retransmits`` (packets), ``srtt_p50``, ``srtt_p99`` (ms);
        for a ping flow, ``probe_rtt_p50`` and ``probe_rtt_p99`` (ms). Each
        flow group has rows of its own (``flow`` is the group's id,
        ``group`` ""): ``completed`` (flows), ``fct_p50[lo,hi)`` and
        ``fct_p99[lo,hi)`` (ms) per flow-size bucket, as
        ``fct_p50[10KB,100KB)``, and ``jain_bulk`` over its bulk flows.
        ``df.attrs["comparison"]`` holds the whole report (both summaries,
        the kernel release, the relay's lateness). ``df.attrs["notes"]``
        names each ``set`` override that replaced an object and dropped
        some of its fields, and lists what the kernel runs took
        differently from the scenario, by
        field (a receiver's ``gro_interval``, which the TUN path cannot
        apply), and says when a run's relay wrote late (p99 over 1 ms: the
        host did not keep up in real time); each is also issued as a
        :class:`UserWarning`.

    Raises:
        EmulationError: Emulation cannot run here, or the command failed
            (its stderr, with every reason, is attached).
    """
    import pandas as pd

    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ValueError(f"ccscope.compare: retries={retries!r}: want an int, 0 or more")
    if report is not None and not os.fspath(report).endswith(".html"):
        raise ValueError(f"ccscope.compare: report={os.fspath(report)!r}: the file name must end in .html")
    why = emulation_available()
    if why is not None:
        raise EmulationError(f"ccscope.compare: {why}")
    exe = Path(binary) if binary is not None else find_binary()
    with tempfile.TemporaryDirectory(prefix="ccscope-compare-") as tmp:
        if isinstance(scenario, Mapping):
            path = Path(tmp) / "scenario.json"
            path.write_text(json.dumps(scenario))
            arg = str(path)
        else:
            arg = str(scenario)
        cmd = [str(exe), "compare", arg, "--json"]
        if not _is_scenario_file(scenario):
            cmd += ["--files-dir", os.getcwd()]  # a dict's or a built-in's trace and CDF files, as open reads them
        if seeds:
            cmd += ["--seeds", ",".join(str(int(s)) for s in seeds)]
        if duration is not None:
            cmd += ["--duration", duration]
        if trace_dir is not None:
            cmd += ["--trace", os.fspath(trace_dir)]
        if report is not None:
            cmd += ["--report", os.fspath(report)]
        cmd += ["--retries", str(retries)]
        if cc_state:
            cmd += ["--cc-state"]
        for o in _overrides(set):
            cmd += ["--set", o]
        code, stdout, stderr = _run_reporting(cmd, timeout, progress)
    if code != 0:
        raise EmulationError(
            f"ccscope.compare: {_without_progress(stderr).strip() or 'the command failed'}",
            returncode=code,
            stderr=stderr,
        )
    report = json.loads(stdout)
    df = pd.DataFrame(report["rows"], columns=["seed", "flow", "group", "metric", "unit", "sim", "kernel", "rel_diff"])
    df["group"] = df["group"].astype(object).fillna("")
    df.attrs["comparison"] = report
    notes = list(dict.fromkeys([*(report.get("notes") or []),
                                *(n for s in report.get("emulated") or [] for n in s.get("notes") or [])]))
    df.attrs["notes"] = notes
    for n in notes:
        warnings.warn(f"ccscope.compare: {n}", UserWarning, stacklevel=2)
    if trace_dir is not None:
        df.attrs["trace_dir"] = os.fspath(trace_dir)
    return df
