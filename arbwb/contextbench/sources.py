"""Which files ContextBench scoring sees at ``base_commit``: repositories, demo bytes, then corpus
file lists; with none, paths resolve lexically and only file and line levels are scored."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from arbwb.demo.contextbench import demo_source
from arbwb.io.checkout import CheckoutSource, corpus_source, first_source, repos_source
from arbwb.io.corpus import Corpus

#: The file beside demo rows that marks them as built from the demo repositories.
DEMO_COMMITS = "commits.json"


@dataclass(frozen=True)
class SourceChoice:
    """The checkout source scoring uses and which inputs make it up."""

    source: CheckoutSource | None
    repos: bool
    demo_bytes: bool
    corpus: bool

    @property
    def used(self) -> str:
        """The sources asked, in order, or the lexical fallback, in words."""
        names = ["repositories"] if self.repos else []
        names += ["demo bytes"] if self.demo_bytes else []
        names += ["corpus file lists"] if self.corpus else []
        if not names:
            return "no repositories, demo bytes or corpus: paths resolved lexically"
        return "files from " + ", then ".join(names)


def choose_source(
    *,
    repos_dir: str | Path | None = None,
    demo_dir: str | Path | None = None,
    corpus: Corpus | None = None,
) -> SourceChoice:
    """Repositories under ``repos_dir``, then the demo bytes when ``demo_dir`` holds
    ``commits.json``, then ``corpus``; each left out when not given."""
    demo = demo_dir is not None and (Path(demo_dir) / DEMO_COMMITS).is_file()
    source = first_source(
        repos_source(repos_dir) if repos_dir else None,
        demo_source(demo_dir) if demo and demo_dir is not None else None,
        corpus_source(corpus) if corpus is not None else None,
    )
    return SourceChoice(source, bool(repos_dir), demo, corpus is not None)
