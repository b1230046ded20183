"""Parameter sweeps: many independent runs, on a local process pool or Dask.

A sweep runs one simulation per parameter point. A declarative spec runs in
``ccscope sweep`` (Go, all cores, no server) and returns its Parquet catalog
as a DataFrame. A function sweep: locally, one private
server (or the server at ``url``) runs the sessions concurrently, one
goroutine each, and a pool of worker processes drives them and post-processes
results, so Python-side work (reading tables, computing statistics) is
parallel too. With ``client=`` a Dask cluster's workers do the driving; each
worker process starts its own private server (or connects to ``url``).
"""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .client import Client, _file_names, _is_scenario_file, _scenario_files, connect
from .results import Summary

__all__ = ["sweep", "grid", "run_spec"]

_clients: dict[tuple[str | None, str | None], Client] = {}


def grid(**axes: Iterable[Any]) -> list[dict[str, Any]]:
    """The cartesian product of parameter axes, as a list of points.

    Args:
        **axes: Parameter name → values. Use a dict instead of keywords for
            names with dots (``grid(**{"links.bottleneck.rate": [...]})``).

    Returns:
        One dict per combination, the last axis varying fastest.
    """
    names = list(axes)
    return [dict(zip(names, combo)) for combo in itertools.product(*(list(axes[n]) for n in names))]


def run_spec(
    client: Client,
    spec: Mapping[str, Any],
    point: Mapping[str, Any],
    *,
    files: Mapping[str, str | bytes] | None = None,
) -> Summary:
    """Run one point of a declarative sweep and return its summary.

    Args:
        client: A connected client.
        spec: ``{"scenario": name-or-config, "seed": int?, "set": {...}?,
            "until": duration?}``.
        point: Parameter values: ``"seed"`` sets the seed, any other key is
            an override path merged over ``spec["set"]``.
        files: Trace and CDF files, as :meth:`Client.open` takes them: those
            the point names are sent, others are read from disk.

    Returns:
        The run's :class:`~ccscope.Summary`.
    """
    overrides = dict(spec.get("set") or {})
    seed = spec.get("seed")
    for k, v in point.items():
        if k == "seed":
            seed = v
        else:
            overrides[k] = v
    if files:  # only those this point names, so that the server notes none unnamed
        config = spec["scenario"] if isinstance(spec["scenario"], Mapping) else None
        files = {n: files[n] for n in _file_names(config, overrides) if n in files}
    with client.open(spec["scenario"], seed=seed, set=overrides, files=files) as s:
        s.run(until=spec.get("until"), progress=False)
        return s.summary()


def _worker_client(url: str | None, token: str | None) -> Client:
    """This process's client for (url, token), made on first use and closed at exit."""
    key = (url, token)
    c = _clients.get(key)
    if c is None or c.closed:
        c = connect(url, token=token)
        _clients[key] = c
        # Pool workers leave through os._exit, which skips atexit; the
        # multiprocessing finalizer registry still runs.
        from multiprocessing import util

        util.Finalize(None, c.close, exitpriority=10)
    return c


def _run_point(task: tuple[Any, Mapping[str, Any], str | None, str | None], files: Any = None) -> Any:
    fn_or_spec, point, url, token = task
    c = _worker_client(url, token)
    if callable(fn_or_spec):
        return fn_or_spec(c, **point)
    return dict(run_spec(c, fn_or_spec, point, files=files))


