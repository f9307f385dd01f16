"""ContextBench scoring (contextbench-spec), one module per step of the upstream evaluator.

``inputs`` (gold, predictions) -> ``resolution`` (§2.2 paths), ``intervals`` (§0),
``bytemap`` (§4 bytes), ``symbols`` (§4 blocks) -> ``instance`` (§5, §6 one prediction),
``editloc`` (§7) -> ``score`` (runs as frames) -> ``aggregate`` (§8); ``ranked`` (§13 ranked
lists), ``sources`` (which files scoring sees), ``process`` (§9), ``compare`` (beside ARB).
"""
