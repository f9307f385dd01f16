"""The embedded demo release: tiny repositories of our own, hand-written samples, a builder.

Everything here is demo data written for arbwb, not ARB data; every figure it
feeds says so. ``arbwb demo build`` regenerates ``data/demo`` byte for byte.
"""