def sweep(
    fn_or_spec: Callable[..., Any] | Mapping[str, Any],
    params: Sequence[Mapping[str, Any]] | Mapping[str, Iterable[Any]] | None = None,
    *,
    axes: Mapping[str, Iterable[Any]] | None = None,
    seeds: Iterable[int] | str | None = None,
    catalog: str | os.PathLike[str] | None = None,
    report_dir: str | os.PathLike[str] | None = None,
    processes: int | None = None,
    progress: bool = True,
    client: Any = None,
    url: str | None = None,
    token: str | None = None,
) -> Any:
    """Run one simulation per parameter point, in parallel.

    With a spec, the sweep is ``ccscope sweep`` (the Go binary running the
    points on all cores, no server) and the result is its catalog: a
    :class:`~ccscope.catalog.Catalog`, a pandas DataFrame with one row per
    run and flow (``.to_polars()`` too). With a function, each point runs
    ``fn(client, **point)`` on a worker process and the results come back
    as a list.

    Args:
        fn_or_spec: Either a spec ``{"scenario", "seed"?, "set"?, "until"?}``
            (``until`` sets every run's duration), or a function
            ``fn(client, **point) -> result`` (it gets a connected
            :class:`~ccscope.Client` of its worker process; with the default
            ``fork`` start method it may be defined in a notebook).
        params: A list of points (dicts of override path → value, and
            ``"seed"``), or a dict of axes crossed with :func:`grid`.
        axes: Spec only: impairment axes (path → values), each varied alone
            with the other axes at the scenario's value, crossed with
            ``params`` (a dict) and ``seeds``.
        seeds: Spec only: seeds to run every point with (a list, or a range
            string such as ``"1-5"``).
        catalog: Spec only: the Parquet catalog to write; an existing one
            is resumed (points with the same config hash are not rerun).
            Default: none kept (the catalog is read into memory and its
            temporary directory removed; its ``path`` is None).
        report_dir: Spec only: also write the catalog page
            ``report_dir/index.html`` and a page per run.
        processes: Runs (spec) or worker processes (function) at once;
            default the number of CPUs.
        progress: Show a tqdm bar over points.
        client: A ``dask.distributed.Client`` to run the points on its
            cluster instead (dask is imported only then); for a spec the
            catalog is then built in memory from the summaries.
        url: A running server for function workers (and Dask); default a
            private server started for the sweep or per Dask worker.
        token: The server's token.

    Returns:
        A :class:`~ccscope.catalog.Catalog` for a spec; for a function, its
        results in the order of the points.

    Raises:
        InvalidConfig: A spec point's scenario is invalid (the message
            names the point and the field).
        CcscopeError: The first point that failed, re-raised (the others
            are cancelled where possible).
    """
    if not callable(fn_or_spec) and client is None:
        return _sweep_catalog(fn_or_spec, params, axes, seeds, catalog, report_dir, processes, progress)
    if axes is not None or seeds is not None or catalog is not None or report_dir is not None:
        raise ValueError("ccscope.sweep: axes, seeds, catalog and report_dir are for a spec swept locally")
    if params is None:
        raise ValueError("ccscope.sweep: no points (params)")
    points = grid(**params) if isinstance(params, Mapping) else [dict(p) for p in params]
    if not points:
        return []
    if client is not None:
        res = _sweep_dask(client, fn_or_spec, points, url, token, progress)
        if callable(fn_or_spec):
            return res
        from .catalog import catalog_from_summaries

        return catalog_from_summaries(points, res)
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from ._server import LocalServer

    server = LocalServer() if url is None else None
    try:
        target = server.url if server is not None else url
        n = max(1, min(processes or os.cpu_count() or 1, len(points)))
        ctx = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
        results: list[Any] = [None] * len(points)
        with ProcessPoolExecutor(max_workers=n, mp_context=ctx) as pool:
            futures = {pool.submit(_run_point, (fn_or_spec, p, target, token)): i for i, p in enumerate(points)}
            bar = _bar(len(points), progress)
            try:
                for f in as_completed(futures):
                    results[futures[f]] = f.result()
                    if bar is not None:
                        bar.update(1)
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
            finally:
                if bar is not None:
                    bar.close()
    finally:
        if server is not None:
            server.stop()
    return results


