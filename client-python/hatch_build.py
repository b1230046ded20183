"""Hatch build hook: compile the ccscope Go server into the Python package.

`pip install .` and `pip install -e .` both run this hook. It runs
``go build -o client-python/ccscope/_bin/ccscope ./server/cmd/ccscope`` so
that ``ccscope.connect()`` can start a private local server with nothing else
installed. The binary is specific to the build machine's platform, so the
wheel is tagged ``py3-none-<platform>`` rather than ``py3-none-any``.

Set ``CCSCOPE_SKIP_GO_BUILD=1`` to build a pure-Python wheel of the client
alone, without the server (it then needs ``connect(url)`` to a running server,
``$CCSCOPE_BIN`` or ``ccscope`` on PATH).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

_BIN_REL = Path("client-python") / "ccscope" / "_bin" / ("ccscope.exe" if os.name == "nt" else "ccscope")


def _platform_tag() -> str:
    """The wheel platform tag of this interpreter's platform (PEP 425)."""
    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


class CustomBuildHook(BuildHookInterface):
    """Builds the Go binary before the wheel (or editable wheel) is assembled."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        root = Path(self.root)
        out = root / _BIN_REL
        if os.environ.get("CCSCOPE_SKIP_GO_BUILD") == "1":
            return  # a pure-Python wheel of the client alone
        self._go_build(root, out)
        build_data["pure_python"] = False
        build_data["tag"] = f"py3-none-{_platform_tag()}"
        # _bin/ is git-ignored, and hatchling honours .gitignore; include the
        # binary explicitly. An editable install finds it in the source tree.
        if version != "editable":
            build_data["force_include"][str(out)] = "ccscope/_bin/" + out.name

    def _go_build(self, root: Path, out: Path) -> None:
        go = shutil.which("go")
        if go is None:
            raise RuntimeError(
                "ccscope: building the Python package compiles the Go server, but `go` was not "
                "found on PATH. Install Go (see go.mod for the version), or set "
                "CCSCOPE_SKIP_GO_BUILD=1 to package the client alone and connect to a running "
                "server with ccscope.connect(url)."
            )
        if not (root / "server" / "cmd" / "ccscope").is_dir():
            raise RuntimeError(f"ccscope: {root / 'server/cmd/ccscope'} is missing; cannot build the server binary")
        out.parent.mkdir(parents=True, exist_ok=True)
        # -s -w drop the symbol table and DWARF (a third of the size); stack
        # traces keep their function names and lines.
        cmd = [go, "build", "-trimpath", "-ldflags=-s -w", "-o", str(out), "./server/cmd/ccscope"]
        self.app.display_info(f"ccscope: {' '.join(cmd)}")
        proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"ccscope: `{' '.join(cmd)}` failed with exit code {proc.returncode}:\n{proc.stderr}")
        self.app.display_info(f"ccscope: built {out}")
