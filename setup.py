"""The C modules (everything else is in pyproject.toml): :mod:`arbwb.native._termcount` (§7.1 term
counts) and :mod:`arbwb.native._jsonlines` (a chunk file's lines, each checked, for strict grep). A C
compiler and the Python headers build them (``pip install -e .``); both are optional: without
them the install warns and arbwb uses slower pure-Python fallbacks (:mod:`arbwb.native.select`).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("arbwb.native._termcount", sources=["arbwb/native/_termcount.c"], optional=True),
        Extension("arbwb.native._jsonlines", sources=["arbwb/native/_jsonlines.c"], optional=True),
    ]
)
