"""ContextBench scoring (contextbench-spec): rows, predictions, evaluator."""
