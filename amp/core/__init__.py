"""Core layer: errors, input validation, the result type, floating-point safety, tails and
saddle-point estimates. Imports numpy/scipy only and nothing else of :mod:`amp`."""