def _sweep_catalog(
    spec: Mapping[str, Any],
    params: Any,
    axes: Mapping[str, Iterable[Any]] | None,
    seeds: Iterable[int] | str | None,
    catalog: Any,
    report_dir: Any,
    processes: int | None,
    progress: bool,
) -> Any:
    """Run a spec sweep with ``ccscope sweep`` and read its catalog; the
    temporary directory of its spec (and catalog, without ``catalog``) is
    removed however it ends."""
    import shutil
    import tempfile

    unknown = set(spec) - {"scenario", "seed", "set", "until"}
    if unknown:
        raise ValueError(f"ccscope.sweep: unknown spec keys {sorted(unknown)}; a spec has scenario, seed, set, until")
    go: dict[str, Any] = {"scenario": spec["scenario"]}
    fixed = dict(spec.get("set") or {})
    if spec.get("until") is not None:
        fixed["runtime.duration"] = spec["until"]
    if fixed:
        go["set"] = fixed
    if isinstance(params, Mapping):
        go["grid"] = {k: list(v) for k, v in params.items()}
    elif params is not None:
        go["points"] = [dict(p) for p in params]
        if not go["points"]:
            raise ValueError("ccscope.sweep: no points")
    if axes is not None:
        go["axes"] = {k: list(v) for k, v in axes.items()}
    if seeds is not None:
        go["seeds"] = seeds if isinstance(seeds, str) else [int(x) for x in seeds]
    elif spec.get("seed") is not None and not any("seed" in p for p in go.get("points", [])):
        go["seeds"] = [int(spec["seed"])]
    work = Path(tempfile.mkdtemp(prefix="ccscope-sweep-"))
    try:
        return _run_go_sweep(go, spec, work, catalog, report_dir, processes, progress)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run_go_sweep(
    go: dict[str, Any],
    spec: Mapping[str, Any],
    work: Path,
    catalog: Any,
    report_dir: Any,
    processes: int | None,
    progress: bool,
) -> Any:
    """Run ``ccscope sweep`` on the spec ``go`` (written into ``work``) and
    read its catalog."""
    import subprocess

    from ._server import find_binary
    from .catalog import read_catalog
    from .errors import CcscopeError, InvalidConfig

    spec_path = work / "spec.json"
    spec_path.write_text(json.dumps(go))
    out = Path(catalog) if catalog is not None else work / "catalog.parquet"
    cmd = [str(find_binary()), "sweep", str(spec_path), "-o", str(out), "--progress", "json" if progress else "none"]
    if processes:
        cmd += ["--jobs", str(processes)]
    if report_dir is not None:
        cmd += ["--report-dir", str(report_dir)]
    if not _is_scenario_file(spec["scenario"]):
        cmd += ["--files-dir", os.getcwd()]  # a dict's or a built-in's trace and CDF files, as open reads them
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    bar = None
    other: list[str] = []
    assert proc.stderr is not None
    try:
        for line in proc.stderr:
            if line.startswith("{"):
                p = json.loads(line)
                if bar is None and progress:
                    bar = _bar(p["total"], True)
                if bar is not None:
                    bar.n = p["done"]
                    bar.refresh()
                continue
            other.append(line.rstrip("\n"))
        rc = proc.wait()
    except BaseException:
        proc.terminate()
        proc.wait()
        raise
    finally:
        if bar is not None:
            bar.close()
    if rc != 0:
        msg = "\n".join(other).replace(f"{spec_path}: ", "")  # the spec file is this call's, and goes with it
        if "invalid scenario" in msg or "sweep spec" in msg:
            raise InvalidConfig("invalid_config", msg)
        raise CcscopeError(f"ccscope sweep failed (exit {rc}):\n{msg}")
    cat = read_catalog(out)
    if catalog is None:
        cat.path = None  # read into memory; its file goes with the temporary directory
    return cat


def _sweep_dask(
    dask_client: Any, fn_or_spec: Any, points: list[dict[str, Any]], url: str | None, token: str | None, progress: bool
) -> list[Any]:
    from dask.distributed import as_completed

    files = None
    if not callable(fn_or_spec):
        fn_or_spec, files = _spec_here(fn_or_spec, points)
        # Sent to each worker once, not with every point.
        [files] = dask_client.scatter([files], broadcast=True, hash=False)
    futures = dask_client.map(_run_point, [(fn_or_spec, p, url, token) for p in points], files=files, pure=False)
    index = {f.key: i for i, f in enumerate(futures)}
    results: list[Any] = [None] * len(points)
    bar = _bar(len(points), progress)
    try:
        for f in as_completed(futures):
            results[index[f.key]] = f.result()
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return results


def _spec_here(spec: Mapping[str, Any], points: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The spec with a scenario file read into its config, and the trace and
    CDF files its scenario, overrides and points name, read here as
    :meth:`Client.open` would read them: Dask workers may not share this
    machine's files or working directory."""
    spec = dict(spec)
    base = Path.cwd()
    if _is_scenario_file(spec["scenario"]):
        path = Path(spec["scenario"])
        spec["scenario"], base = json.loads(path.read_text()), path.parent
    config = spec["scenario"] if isinstance(spec["scenario"], Mapping) else None
    names: list[str] = []
    for p in [{}, *points]:
        for n in _file_names(config, {**dict(spec.get("set") or {}), **{k: v for k, v in p.items() if k != "seed"}}):
            if n not in names:
                names.append(n)
    return spec, _scenario_files(names, base)


def _bar(total: int, progress: bool) -> Any:
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="run", desc="sweep")
