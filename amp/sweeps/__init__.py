"""Sweeps: a grid of deployment questions answered as one table (:func:`amp.sweep`).

The function is :func:`amp.sweep` (:mod:`amp.sweeps.grid`); its result a :class:`SweepTable`
(:mod:`amp.sweeps.table`); :func:`dask_executor` (:mod:`amp.sweeps.cluster`) runs it on a
Dask cluster. This package was the module ``amp/sweep.py``, whose name the function hid.
"""

from amp.sweeps.table import COLUMNS, SweepTable
from amp.sweeps.grid import POINT_ERRORS, sweep
from amp.sweeps.cluster import TRIM_KEY, dask_executor

__all__ = ["sweep", "SweepTable", "dask_executor", "COLUMNS", "POINT_ERRORS", "TRIM_KEY"]
