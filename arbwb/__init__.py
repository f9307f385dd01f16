"""arbwb: a Jupyter-first analysis workbench for Agent Retrieval Bench (ARB)."""

__version__ = "0.1.0"
