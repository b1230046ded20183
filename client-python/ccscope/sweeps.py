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
from .codec import plain
from .errors import InvalidConfig, NotFound
from .results import Summary

__all__ = ["sweep", "grid", "run_spec"]

_clients: dict[tuple[str | None, str | None], Client] = {}


def grid(**axes: Iterable[Any] | Any) -> list[dict[str, Any]]:
    """The cartesian product of parameter axes, as a list of points.

    Args:
        **axes: Parameter name → values. Use a dict instead of keywords for
            names with dots (``grid(**{"links.bottleneck.rate": [...]})``).
            A string, a map or another single value is one value, as in a
            sweep spec's grid (``cc="cubic"`` is one point, not five); a
            numpy array is its elements.

    Returns:
        One dict per combination, the last axis varying fastest.
    """
    names = list(axes)
    return [dict(zip(names, combo)) for combo in itertools.product(*(_axis_values(axes[n]) for n in names))]


def _axis_values(v: Any) -> list[Any]:
    """An axis's values: a list, tuple, range or array is its elements;
    anything else (a string, a map, a number) is one value."""
    v = plain(v)
    if isinstance(v, (str, bytes, Mapping)) or not isinstance(v, Iterable):
        return [v]
    return list(v)


def run_spec(
    client: Client,
    spec: Mapping[str, Any],
    point: Mapping[str, Any],
    *,
    files: Mapping[str, str | bytes] | None = None,
) -> Summary:
    """Run one point of a declarative sweep and return its summary.

    The run is the one ``ccscope sweep`` makes of the point: the same
    overrides in the same order (the spec's ``set``, ``until`` as
    ``runtime.duration``, the point's parameters, its seed), so the same
    canonical config, hash and digest.

    Args:
        client: A connected client.
        spec: ``{"scenario": name-or-config, "seed": int?, "set": {...}?,
            "until": duration?}``; a one-element list in ``set`` is its
            element, as in a spec file.
        point: Parameter values: ``"seed"`` sets the seed, any other key is
            an override path applied after ``spec["set"]``.
        files: Trace and CDF files, as :meth:`Client.open` takes them: those
            the point names are sent, others are read from disk.

    Returns:
        The run's :class:`~ccscope.Summary`.

    Raises:
        InvalidConfig: The spec or the point is invalid (the message names
            the point).
        ValueError: The spec has a key it does not take, or a seed is not
            a non-negative integer.
    """
    sets = _point_sets(spec, point)
    if files:  # only those this point names, so that the server notes none unnamed
        config = spec["scenario"] if isinstance(spec["scenario"], Mapping) else None
        files = {n: files[n] for n in _file_names(config, sets) if n in files}
    try:
        session = client.open(spec["scenario"], set=sets, files=files)
    except InvalidConfig as e:
        where = " ".join(f"{k}={v}" for k, v in point.items()) or "(the spec alone)"
        raise InvalidConfig(e.code, f"sweep point {where}: {e.message}", e.path, e.details) from None
    with session as s:
        s.run(progress=False)
        return s.summary()


def _check_spec(spec: Any) -> None:
    """A spec's keys, as ``sweep`` and ``run_spec`` take them."""
    if not isinstance(spec, Mapping):
        raise TypeError(f"ccscope.sweep: a spec is a dict {{scenario, seed?, set?, until?}}, not {type(spec).__name__}")
    unknown = set(spec) - set(_SPEC_KEYS)
    if unknown:
        raise ValueError(f"ccscope.sweep: unknown spec keys {sorted(unknown)}; a spec has scenario, seed, set, until")
    if spec.get("scenario") is None:
        raise ValueError("ccscope.sweep: the spec has no scenario (a built-in name, a file path or a dict)")
    if not isinstance(spec.get("set") or {}, Mapping):
        raise TypeError(f"ccscope.sweep: the spec's set is {{path: value}}, not {type(spec['set']).__name__}")


_SPEC_KEYS = ("scenario", "seed", "set", "until")


