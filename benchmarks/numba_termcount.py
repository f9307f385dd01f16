"""A numba kernel for the §7.1 term counter: a drop-in for :func:`arbwb.native._termcount.count`
(the same six results byte for byte), measured against the C module by
``bench_numba_counter.py`` (issue 24: "C, or a numba kernel if it matches within 1.5x").

Benchmark-side only: arbwb never imports it, and numba is no dependency of arbwb. Importing it
without numba raises ImportError. It follows ``arbwb/native/_termcount.c``: a token is a
maximal run of ASCII letters and digits, also cut between a lower-case and a following
upper-case letter, lower-cased (every byte of a non-ASCII character is >= 0x80, so it only
separates tokens); tokens are numbered by first appearance in the batch through an
open-addressing hash table, and each text's distinct tokens are counted in order of first
appearance in it. The C module finds a text's token bounds 64 bytes at a time with SIMD; this
kernel finds them byte by byte, without a branch on the bytes (tables of byte classes and of
bounds), then hashes and looks up each token as the C module does (an 8-byte head, slots tagged
with the hash's high bits; ids go by first appearance, whatever the hash).
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
import numpy.typing as npt

from arbwb.native import fallback

#: Byte classes (``CLASSES[byte]``): no token's, digit, lower-case, upper-case ASCII letter.
NONE, DIGIT, LOWER, UPPER = 0, 1, 2, 3
CLASSES = np.zeros(256, dtype=np.int64)
CLASSES[ord("0") : ord("9") + 1] = DIGIT
CLASSES[ord("a") : ord("z") + 1] = LOWER
CLASSES[ord("A") : ord("Z") + 1] = UPPER
#: Whether a token starts / one ends at a byte, by ``4 * class of the byte before + its class``
#: (a camel cut, lower-case then upper-case, does both).
STARTS = np.zeros(16, dtype=np.int64)
STOPS = np.zeros(16, dtype=np.int64)
for _before in range(4):
    for _kind in range(4):
        _camel = _before == LOWER and _kind == UPPER
        STARTS[4 * _before + _kind] = _kind != NONE and (_before == NONE or _camel)
        STOPS[4 * _before + _kind] = _before != NONE and (_kind == NONE or _camel)

#: What the kernel keeps of a distinct token: the C module's ``Term``.
TERM = np.dtype(
    [
        ("hash", np.int64),
        ("head", np.int64),  # its first 8 bytes, lower-cased, zero-padded (little-endian)
        ("end", np.int64),  # the end of its bytes in the vocabulary (start: the previous end)
        ("text", np.int32),  # 1 + the last text it was counted in (0: none yet)
        ("entry", np.int32),  # its entry (index into cols and freq) in that text
    ],
    align=True,
)
#: Per hash-table slot: the hash's high 32 bits, then id + 1 (0: an empty slot).
TAG = np.int64(-(1 << 32))
ID_BITS = np.int64(0xFFFFFFFF)
GOLDEN = np.int64(-0x61C8864680B583EB)  # 0x9e3779b97f4a7c15 as int64 (products wrap)
LOWERING = np.int64(0x2020202020202020)  # | lower-cases a letter; digits have the bit
#: Array indices are cast to this: numba adds no negative-index wrap-around for an unsigned
#: index (measured: half the byte loop's time).
U = np.uint64


@numba.njit(cache=True, inline="always")
def _mix(hash_: np.int64, word: np.int64) -> np.int64:
    """One 8-byte word folded into a hash (the C module's mix, with an arithmetic shift)."""
    hash_ = (hash_ ^ word) * GOLDEN
    return hash_ ^ (hash_ >> 29)


@numba.njit(cache=True, inline="always")
def _word(data: npt.NDArray[np.uint8], start: int, n: int) -> np.int64:
    """The ``n`` <= 8 bytes of ``data`` from ``start``, lower-cased, as a little-endian word
    padded with zero bytes (eight bytes read at once where the data has them)."""
    word = np.int64(0)
    if start + 8 <= data.shape[0]:
        for k in range(8):
            word |= np.int64(data[U(start + k)]) << (8 * k)
    else:
        for k in range(n):
            word |= np.int64(data[U(start + k)]) << (8 * k)
    if n < 8:
        return (word | LOWERING) & ((np.int64(1) << (8 * n)) - 1)
    return word | LOWERING


@numba.njit(cache=True)
def _slots(terms: npt.NDArray[np.void], n_terms: int, size: int) -> npt.NDArray[np.int64]:
    """A hash table of ``size`` slots (a power of two) holding the first ``n_terms`` tokens."""
    slots = np.zeros(size, np.int64)
    for term in range(n_terms):
        s = terms[term].hash & (size - 1)
        while slots[s]:
            s = (s + 1) & (size - 1)
        slots[s] = (terms[term].hash & TAG) | (term + 1)
    return slots


@numba.njit(cache=True)
def _count(datas, offsets):  # type: ignore[no-untyped-def]  # (numba infers the types)
    """The counts of the texts ``datas[c][offsets[c][i]:offsets[c][i + 1]]``, row i being
    column 0's text i, then column 1's, ... (tuples of uint8 and of int64 arrays): nnz, cols,
    freq, tokens, vocab_offsets and vocab_bytes as arrays, as ``count`` returns them."""
    n_texts = offsets[0].shape[0] - 1
    size = 0  # the batch's bytes: at least its tokens, distinct tokens and their bytes
    longest = 0
    for col in range(len(datas)):
        for row in range(n_texts):
            length = offsets[col][row + 1] - offsets[col][row]
            size += length
            longest = max(longest, length)
    nnz = np.zeros(n_texts, np.int64)
    tokens = np.zeros(n_texts, np.int64)
    cols = np.empty(size, np.int32)
    freq = np.empty(size, np.int32)
    terms = np.empty(size, TERM)  # by token id
    vocab = np.empty(size, np.uint8)  # the distinct tokens' lower-cased bytes, in id order
    slots = np.zeros(4096, np.int64)  # the hash table
    starts = np.empty(longest + 1, np.int64)  # one text's tokens: where each starts
    stops = np.empty(longest + 1, np.int64)  # and ends (exclusive)
    n_terms = n_entries = vocab_end = 0
    for row in range(n_texts):
        first_entry = n_entries
        for col in range(len(datas)):
            data = datas[col]
            begin, stop = offsets[col][row], offsets[col][row + 1]
            # the text's tokens, without a branch on its bytes: every byte's position is
            # written, and kept (the count moved on) where a token starts or ends there
            n_tokens = n_stops = 0
            before = NONE
            for i in range(begin, stop):
                kind = CLASSES[data[U(i)]]
                starts[U(n_tokens)] = i
                n_tokens += STARTS[U(4 * before + kind)]
                stops[U(n_stops)] = i
                n_stops += STOPS[U(4 * before + kind)]
                before = kind
            stops[U(n_stops)] = stop  # (the last token's end, if it runs to the text's end)
            tokens[row] += n_tokens
            for k in range(n_tokens):
                start = starts[U(k)]
                length = stops[U(k)] - start
                head = _word(data, start, min(length, 8))
                hash_ = _mix(np.int64(0), head)
                for j in range(8, length, 8):
                    hash_ = _mix(hash_, _word(data, start + j, min(length - j, 8)))
                # its id: the slot holding it, or the empty slot it takes (a new token)
                mask = slots.shape[0] - 1
                s = hash_ & mask
                term = -1
                while slots[U(s)] and term < 0:
                    slot = slots[U(s)]
                    known = (slot & ID_BITS) - 1
                    if (slot & TAG) == (hash_ & TAG) and terms[U(known)].head == head:
                        known_start = terms[U(known - 1)].end if known else 0
                        if terms[U(known)].end - known_start == length:
                            term = known
                            for j in range(8, length):
                                if vocab[U(known_start + j)] != data[U(start + j)] | 0x20:
                                    term = -1
                                    break
                    s = (s + 1) & mask
                if term < 0:
                    term = n_terms
                    for j in range(length):
                        vocab[U(vocab_end + j)] = data[U(start + j)] | 0x20
                    vocab_end += length
                    terms[U(term)].hash = hash_
                    terms[U(term)].head = head
                    terms[U(term)].end = vocab_end
                    terms[U(term)].text = 0
                    slots[U(s)] = (hash_ & TAG) | (term + 1)
                    n_terms += 1
                    if 2 * n_terms > slots.shape[0]:
                        slots = _slots(terms, n_terms, 2 * slots.shape[0])
                # counted: once more in this text, or its first time in it
                found = terms[U(term)]
                if found.text == row + 1:
                    freq[U(found.entry)] += 1
                else:
                    found.text = row + 1
                    found.entry = n_entries
                    cols[U(n_entries)] = term
                    freq[U(n_entries)] = 1
                    n_entries += 1
        nnz[row] = n_entries - first_entry
    vocab_offsets = np.zeros(n_terms + 1, np.int64)
    vocab_offsets[1:] = terms["end"][:n_terms]
    return nnz, cols[:n_entries], freq[:n_entries], tokens, vocab_offsets, vocab[:vocab_end]


def _readonly(array: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """A read-only view (so that every column has one numba type: the tuples stay uniform)."""
    view = array.view()
    view.setflags(write=False)
    return view


def count(*columns: Any) -> tuple[bytes, bytes, bytes, bytes, bytes, bytes]:
    """(nnz, cols, freq, tokens, vocab_offsets, vocab_bytes) of 1 to 8 (data, offsets) column
    pairs, as :func:`arbwb.native._termcount.count` gives them (its errors too)."""
    if not 2 <= len(columns) <= 2 * fallback.MAX_COLUMNS or len(columns) % 2:
        msg = "count(data, offsets, ...): 1 to 8 pairs"
        raise TypeError(msg)
    datas, offsets, n_texts = [], [], -1
    for col in range(len(columns) // 2):
        data = fallback._raw(columns[2 * col])
        found = fallback._offsets(data.size, columns[2 * col + 1], col, n_texts)
        n_texts = found.size - 1
        datas.append(_readonly(data))
        offsets.append(_readonly(found))
    results = _count(tuple(datas), tuple(offsets))
    return tuple(result.tobytes() for result in results)
