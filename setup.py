"""The one C module, :mod:`arbwb._termcount` (§7.1 term counts); everything else is in
pyproject.toml. A C compiler and the Python headers build it (``pip install -e .``)."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("arbwb._termcount", sources=["arbwb/_termcount.c"])])