def _spec_set(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The spec's fixed overrides as ``ccscope sweep`` passes them on: its
    ``set``, then ``until`` as ``runtime.duration``."""
    fixed = dict(spec.get("set") or {})
    if spec.get("until") is not None:
        fixed["runtime.duration"] = spec["until"]
    return fixed


def _point_sets(spec: Mapping[str, Any], point: Mapping[str, Any]) -> list[str]:
    """A point's overrides as ``ccscope sweep`` makes them (server/sweep,
    Point.Sets): the spec's set (each value one, a one-element list its
    element), the point's parameters, then ``runtime.seed``, each as
    ``path=JSON``, applied in this order."""
    _check_spec(spec)
    sets = []
    for path, v in _spec_set(spec).items():
        if path in ("seed", "runtime.seed"):
            raise _spec_error(f'set.{path}: give seeds in "seeds"', f"set.{path}")
        v = _one_value(f"set.{path}", v, "to sweep the values, give them in params; ")
        sets.append(f"{path}={_json(v)}")
    sets += [f"{path}={_json(v)}" for path, v in point.items() if path != "seed"]
    seed = point.get("seed", spec.get("seed"))
    if seed is not None:
        sets.append(f"runtime.seed={_seed(seed, 'seed')}")
    return sets


def _one_value(where: str, v: Any, hint: str = "") -> Any:
    """The value of a spec's set entry or explicit point, as ``ccscope
    sweep`` reads it: a list there is a list of values, of which there must
    be one (a list-valued field is a list in a list)."""
    v = plain(v)
    if not isinstance(v, (list, tuple)):
        return v
    if len(v) != 1:
        if not v:
            raise _spec_error(f"{where}: no values", where)
        inner = ", ".join(_json(x) for x in v)
        raise _spec_error(
            f"{where}: one value, not a list of {len(v)} ({hint}a list-valued field is written as a list in a list, "
            f"[[{inner}]])",
            where,
        )
    return v[0]


def _seed(v: Any, where: str) -> int:
    """A seed as given, if it is one: a non-negative integer (numpy's too),
    never a float rounded or a bool."""
    p = plain(v)
    if type(p) is not int or p < 0:
        raise _spec_error(f"{where}: {v!r} is not a seed (a non-negative integer)", where)
    return p


def _json(v: Any) -> str:
    return json.dumps(v, default=_json_default)


def _json_default(v: Any) -> Any:
    p = plain(v)
    if p is v:
        raise TypeError(f"ccscope.sweep: {v!r} ({type(v).__name__}) is not a value a scenario takes")
    return p


def _spec_error(message: str, path: str) -> InvalidConfig:
    """The error ``ccscope sweep`` gives for a bad spec, raised here where
    the spec does not go to it (run_spec)."""
    return InvalidConfig("invalid_config", f"ccscope: sweep spec: {message}", path)


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


def _run_point(task: tuple[Callable[..., Any], Mapping[str, Any], str | None, str | None]) -> Any:
    """One point of a function sweep on a worker process: fn(client, **point)."""
    fn, point, url, token = task
    return fn(_worker_client(url, token), **point)


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
        catalog: Spec, run locally: the Parquet catalog to write; an existing one
            is resumed (points with the same config hash are not rerun).
            Default: none kept (the catalog is read into memory and its
            temporary directory removed; its ``path`` is None).
        report_dir: Spec, run locally: also write the catalog page
            ``report_dir/index.html`` and a page per run.
        processes: Runs (spec) or worker processes (function) at once;
            default the number of CPUs.
        progress: Show a tqdm bar over points.
        client: A ``dask.distributed.Client`` to run the points on its
            cluster instead (dask is imported only then); a spec is then
            planned here (``ccscope sweep --dry-run``), each distinct run
            made once on the cluster, and its catalog built in memory from
            the summaries.
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
    if not callable(fn_or_spec):
        _check_spec(fn_or_spec)
        go = _go_spec(fn_or_spec, params, axes, seeds)
        if client is None:
            return _sweep_catalog(go, fn_or_spec, catalog, report_dir, processes, progress)
        if catalog is not None or report_dir is not None:
            raise ValueError(
                "ccscope.sweep: catalog= and report_dir= are files a local sweep writes; on Dask the catalog is "
                "built in memory (keep it with its to_parquet)"
            )
        return _sweep_spec_dask(client, go, fn_or_spec, url, token, progress)
    if axes is not None or seeds is not None or catalog is not None or report_dir is not None:
        raise ValueError("ccscope.sweep: axes, seeds, catalog and report_dir are for a spec, not a function")
    if params is None:
        raise ValueError("ccscope.sweep: no points (params)")
    points = grid(**params) if isinstance(params, Mapping) else [dict(p) for p in params]
    if not points:
        return []
    if client is not None:
        return _sweep_dask(client, _run_point, [(fn_or_spec, p, url, token) for p in points], None, progress)
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


def _go_spec(
    spec: Mapping[str, Any],
    params: Any,
    axes: Mapping[str, Iterable[Any]] | None,
    seeds: Iterable[int] | str | None,
) -> dict[str, Any]:
    """The sweep spec file ``ccscope sweep`` reads for a spec and its
    points, axes and seeds."""
    scenario = spec["scenario"]
    go: dict[str, Any] = {"scenario": os.fspath(scenario) if isinstance(scenario, os.PathLike) else scenario}
    fixed = _spec_set(spec)
    if fixed:
        go["set"] = fixed
    if isinstance(params, Mapping):
        go["grid"] = {k: _axis_values(v) for k, v in params.items()}
    elif params is not None:
        go["points"] = [dict(p) for p in params]
        if not go["points"]:
            raise ValueError("ccscope.sweep: no points")
    if axes is not None:
        go["axes"] = {k: _axis_values(v) for k, v in axes.items()}
    if seeds is not None:
        if spec.get("seed") is not None:
            raise ValueError("ccscope.sweep: a seed in the spec and seeds=; give one of them")
        go["seeds"] = seeds if isinstance(seeds, str) else _axis_values(seeds)
    elif spec.get("seed") is not None:
        if "points" in go:  # a point without a seed of its own runs the spec's, as run_spec does
            go["points"] = [p if "seed" in p else {**p, "seed": spec["seed"]} for p in go["points"]]
        else:
            go["seeds"] = [spec["seed"]]
    return go


def _sweep_catalog(
    go: dict[str, Any],
    spec: Mapping[str, Any],
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

    from .catalog import read_catalog

    out = Path(catalog) if catalog is not None else work / "catalog.parquet"
    cmd = _sweep_command(go, spec, work) + ["-o", str(out), "--progress", "json" if progress else "none"]
    if processes:
        cmd += ["--jobs", str(processes)]
    if report_dir is not None:
        cmd += ["--report-dir", str(report_dir)]
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
        raise _sweep_failed(rc, other, work)
    cat = read_catalog(out)
    if catalog is None:
        cat.path = None  # read into memory; its file goes with the temporary directory
    return cat


def _sweep_command(go: dict[str, Any], spec: Mapping[str, Any], work: Path) -> list[str]:
    """``ccscope sweep`` over the spec ``go``, written into ``work``."""
    from ._server import find_binary

    spec_path = work / "spec.json"
    spec_path.write_text(json.dumps(go, default=_json_default))
    cmd = [str(find_binary()), "sweep", str(spec_path)]
    if not _is_scenario_file(spec["scenario"]):
        cmd += ["--files-dir", os.getcwd()]  # a dict's or a built-in's trace and CDF files, as open reads them
    return cmd


def _sweep_failed(rc: int, lines: list[str], work: Path) -> Exception:
    """The error of a ``ccscope sweep`` that exited with rc, from its stderr."""
    from .errors import CcscopeError

    msg = "\n".join(lines).replace(f"{work / 'spec.json'}: ", "")  # the spec file is this call's, and goes with it
    if "invalid scenario" in msg or "sweep spec" in msg:
        return InvalidConfig("invalid_config", msg)
    if "no built-in scenario" in msg:
        return NotFound("not_found", msg, "scenario")  # as Client.open raises it
    return CcscopeError(f"ccscope sweep failed (exit {rc}):\n{msg}")


def _plan(go: dict[str, Any], spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The points of a spec sweep as ``ccscope sweep --dry-run`` plans them
    (every point checked, each with its overrides and config hash), run
    here, where the spec's files are."""
    import shutil
    import subprocess
    import tempfile

    work = Path(tempfile.mkdtemp(prefix="ccscope-sweep-"))
    try:
        cmd = _sweep_command(go, spec, work) + ["-o", str(work / "none.parquet"), "--dry-run"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise _sweep_failed(proc.returncode, proc.stderr.splitlines(), work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return [json.loads(line) for line in proc.stdout.splitlines()]


def _sweep_spec_dask(
    dask_client: Any, go: dict[str, Any], spec: Mapping[str, Any], url: str | None, token: str | None, progress: bool
) -> Any:
    """A spec sweep on Dask: planned here as ``ccscope sweep`` plans it,
    each distinct scenario (config hash) run once on the cluster, and
    catalogued as ``ccscope sweep`` catalogues it."""
    from .catalog import catalog_from_summaries

    plan = _plan(go, spec)
    runs: dict[str, list[str]] = {}  # config hash → the overrides of its first point
    for p in plan:
        runs.setdefault(p["config_hash"], p["sets"])
    scenario, files = _spec_here(spec, list(runs.values()))
    tasks = [(scenario, sets, url, token) for sets in runs.values()]
    summaries = dict(zip(runs, _sweep_dask(dask_client, _run_planned, tasks, files, progress)))
    for h, summary in summaries.items():  # the catalog is keyed on them: a run must be what was planned
        if summary["config_hash"] != h:
            from .errors import CcscopeError

            raise CcscopeError(
                f"ccscope.sweep: a run on the cluster has config hash {summary['config_hash'][:16]}, planned as "
                f"{h[:16]} (its overrides: {' '.join(runs[h])}); the worker's server and this one differ"
            )
    return catalog_from_summaries(
        [p["params"] for p in plan],
        [summaries[p["config_hash"]] for p in plan],
        [p["axis"] for p in plan],
    )


def _sweep_dask(dask_client: Any, fn: Callable[..., Any], tasks: list[Any], files: Any, progress: bool) -> list[Any]:
    """fn(task, files=files) for each task on the Dask cluster, in order."""
    from dask.distributed import as_completed

    kw = {}
    if files is not None:
        # Sent to each worker once, not with every task.
        [kw["files"]] = dask_client.scatter([files], broadcast=True, hash=False)
    futures = dask_client.map(fn, tasks, pure=False, **kw)
    index = {f.key: i for i, f in enumerate(futures)}
    results: list[Any] = [None] * len(tasks)
    bar = _bar(len(tasks), progress)
    try:
        for f in as_completed(futures):
            results[index[f.key]] = f.result()
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return results


def _run_planned(task: tuple[Any, list[str], str | None, str | None], files: Mapping[str, bytes] | None = None) -> Any:
    """One planned run of a spec sweep on a Dask worker: its summary."""
    scenario, sets, url, token = task
    if files:  # only those this run names, so that the server notes none unnamed
        config = scenario if isinstance(scenario, Mapping) else None
        files = {n: files[n] for n in _file_names(config, sets) if n in files}
    with _worker_client(url, token).open(scenario, set=sets, files=files) as s:
        s.run(progress=False)
        return dict(s.summary())


def _spec_here(spec: Mapping[str, Any], sets: list[list[str]]) -> tuple[Any, dict[str, bytes]]:
    """The spec's scenario with a scenario file read into its config, and
    the trace and CDF files it and the runs' overrides name, read here as
    :meth:`Client.open` would read them: Dask workers may not share this
    machine's files or working directory."""
    scenario, base = spec["scenario"], Path.cwd()
    if _is_scenario_file(scenario):
        path = Path(scenario)
        scenario, base = json.loads(path.read_text()), path.parent
    config = scenario if isinstance(scenario, Mapping) else None
    names: list[str] = []
    for s in sets:
        for n in _file_names(config, s):
            if n not in names:
                names.append(n)
    return scenario, _scenario_files(names, base)


def _bar(total: int, progress: bool) -> Any:
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="run", desc="sweep")
