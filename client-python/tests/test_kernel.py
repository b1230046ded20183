"""ccscope.compare: the command line it runs, the DataFrame it returns, its errors.

The fake-binary tests run anywhere; the real one runs a 3 s comparison on the
kernel when emulation is available (Linux, root, /dev/net/tun) and says loudly
when it is not.
"""

from __future__ import annotations

import json
import os
import stat
import warnings

import pytest

import ccscope
from ccscope.errors import EmulationError

pd = pytest.importorskip("pandas")

REPORT = {
    "scenario": "emu-clean",
    "kernel": "6.18.0",
    "seeds": [1, 2],
    "rows": [
        {"seed": 1, "flow": "f0", "metric": "goodput", "unit": "Mbps", "sim": 46.8, "kernel": 46.7, "rel_diff": -0.1 / 46.8},
        {"seed": 2, "flow": "f0", "metric": "t_100MB", "unit": "ms", "sim": None, "kernel": None, "rel_diff": None},
        {"seed": 1, "flow": "web/0", "group": "web", "metric": "goodput", "unit": "Mbps", "sim": 2.0, "kernel": 2.1,
         "rel_diff": 0.05},
        {"seed": 1, "flow": "web", "metric": "fct_p50[10KB,100KB)", "unit": "ms", "sim": 100.0, "kernel": 104.0,
         "rel_diff": 0.04},
    ],
    "sim": [],
    "emulated": [],
}


def fake_binary(tmp_path, *, stdout="", stderr="", code=0):
    """A stand-in for the ccscope binary that records its arguments."""
    exe = tmp_path / "ccscope"
    (tmp_path / "out.json").write_text(stdout)
    (tmp_path / "err.txt").write_text(stderr)
    exe.write_text(
        "#!/bin/sh\n"
        f'printf "%s\\n" "$@" > "{tmp_path}/args.txt"\n'
        f'cat "{tmp_path}/out.json"\n'
        f'cat "{tmp_path}/err.txt" >&2\n'
        f"exit {code}\n"
    )
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


@pytest.fixture
def can_emulate(monkeypatch):
    monkeypatch.setattr(ccscope.kernel, "emulation_available", lambda: None)


def test_compare_builds_the_command_and_the_frame(tmp_path, can_emulate):
    exe = fake_binary(tmp_path, stdout=json.dumps(REPORT))
    df = ccscope.compare(
        {"name": "x"}, seeds=[1, 2], set={"links.bottleneck.rate": "50Mbps", "flows.f0.tcp.sack": False},
        duration="3s", trace_dir=tmp_path / "tr", report=tmp_path / "cmp.html", binary=exe,
    )
    args = (tmp_path / "args.txt").read_text().split("\n")
    assert args[0] == "compare" and args[1].endswith("scenario.json") and args[2] == "--json"
    # A dict's trace and CDF files are relative to the working directory, as open reads them.
    assert args[args.index("--files-dir") + 1] == os.getcwd()
    assert args[args.index("--seeds") + 1] == "1,2"
    assert args[args.index("--duration") + 1] == "3s"
    assert "links.bottleneck.rate=50Mbps" in args and "flows.f0.tcp.sack=false" in args
    assert args[args.index("--trace") + 1] == str(tmp_path / "tr")
    assert args[args.index("--report") + 1] == str(tmp_path / "cmp.html")
    assert args[args.index("--retries") + 1] == "2"  # the default, as the command line's
    assert list(df.columns) == ["seed", "flow", "group", "metric", "unit", "sim", "kernel", "rel_diff"]
    assert len(df) == 4 and df.loc[0, "kernel"] == 46.7 and pd.isna(df.loc[1, "sim"])
    assert list(df.group) == ["", "", "web", ""] and df.loc[3, "metric"] == "fct_p50[10KB,100KB)"
    assert df.attrs["comparison"]["kernel"] == "6.18.0"


def test_compare_passes_cc_state(tmp_path, can_emulate):
    exe = fake_binary(tmp_path, stdout=json.dumps(REPORT))
    ccscope.compare("p-rtr-p", binary=exe)
    assert "--cc-state" not in (tmp_path / "args.txt").read_text().split("\n")
    # A built-in's files are relative to the working directory, a scenario file's to it.
    args = (tmp_path / "args.txt").read_text().split("\n")
    assert args[args.index("--files-dir") + 1] == os.getcwd()
    ccscope.compare(str(tmp_path / "my.json"), binary=exe)
    assert "--files-dir" not in (tmp_path / "args.txt").read_text().split("\n")
    ccscope.compare("p-rtr-p", cc_state=True, trace_dir=tmp_path / "tr", binary=exe)
    assert "--cc-state" in (tmp_path / "args.txt").read_text().split("\n")


