"""The client's version (kept equal to the engine version it was released with)."""

__version__ = "0.1.0"
