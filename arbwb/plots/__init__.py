"""Plot functions, one module per analysis: data first, keyword-only options, ``ax=None`` (a
multi-panel one ``axes=None``, returning its panels), Agg-safe, demo data marked with ``demo``."""
