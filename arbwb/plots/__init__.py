"""Plot functions, one module per analysis: data first, keyword-only options, ``ax=None``, Axes out.

Every function draws with the object-oriented matplotlib API (Agg-safe, no ``plt.show``)
and marks demo data as such when passed ``demo=True``.
"""
