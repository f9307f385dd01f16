"""One corpus view over every ``corpus/*/`` manifest of a release root (spec §1.4 merge rule).

The published release is several subsets, each with its own corpus; analyses keyed by
(repo, base_commit) need one view over all of them. Manifests are merged like upstream's
selective corpus: the first row per snapshot wins, except that a later ``ok`` row replaces a
non-``ok`` one. Only ``ok`` rows are usable, so this is "the first usable row wins".
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from arbwb.errors import InputError
from arbwb.io.corpus import MANIFEST_NAME, Corpus, SnapshotEntry, read_manifest


def manifest_paths(path: str | Path) -> list[Path]:
    """The manifests a path stands for: its own, else ``corpus/*/``, else ``*/`` (sorted)."""
    root = Path(path)
    if (root / MANIFEST_NAME).is_file():
        return [root / MANIFEST_NAME]
    found = sorted((root / "corpus").glob(f"*/{MANIFEST_NAME}")) or sorted(
        root.glob(f"*/{MANIFEST_NAME}")
    )
    if not found:
        msg = f"no {MANIFEST_NAME} here, in corpus/*/ or in */; pass a corpus or release root"
        raise InputError(msg, path=root)
    return found


def open_corpora(path: str | Path, *, cache_dir: str | Path | None = None) -> Corpus:
    """A :class:`Corpus` over every manifest :func:`manifest_paths` finds (spec §1.4 merge).

    Manifests are taken in sorted folder order; arbwb-defined: upstream's merged selective
    corpus uses the fixed subset order of spec §1.4, which a generic root does not know. Each
    entry's ``chunks_path`` is resolved against its own corpus folder (made absolute when
    found), so the merged view reads every snapshot from where its manifest points.
    """
    manifests = manifest_paths(path)
    entries: dict[str, SnapshotEntry] = {}
    for manifest in manifests:
        single = Corpus(root=manifest.parent, entries=read_manifest(manifest))
        for key, entry in single.entries.items():
            if key not in entries:
                entries[key] = _resolved(single, key, entry)
    return Corpus(
        root=manifests[0].parent,
        entries=entries,
        cache_dir=None if cache_dir is None else Path(cache_dir),
    )


def _resolved(corpus: Corpus, key: str, entry: SnapshotEntry) -> SnapshotEntry:
    """The entry with its chunk file as an absolute path when it exists (else unchanged)."""
    try:
        found = corpus.chunk_path(key)
    except InputError:
        return entry  # reading it later fails with the located message
    return dataclasses.replace(entry, chunks_path=str(found.resolve()))