def test_compare_warns_of_what_the_kernel_run_took_differently(tmp_path, can_emulate):
    note = (
        "flows[f0].tcp.gro_interval: 200us not applied: the TUN path has no GRO, so the kernel's "
        "receiver ACKs as one without it: every second segment, a few more when its application "
        "reads late (gro_interval=0s: every second)"
    )
    report = dict(REPORT, emulated=[{"notes": [note]}, {"notes": [note]}, {}])
    exe = fake_binary(tmp_path, stdout=json.dumps(report))
    with pytest.warns(UserWarning, match=r"flows\[f0\]\.tcp\.gro_interval: 200us not applied") as rec:
        df = ccscope.compare("wifi", binary=exe)
    assert df.attrs["notes"] == [note]  # once, though both seeds' runs carry it
    assert sum("gro_interval" in str(w.message) for w in rec) == 1


def test_compare_warns_of_an_override_that_dropped_fields(tmp_path, can_emulate):
    note = (
        'set flows.f0.tcp replaces the whole object and drops its "gro_interval"; '
        "to change one field, set flows.f0.tcp.FIELD alone"
    )
    lateness = "lateness: the relay wrote packets 1.20 ms late at the 99th percentile"
    report = dict(REPORT, notes=[note], emulated=[{"notes": [lateness]}])
    exe = fake_binary(tmp_path, stdout=json.dumps(report))
    with pytest.warns(UserWarning, match="replaces the whole object"):
        df = ccscope.compare("wifi", set={"flows.f0.tcp": {"hz": 250}}, binary=exe)
    assert df.attrs["notes"] == [note, lateness]


def test_compare_passes_retries_and_refuses_bad_ones(tmp_path, can_emulate):
    exe = fake_binary(tmp_path, stdout=json.dumps(REPORT))
    ccscope.compare("p-rtr-p", retries=0, binary=exe)
    args = (tmp_path / "args.txt").read_text().split("\n")
    assert args[args.index("--retries") + 1] == "0"
    for bad in (-1, 1.5, "2", True):
        with pytest.raises(ValueError, match="retries"):
            ccscope.compare("p-rtr-p", retries=bad, binary=exe)


def test_compare_refuses_a_report_not_html(tmp_path, can_emulate):
    exe = fake_binary(tmp_path, stdout=json.dumps(REPORT))
    with pytest.raises(ValueError, match=r"report='cmp.txt': the file name must end in .html"):
        ccscope.compare("p-rtr-p", report="cmp.txt", binary=exe)
    assert not (tmp_path / "args.txt").exists()


def test_compare_echoes_progress(tmp_path, can_emulate, capsys):
    lines = "compare: seed 1 (1 of 1): simulating\ncompare: seed 1: running on the kernel for 3s\n"
    exe = fake_binary(tmp_path, stdout=json.dumps(REPORT), stderr=lines)
    ccscope.compare("p-rtr-p", binary=exe)
    assert capsys.readouterr().err == lines
    ccscope.compare("p-rtr-p", progress=False, binary=exe)
    assert capsys.readouterr().err == ""


def test_compare_failure_carries_stderr(tmp_path, can_emulate):
    msg = 'ccscope: emulate: flows[f0].cc: the kernel has no congestion control "bbr3" (tcp_available_congestion_control: reno cubic)'
    exe = fake_binary(tmp_path, stderr="compare: seed 1 (1 of 1): simulating\n" + msg + "\n", code=1)
    with pytest.raises(EmulationError) as ei:
        ccscope.compare("p-rtr-p", binary=exe)
    assert ei.value.returncode == 1 and "bbr3" in ei.value.stderr and "bbr3" in str(ei.value)
    assert "simulating" in ei.value.stderr and "simulating" not in str(ei.value)


def test_compare_refuses_without_emulation(monkeypatch):
    monkeypatch.setattr(ccscope.kernel, "emulation_available", lambda: "emulation needs root")
    with pytest.raises(EmulationError, match="needs root"):
        ccscope.compare("p-rtr-p")


