"""Plot functions, one module per analysis: data first, keyword-only options, ``ax=None``, Axes out;
a multi-panel function takes ``axes=None`` (one Axes per panel) and returns its panels as a list
(``panels[0].figure`` is the figure).

Every function draws with the object-oriented matplotlib API (Agg-safe, no ``plt.show``)
and marks demo data as such when passed ``demo=True``.
"""
