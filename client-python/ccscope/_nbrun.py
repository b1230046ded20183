"""Run a notebook top to bottom in a fresh kernel: `make demo`'s runner and the notebook tests'.

    python -m ccscope._nbrun NOTEBOOK.ipynb --html OUT.html [--timeout S]

It is nbconvert's `--execute --to html` with two changes. The kernel client
waits for the kernel's messages in slices of half a second (_SlicedChannel).
nbclient waits on pyzmq's asyncio poll, which watches the socket's
edge-triggered descriptor: a message that came in while nothing polled can
leave it asleep until its timeout, whose final check then finds the message.
In four of five fresh-clone `make test` runs a notebook sat 120 s (the cell
timeout) between two cells, the kernel done with the first and nbclient's
event loop asleep in epoll, then went on without an error; sliced, such a
miss costs at most half a second. And on POSIX systems the kernel talks to
the runner over Unix sockets rather than TCP on loopback: nothing else on the
machine can reach it, and ipykernel does not warn, on every run, that its
TCP traffic is unencrypted.

It needs the `demo` or `test` extra (nbclient, nbformat, nbconvert for --html).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from pathlib import Path
from queue import Empty

import nbclient
import nbformat
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.manager import AsyncKernelManager
from jupyter_core.paths import jupyter_runtime_dir
from traitlets import Type, default


class _SlicedChannel(AsyncZMQSocketChannel):
    """A kernel channel whose waits poll at most half a second at a time (see the module's docstring)."""

    SLICE_S = 0.5

    async def get_msg(self, timeout: float | None = None) -> dict:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                return await super().get_msg(timeout=self.SLICE_S if left is None else min(self.SLICE_S, left))
            except Empty:
                if left is not None and left <= self.SLICE_S:
                    raise


class _SlicedClient(AsyncKernelClient):
    shell_channel_class = Type(_SlicedChannel)
    iopub_channel_class = Type(_SlicedChannel)
    stdin_channel_class = Type(_SlicedChannel)
    control_channel_class = Type(_SlicedChannel)


class SlicedKernelManager(AsyncKernelManager):
    """A kernel manager whose clients wait in slices (_SlicedChannel)."""

    @default("client_factory")
    def _client_factory_default(self) -> type:
        return _SlicedClient

    @default("transport")
    def _transport_default(self) -> str:
        return "ipc" if os.name == "posix" else "tcp"

    @default("ip")
    def _ip_default(self) -> str:
        if self.transport != "ipc":
            return super()._ip_default()
        # An absolute path: the kernel runs in the notebook's directory, the
        # runner in its own. The sockets go when the kernel is shut down.
        runtime = jupyter_runtime_dir()
        os.makedirs(runtime, exist_ok=True)
        return os.path.join(runtime, f"ccscope-nbrun-{uuid.uuid4().hex[:12]}-ipc")


def execute(nb: nbformat.NotebookNode, *, workdir: Path, timeout: float) -> None:
    """Run nb's cells in order in a fresh python3 kernel started in workdir, recording their outputs in nb.

    A cell that raises, or runs longer than timeout seconds, raises nbclient's error."""
    nbclient.NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        kernel_manager_class=SlicedKernelManager,
        resources={"metadata": {"path": str(workdir)}},
    ).execute()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m ccscope._nbrun", description="Run a notebook top to bottom and write it as HTML."
    )
    ap.add_argument("notebook", type=Path)
    ap.add_argument("--html", type=Path, required=True, help="where to write the executed notebook as HTML")
    ap.add_argument("--timeout", type=float, default=300, help="seconds a cell may run (default 300)")
    args = ap.parse_args(argv)
    from nbconvert import HTMLExporter

    nb = nbformat.read(args.notebook, as_version=4)
    start = time.monotonic()
    # The notebook's own directory is its working directory, as with nbconvert --execute.
    execute(nb, workdir=args.notebook.resolve().parent, timeout=args.timeout)
    body, _ = HTMLExporter().from_notebook_node(nb)
    args.html.parent.mkdir(parents=True, exist_ok=True)
    args.html.write_text(body, encoding="utf-8")
    took = time.monotonic() - start
    print(f"{args.notebook}: {len(nb.cells)} cells in {took:.1f} s → {args.html}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