@pytest.mark.kernel
def test_compare_on_the_kernel(binary_env, tmp_path):
    why = ccscope.emulation_available()
    if why is not None:
        pytest.skip(f"EMULATION TEST NOT RUN: {why}")
    scn = {
        "name": "py-clean",
        "runtime": {"seed": 1, "duration": "3s"},
        "nodes": [{"id": "h1", "kind": "endpoint"}, {"id": "h2", "kind": "endpoint"}],
        "links": [{"id": "bottleneck", "a": "h1", "b": "h2", "rate": "50Mbps", "delay": "20ms",
                   "ab": {"qdisc": {"kind": "fifo", "limit": "250KB"}}}],
        "flows": [{"id": "f0", "src": "h1", "dst": "h2", "cc": "cubic",
                   "tcp": {"pacing": True, "hz": ccscope.kernel_hz() or 1000}}],
    }
    # A relay that fell behind real time (the machine busy with the Go suite beside this one) idles the
    # link and measures the machine, not the kernel; so does a kernel whose ACK processing waited for a
    # core: the delays it adds to its RTT samples can end CUBIC's slow start early (HyStart's delay test;
    # one CI run measured 33.9 Mbps on the kernel against 45.9, and three runs alone on the same machine
    # all agreed within 5 %). Up to three tries while the relay's p99 lateness is over 1 ms or the
    # goodputs disagree (server/emulate's runOnTime retries the same way), the last one checked; each
    # try taken again is reported with its figures in the test summary.
    page = tmp_path / "cmp.html"
    for attempt in range(1, 4):
        df = ccscope.compare(scn, report=page)
        emulated = df.attrs["comparison"]["emulated"][0]
        g = df[df.metric == "goodput"].iloc[0]
        late = emulated["lateness"].get("p99_ps") or 0
        if late <= 10**9 and abs(g.rel_diff) < 0.05:
            break
        if attempt < 3:
            warnings.warn(
                f"kernel run {attempt} taken again: goodput sim {g.sim:.2f} vs kernel {g.kernel:.2f} Mbps, "
                f"relay p99 lateness {late / 1e9:.2f} ms",
                stacklevel=1,
            )
    # Over 3 s, slow start included, the two agree within 5 % on this path (the Go tests hold 5 % over 6 s).
    assert abs(g.rel_diff) < 0.05, f"goodput sim {g.sim:.2f} vs kernel {g.kernel:.2f} Mbps"
    assert emulated["mode"] == "emulate"
    # The simulated flow ticks as this kernel does, so no note says otherwise.
    assert not [n for n in df.attrs["notes"] if ".tcp.hz:" in n], df.attrs["notes"]
    # Both runs on one page: the kernel's srtt dashed in the simulator's panel.
    html = page.read_text()
    assert '"label":"srtt · sim"' in html and '"label":"srtt · kernel"' in html and '"dash":1' in html


def test_kernel_hz_reads_the_kernel_configuration(monkeypatch, tmp_path):
    import gzip

    import ccscope.kernel as kernel

    cfg = tmp_path / "config.gz"
    with gzip.open(cfg, "wt") as f:
        f.write("CONFIG_PREEMPT_NONE=y\n# CONFIG_HZ_1000 is not set\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n")
    real_open = gzip.open
    monkeypatch.setattr(kernel.gzip, "open", lambda p, *a, **k: real_open(cfg if p == "/proc/config.gz" else p, *a, **k))
    assert ccscope.kernel_hz() == 250

    def missing(*a, **k):
        raise OSError("no config")

    monkeypatch.setattr(kernel.gzip, "open", missing)
    monkeypatch.setattr(kernel.platform, "release", lambda: "no-such-release")
    assert ccscope.kernel_hz() is None


def test_compare_timeout_stops_the_command(tmp_path, can_emulate):
    """On a timeout the command gets SIGTERM, as on Ctrl-C, so that it can take down its namespaces."""
    exe = tmp_path / "ccscope"
    exe.write_text(
        "#!/bin/sh\n"
        f"trap 'echo cleaned > {tmp_path}/stopped; exit 1' TERM\n"
        "echo 'compare: seed 1 (1 of 1): simulating' >&2\n"
        "sleep 30 >/dev/null 2>&1 & wait\n"
    )
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(EmulationError, match="no result within 0.5 s") as ei:
        ccscope.compare("p-rtr-p", timeout=0.5, progress=False, binary=exe)
    assert "simulating" in ei.value.stderr
    assert (tmp_path / "stopped").read_text() == "cleaned\n"
