"""Text-level RepoMap work (arb-repomap.md §3.4, §4.3.1): content tokens and import specs,
memoised per text across a run's snapshots (:class:`TextMemo`)."""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import polars as pl

from arbwb.retrievers import repomap_paths as rp
from arbwb.retrievers.bytetokens import distinct_text_tokens

#: Python's ``str.strip()`` whitespace (Rust's differs on U+001C-U+001F), for Polars.
PY_WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
CONTENT_PREFIX = 20000
#: Texts :func:`import_specs_frame` leaves to Python: a ``str.splitlines`` line boundary other
#: than ``\n``, or U+001F (whitespace to Python's ``\s`` and ``str.strip``, not to Rust's ``\s``).
_PYTHON_ONLY = "[\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\u2028\u2029]"


def content_tokens_of(texts: list[str]) -> pl.Series:
    """Content tokens of each text (§3.4): distinct tokens of its first 20,000 characters."""
    prefixes = [t[:CONTENT_PREFIX] for t in texts]  # code points, as the spec counts
    return distinct_text_tokens(prefixes)


def import_specs_frame(texts: pl.DataFrame) -> pl.DataFrame:
    """(i, specs) of (i, text) rows with only ``\\n`` breaks and no U+001F: the steps of
    :func:`rp.import_specs` in Polars (rows without specs absent)."""
    line = pl.col("line")
    groups = pl.col("m").str.extract_groups(rp.IMPORT_RE.pattern)
    return (
        texts.select("i", pl.col("text").str.split("\n").list.head(rp.MAX_SCAN_LINES).alias("line"))
        .explode("line")
        .filter(line.str.contains(rp.IMPORT_WORDS))
        .with_columns(line.str.strip_chars(PY_WHITESPACE))
        .filter(
            ~(line.str.starts_with("//") | line.str.starts_with("# ") | line.str.starts_with("*"))
        )
        .select("i", line.str.extract_all(rp.IMPORT_RE.pattern).alias("m"))
        .explode("m")
        .drop_nulls("m")
        .select("i", pl.coalesce(groups.struct[k] for k in range(7)).alias("spec"))
        .group_by("i", maintain_order=True)
        .agg(pl.col("spec").head(rp.MAX_SPECS))
    )


#: Texts not memoised yet and their distinct content tokens (:meth:`TextMemo.tokenise`).
Tokenised = tuple[list[str], pl.Series]
#: What :meth:`TextMemo.path_facts` knows of a path: kind, path-index keys, source-test keys.
PathFacts = tuple[int, tuple[str, ...], tuple[str, ...]]


@dataclass
class TextMemo:
    """Text-level results reused by a run's next snapshots: content-token ids (into ``words``)
    and import specs per text, restarted past ``limit`` texts; tuples stay out of the GC's view."""

    words: list[str] = field(default_factory=list)
    content: dict[str, npt.NDArray[np.int64]] = field(default_factory=dict)
    specs: dict[str, list[str]] = field(default_factory=dict)
    facts: dict[str, PathFacts] = field(default_factory=dict)
    spec_keys: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    table: pl.DataFrame = field(
        default_factory=lambda: pl.DataFrame(schema={"tok": pl.String, "id": pl.Int64})
    )
    limit: int = 20000

    def path_facts(self, path: str) -> PathFacts:
        """Kind, path-index keys and source-test keys of a node path (§3.1, §4.2, §4.5)."""
        found = self.facts.get(path)
        if found is None:
            if len(self.facts) > 4 * self.limit:
                self.facts.clear()
            found = self.facts[path] = (
                rp.node_kind(path),
                tuple(rp.path_index_keys(path)),
                tuple(rp.source_test_keys(path)),
            )
        return found

    def series_ids(self, tokens: pl.Series) -> npt.NDArray[np.int64]:
        """Run-wide ids of a token column (one join), numbering new ones by first appearance."""
        frame = tokens.alias("tok").to_frame()
        found = frame.join(self.table, on="tok", how="left", maintain_order="left")["id"]
        ids = found.fill_null(-1).to_numpy().astype(np.int64)
        new_rows = found.is_null()
        if new_rows.any():
            new = frame.filter(new_rows)
            start = len(self.words)
            added = new.unique(maintain_order=True).with_row_index("id", offset=start)
            added = added.select("tok", pl.col("id").cast(pl.Int64))
            self.words.extend(added["tok"].to_list())
            self.table = pl.concat([self.table, added], rechunk=False)
            numbered = new.join(added, on="tok", how="left", maintain_order="left")["id"]
            ids[new_rows.to_numpy()] = numbered.to_numpy()
        return ids

    def trim(self) -> None:
        """Restart the text tables once they hold more than ``limit`` texts."""
        if len(self.content) > self.limit:
            self.content.clear()
            self.specs.clear()
            self.spec_keys.clear()

    def tokenise(self, texts: list[str], known: Container[str] = ()) -> Tokenised:
        """The texts neither memoised nor ``known`` and their distinct content tokens (reads
        the memo only, so it may run on another thread)."""
        content = self.content
        fresh = [t for t in dict.fromkeys(texts) if t not in content and t not in known]
        return fresh, content_tokens_of(fresh)

    def content_tokens(
        self, texts: list[str], tokenised: Tokenised | None = None, then: pl.Series | None = None
    ) -> tuple[list[npt.NDArray[np.int64]], npt.NDArray[np.int64]]:
        """Distinct content-token ids of each text (§3.4), and the ids of the tokens ``then``
        (numbered after them, one join); ``tokenised``: :meth:`tokenise` of ``texts`` if done."""
        if tokenised is None:
            self.trim()
            tokenised = self.tokenise(texts)
        fresh, column = tokenised
        then = pl.Series("tok", [], dtype=pl.String) if then is None else then
        flat = column.explode().drop_nulls() if fresh else pl.Series("tok", [], dtype=pl.String)
        ids = self.series_ids(pl.concat([flat.alias("tok"), then.alias("tok")]))
        if fresh:
            ends = np.cumsum(column.list.len().to_numpy().astype(np.int64))
            for text, found in zip(fresh, np.split(ids[: len(flat)], ends[:-1]), strict=True):
                self.content[text] = found
        content = self.content
        missing = [t for t in texts if t not in content]  # left out as known, trimmed since
        if missing:
            self.content_tokens(missing, self.tokenise(missing))
        return [content[t] for t in texts], ids[len(flat) :]

    def import_specs(self, texts: list[str]) -> list[list[str]]:
        """The import specs of each text (§4.3.1), memoised; fresh texts scanned in one batch."""
        fresh = [t for t in dict.fromkeys(texts) if t and t not in self.specs]
        if fresh:
            self.specs.update(zip(fresh, scan_import_specs(fresh), strict=True))
        return [self.specs[t] if t else [] for t in texts]


def scan_import_specs(texts: list[str]) -> list[list[str]]:
    """The import specs of each text (§4.3.1): in Polars when its only break is ``\\n`` and
    it has no U+001F (Rust's ``\\s`` = Python's there), else :func:`rp.import_specs`."""
    if not texts:
        return []
    frame = pl.DataFrame({"text": texts}, schema={"text": pl.String})
    other = frame["text"].str.contains(_PYTHON_ONLY).to_list()
    specs = import_specs_frame(frame.with_row_index("i").filter(~pl.Series(other)))
    found = dict(specs.iter_rows())
    return [
        rp.import_specs(text) if python else found.get(i, [])
        for i, (text, python) in enumerate(zip(texts, other, strict=True))
    ]
