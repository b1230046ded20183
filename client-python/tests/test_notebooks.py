"""The notebooks run top to bottom, each within its time budget.

Select them with `pytest -m notebook`; `make test` runs them with the rest.
Each runs in a fresh kernel of this interpreter, which inherits CCSCOPE_BIN
and so starts its own private server, and CCSCOPE_NOTEBOOK_REDUCED=1: the
study notebooks (05-07) then run their reduced sweeps (fewer points, shorter
runs, the same assertions). The runs start with the session, two at a time,
beside the other tests (conftest.py's notebook_runs); these tests wait for
them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import NOTEBOOK_BUDGET_S as BUDGET_S

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("[0-9][0-9]-*.ipynb"))


def test_there_are_notebooks():
    names = [p.name for p in NOTEBOOKS]
    for want in ("01-quickstart.ipynb", "02-loss-response.ipynb", "03-bufferbloat-lab.ipynb", "04-sim-vs-kernel.ipynb", "05-leo.ipynb", "06-rebbr.ipynb", "07-calibration.ipynb"):
        assert want in names, f"notebooks/ has {names}, missing {want}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_outputs_are_stripped(path):
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, f"{path.name} cell {i} has outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_first_cell_prints_versions_reads_the_url_and_seeds(path):
    nb = nbformat.read(path, as_version=4)
    first = next(c for c in nb.cells if c.cell_type == "code").source
    for want in ("CCSCOPE_URL", "SEED =", "__version__", "print("):
        assert want in first, f"{path.name}: first code cell lacks {want!r}"


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, notebook_runs):
    run = notebook_runs[path]
    if isinstance(run, str):
        pytest.skip(run)
    nb, took = run.result()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, f"{path.name}: {errors[0].ename}: {errors[0].evalue}"
    assert took < BUDGET_S, f"{path.name} took {took:.1f} s, budget {BUDGET_S:g} s"
