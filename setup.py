"""The C modules (everything else is in pyproject.toml): :mod:`arbwb._termcount` (§7.1 term
counts) and :mod:`arbwb._jsonlines` (a chunk file's lines, each checked, for strict grep). A C
compiler and the Python headers build them (``pip install -e .``)."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("arbwb._termcount", sources=["arbwb/_termcount.c"]),
        Extension("arbwb._jsonlines", sources=["arbwb/_jsonlines.c"]),
    ]
)
