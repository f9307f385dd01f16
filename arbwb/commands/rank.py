"""``arbwb rank``: run a baseline retriever over an ARB release and write details + summary."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arbwb.commands import COMMANDS, add_corpus_flags, open_corpus_for
from arbwb.errors import InputError
from arbwb.io.pathclass import CANDIDATE_FILTERS, CandidateFilter
from arbwb.paths import check_output_path

if TYPE_CHECKING:
    from arbwb.retrievers.registry import MethodOptions


def add_parser(subparsers: Any) -> None:
    """Register ``rank``."""
    parser = subparsers.add_parser("rank", help=COMMANDS["rank"])
    parser.add_argument(
        "--method",
        default=None,
        help="built-in name, package.module:factory, or an arbwb.retrievers entry point (--list)",
    )
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="plug-in factory option (repeatable; JSON values parsed, else strings)",
    )
    parser.add_argument("--list", action="store_true", help="list every method and its source")
    parser.add_argument("--data", default=None, help="release root (benchmark/R, corpus/R)")
    parser.add_argument("--release", default=None, help="release id when the root has several")
    parser.add_argument("--task", action="append", default=None, help="only this task (repeatable)")
    parser.add_argument(
        "--candidate-filter", default="all_files", choices=CANDIDATE_FILTERS, help="spec §6.2"
    )
    parser.add_argument("--out", default=None, help="details JSONL; summary goes beside it")
    parser.add_argument("--resume", action="store_true", help="continue an interrupted run")
    add_corpus_flags(parser)
    parser.add_argument("--model", default=None, help="dense: SentenceTransformers path or name")
    parser.add_argument(
        "--ray",
        default=None,
        metavar="ADDRESS|auto",
        help="dense: encode the passages on a Ray cluster first (needs the arbwb[ray] extra)",
    )
    parser.add_argument(
        "--cache-dir",
        default=None,
        help="dense: embedding cache (default <cache>/embeddings); repomap: index cache folder",
    )
    for name, default in (("query", 0.65), ("pagerank", 0.25), ("affinity", 0.1)):
        parser.add_argument(
            f"--{name}-weight", type=float, default=None, help=f"repomap (default {default})"
        )
    parser.add_argument("--runs", nargs="+", default=None, help="rrf: stored runs to fuse")
    parser.add_argument(
        "--weights", default=None, help="rrf: comma-separated run weights (finite, >= 0, one > 0)"
    )
    parser.set_defaults(
        func=run,
        interrupt_hint="rerun the same command with --resume to continue from the checkpoint",
    )


def _weights(text: str | None, n_runs: int) -> list[float] | None:
    """``--weights 1,0.5``: one finite, non-negative number per run (fusion.check_weights)."""
    if text is None:
        return None
    from arbwb.retrievers.fusion import check_weights

    try:
        weights = [float(w) for w in text.split(",")]
    except ValueError:
        raise InputError(f"weights must be numbers, got {text!r}", field="--weights") from None
    return check_weights(weights, n_runs, field="--weights")


def _repomap_options(args: argparse.Namespace) -> MethodOptions:
    """RepoMap weights (unset ones keep their defaults) and its index cache folder."""
    from arbwb.cache import kind_dir
    from arbwb.retrievers import repomap
    from arbwb.retrievers.registry import MethodOptions

    given = {name: getattr(args, f"{name}_weight") for name in ("query", "pagerank", "affinity")}
    weights = repomap.Weights(**{name: w for name, w in given.items() if w is not None})
    if args.no_cache:
        return MethodOptions(weights=weights)
    cache = Path(args.cache_dir) if args.cache_dir else kind_dir("repomap")
    return MethodOptions(weights=weights, index_cache_dir=cache)


def _data(args: argparse.Namespace) -> Path:
    """The release root; only rank fusion of ARB details runs can do without one."""
    if args.data is None:
        msg = "is required (rrf of ARB details runs alone takes gold from their rows)"
        raise InputError(msg, field="--data")
    return Path(args.data)


def _list_methods() -> int:
    """Print every method name with where it comes from (built-in or its entry point's dist)."""
    from arbwb.retrievers.plugin import available

    for spec in available():
        print(f"{spec.name}\t{spec.source}")
    print("package.module:factory\tyour own retriever (see README, 'Your own retriever')")
    return 0


def run(args: argparse.Namespace) -> int:
    """Validate everything that can fail (method, model, inputs) before ranking anything."""
    from arbwb.cache import kind_dir

    if args.list:
        return _list_methods()
    for flag, value in (("--method", args.method), ("--out", args.out)):
        if value is None:
            raise InputError("is required (or pass --list)", field=flag)
    out = Path(args.out)
    check_output_path(out)
    candidate_filter: CandidateFilter = args.candidate_filter
    for flag, value in (("--model", args.model), ("--ray", args.ray)):
        if args.method != "dense" and value:
            raise InputError("only applies to --method dense", field=flag)
    if args.ray is not None:
        from arbwb.retrievers.dense_ray import import_ray

        if args.no_cache:
            raise InputError("fills the embedding cache; drop --no-cache", field="--ray")
        import_ray()  # the install hint before anything is read
    if args.method not in ("dense", "repomap") and args.cache_dir:
        raise InputError("only applies to --method dense or repomap", field="--cache-dir")
    weights = (args.query_weight, args.pagerank_weight, args.affinity_weight)
    if args.method != "repomap" and any(w is not None for w in weights):
        raise InputError("only applies to --method repomap", field="--*-weight")
    from arbwb.io.samples import release_samples, select_tasks

    if args.method == "rrf":
        if args.option:
            raise InputError("only applies to plug-in retrievers", field="--option")
        if not args.runs:
            raise InputError("rrf needs the runs to fuse", field="--runs")
        from arbwb.io.rankings import detect_format
        from arbwb.retrievers.fusion import run_fusion

        fusion_weights = _weights(args.weights, len(args.runs))  # before any file is read
        runs = [Path(p) for p in args.runs]
        # gold from the details rows when every run has them: samples (queries) not needed
        with_gold = all(detect_format(p) == "details" for p in runs if p.is_file())
        sample_set = None if with_gold else release_samples(_data(args), args.release)
        summary = run_fusion(
            runs,
            None if sample_set is None else select_tasks(sample_set, args.task),
            out,
            weights=fusion_weights,
            tasks=args.task,
        )
    else:
        if args.runs or args.weights:
            raise InputError("only applies to --method rrf", field="--runs/--weights")
        from arbwb.retrievers.plugin import method_for, parse_options
        from arbwb.retrievers.registry import MethodOptions, get_method
        from arbwb.retrievers.runner import run_method

        cached = not args.no_cache
        dense = args.method == "dense"
        terms = args.method in ("lexical", "bm25", "bm25-arb")
        options = MethodOptions(
            model=args.model,
            cache_dir=args.cache_dir or (kind_dir("embeddings") if cached and dense else None),
            stream_terms=True,
            term_cache_dir=kind_dir("terms") if cached and terms else None,
            checked_dir=kind_dir("checked") if cached and args.method.startswith("grep") else None,
        )
        if args.method == "repomap":
            options = _repomap_options(args)
        if args.ray is not None and args.option:
            raise InputError("only applies to plug-in retrievers", field="--option")
        method = None  # --ray: made once the release is read, its passages encoded on Ray
        if args.ray is None:
            method = method_for(
                args.method, parse_options(args.option), lambda: get_method(args.method, options)
            )
        data = _data(args)
        sample_set = select_tasks(release_samples(data, args.release), args.task)
        corpus = open_corpus_for(args, data, args.release)
        if method is None:
            from arbwb.retrievers import dense_ray

            method = dense_ray.method(
                args.ray,
                corpus,
                sample_set,
                candidate_filter,
                model=args.model,
                cache_dir=options.cache_dir,
            )
        summary = run_method(
            method,
            sample_set,
            corpus,
            out,
            candidate_filter=candidate_filter,
            tasks=args.task,
            resume=args.resume,
        )
    overall = summary["metrics"].get("overall", {})
    print(
        f"{args.method}: {summary['evaluated']} rows, skipped {summary['skipped']}, "
        f"errors {summary.get('errors', {})}; R@20 {overall.get('Recall@20', 0.0):.4f} "
        f"MRR {overall.get('MRR', 0.0):.4f} -> {out}",
        file=sys.stderr,
    )
    return 0
