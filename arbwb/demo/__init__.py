"""The embedded demo release (our own data, not ARB's): readers of ``data/demo-src`` and the
builder that regenerates ``data/demo`` byte for byte (``arbwb demo build``)."""
