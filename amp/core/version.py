"""The package version (also ``amp.__version__`` and ``python -m amp --version``)."""

__version__ = "0.2.0"
