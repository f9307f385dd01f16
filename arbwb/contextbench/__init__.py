"""ContextBench scoring (contextbench-spec), one module per step of the upstream evaluator: inputs,
resolution, intervals, bytemap, symbols -> instance, editloc -> score -> aggregate; ranked (§13),
sources, process (§9) and compare (beside ARB)."""
