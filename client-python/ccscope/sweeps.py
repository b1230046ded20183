"""Parameter sweeps: many independent runs, on a local process pool or Dask.

A sweep runs one simulation per parameter point. Locally, one private
server (or the server at ``url``) runs the sessions concurrently, one
goroutine each, and a pool of worker processes drives them and post-processes
results, so Python-side work (reading tables, computing statistics) is
parallel too. With ``client=`` a Dask cluster's workers do the driving; each
worker process starts its own private server (or connects to ``url``).
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .client import Client, connect
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


def run_spec(client: Client, spec: Mapping[str, Any], point: Mapping[str, Any]) -> Summary:
    """Run one point of a declarative sweep and return its summary.

    Args:
        client: A connected client.
        spec: ``{"scenario": name-or-config, "seed": int?, "set": {...}?,
            "until": duration?}``.
        point: Parameter values: ``"seed"`` sets the seed, any other key is
            an override path merged over ``spec["set"]``.

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
    with client.open(spec["scenario"], seed=seed, set=overrides) as s:
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


def _run_point(task: tuple[Any, Mapping[str, Any], str | None, str | None]) -> Any:
    fn_or_spec, point, url, token = task
    c = _worker_client(url, token)
    if callable(fn_or_spec):
        return fn_or_spec(c, **point)
    return dict(run_spec(c, fn_or_spec, point))


def sweep(
    fn_or_spec: Callable[..., Any] | Mapping[str, Any],
    params: Sequence[Mapping[str, Any]] | Mapping[str, Iterable[Any]],
    *,
    processes: int | None = None,
    progress: bool = True,
    client: Any = None,
    url: str | None = None,
    token: str | None = None,
) -> list[Any]:
    """Run one simulation per parameter point, in parallel.

    Args:
        fn_or_spec: Either a function ``fn(client, **point) -> result`` (it
            gets a connected :class:`~ccscope.Client` of its worker process;
            with the default ``fork`` start method it may be defined in a
            notebook), or a spec ``{"scenario", "seed"?, "set"?, "until"?}``
            whose points are override paths (and ``"seed"``): each point's
            result is then its run's :class:`~ccscope.Summary`.
        params: A list of points (dicts), or a dict of axes expanded with
            :func:`grid`.
        processes: Worker processes (default: the number of CPUs, at most
            the number of points).
        progress: Show a tqdm bar over points.
        client: A ``dask.distributed.Client`` to run the points on its
            cluster instead of a local pool (dask is imported only then).
        url: A running server for the workers; default a private server
            started for the sweep (local pool) or per Dask worker process.
        token: The server's token.

    Returns:
        The results, in the order of ``params``.

    Raises:
        CcscopeError: The first point that failed, re-raised (the others
            are cancelled where possible).
    """
    points = grid(**params) if isinstance(params, Mapping) else [dict(p) for p in params]
    if not points:
        return []
    if client is not None:
        return _sweep_dask(client, fn_or_spec, points, url, token, progress)
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
    return [Summary(r) if not callable(fn_or_spec) else r for r in results]


def _sweep_dask(
    dask_client: Any, fn_or_spec: Any, points: list[dict[str, Any]], url: str | None, token: str | None, progress: bool
) -> list[Any]:
    from dask.distributed import as_completed

    futures = dask_client.map(_run_point, [(fn_or_spec, p, url, token) for p in points], pure=False)
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
    return [Summary(r) if not callable(fn_or_spec) else r for r in results]


def _bar(total: int, progress: bool) -> Any:
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="run", desc="sweep")
