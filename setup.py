"""The C modules (everything else is in pyproject.toml): :mod:`arbwb._termcount` (§7.1 term
counts) and :mod:`arbwb._jsonlines` (a chunk file's lines, each checked, for strict grep). A C
compiler and the Python headers build them (``pip install -e .``); both are optional: without
them the install warns and arbwb uses slower pure-Python fallbacks (:mod:`arbwb._native_select`).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("arbwb._termcount", sources=["arbwb/_termcount.c"], optional=True),
        Extension("arbwb._jsonlines", sources=["arbwb/_jsonlines.c"], optional=True),
    ]
)
