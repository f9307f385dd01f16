"""Grep query patterns, exactly as upstream's ``eval-grep`` extracts them (arb-grep.md §3-§4):
the contract's Python ``re`` expressions verbatim (a query is small)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from arbwb.tokenize import split_identifiers

PatternMode = Literal["strict", "expanded"]
PATTERN_MODES: tuple[PatternMode, ...] = ("strict", "expanded")

_BARE_EXT = (
    "bash|c|cc|cpp|cs|cxx|fish|go|h|hpp|java|js|jsx|kt|kts|m|mm|php|proto|py|pyi|rb|rs|scala|sh"
    "|swift|ts|tsx|zsh"
)
CODE_SPAN_RE = re.compile(r"`([^`\n]{2,200})`")
FILE_PATH_RE = re.compile(
    rf"(?:[A-Za-z0-9_.@+-]+/)+[A-Za-z0-9_.@+-]+\.(?:{_BARE_EXT}|json|ya?ml|toml|md|rst|txt)\b"
)
BARE_FILE_RE = re.compile(rf"\b[A-Za-z0-9_.@+-]+\.(?:{_BARE_EXT})\b")
FLAG_RE = re.compile(r"(?<!\w)--[A-Za-z0-9][A-Za-z0-9_-]{1,80}\b")
IDENTIFIER_RE = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*(?:(?:::|\.|/)[A-Za-z_][A-Za-z0-9_]*)*\b")
ERROR_SUFFIX_RE = re.compile(r"(?:Error|Exception|Failure|Warning|Panic|Timeout|Traceback)$")

#: The 73 stop terms (compared lower-cased, as whole terms).
_STOP_WORDS = """a an and are arg args base body bug call case change changed changed_file class
code comment config context could data default does error expected fail failed failure
failure_excerpt file files fix from function given_file gold has have issue kind line log message
method must name not path pr pr_body pr_title query raw_signal review review_comment run should
signal source stack test tests text that the this title trace type update value when with"""
STOP_TERMS = frozenset(_STOP_WORDS.split())
#: Characters removed from both ends of a term after whitespace (§4.2).
TRIM = "'\"\u201c\u201d\u2018\u2019.,;:()[]{}"
WEIGHT_SPAN, WEIGHT_FILE, WEIGHT_FLAG, WEIGHT_IDENTIFIER, WEIGHT_TOKEN = 12.0, 18.0, 10.0, 7.0, 1.0


@dataclass(frozen=True)
class Pattern:
    """One grep pattern: term (original casing), kind and weight (a details ``patterns`` row)."""

    term: str
    kind: str
    weight: float


def clean(s: str) -> str:
    """Strip whitespace, then the trim set; uncovered whitespace stays (§4.2)."""
    return s.strip().strip(TRIM)


def usable(t: str) -> bool:
    """At least 2 characters, not a stop term, and some alphanumeric character (§4.2)."""
    return len(t) >= 2 and t.lower() not in STOP_TERMS and any(c.isalnum() for c in t)


def span_kind(s: str) -> str:
    """Kind of a code span, decided on the uncleaned span (§4.5)."""
    if FILE_PATH_RE.fullmatch(s) or BARE_FILE_RE.fullmatch(s):
        return "file_path"
    if s.startswith("--"):
        return "flag"
    return "error" if ERROR_SUFFIX_RE.search(s) else "code"


def high_signal(m: str) -> bool:
    """Whether an identifier match becomes a weight-7 pattern (§4.5, first rule decides)."""
    if not usable(m):
        return False
    if any(mark in m for mark in ("/", ".", "::", "_")) or any(c.isdigit() for c in m):
        return True
    if ERROR_SUFFIX_RE.search(m) or (len(m) >= 3 and m.isupper()):
        return True
    return any(c.isupper() for c in m[1:]) and any(c.islower() for c in m)


def _offer(table: dict[str, Pattern], s: str, kind: str, weight: float) -> None:
    """Record a candidate: new lower-cased term, or strictly higher weight replaces (§4.3)."""
    term = clean(s)
    if not usable(term):
        return
    key = term.lower()
    current = table.get(key)
    if current is None or current.weight < weight:
        table[key] = Pattern(term, kind, weight)


def unescape_newlines(query_text: str) -> str:
    """N: every two-character ``\\n`` of T becomes a newline; nothing else is undone (§3)."""
    return query_text.replace("\\n", "\n")


def extract_patterns(query_text: str, mode: PatternMode = "strict") -> list[Pattern]:
    """The pattern list of evaluation text T (§4.4 offers, §4.6 order)."""
    if mode not in PATTERN_MODES:
        msg = f"grep pattern mode must be 'strict' or 'expanded', got {mode!r}"
        raise ValueError(msg)
    n = unescape_newlines(query_text)
    table: dict[str, Pattern] = {}
    for match in CODE_SPAN_RE.finditer(n):
        span = match.group(1).strip()
        _offer(table, span, span_kind(span), WEIGHT_SPAN)
    for regex in (FILE_PATH_RE, BARE_FILE_RE):
        for match in regex.finditer(n):
            _offer(table, match.group(0), "file_path", WEIGHT_FILE)
    for match in FLAG_RE.finditer(n):
        _offer(table, match.group(0), "flag", WEIGHT_FLAG)
    for match in IDENTIFIER_RE.finditer(n):
        m = match.group(0)
        if high_signal(m):
            kind = "error" if ERROR_SUFFIX_RE.search(m) else "identifier"
            _offer(table, m, kind, WEIGHT_IDENTIFIER)
    if mode == "expanded":
        for token in split_identifiers(n):
            if len(token) >= 4 and token not in STOP_TERMS:
                _offer(table, token, "token", WEIGHT_TOKEN)
    return sorted(table.values(), key=lambda p: (-p.weight, p.kind, p.term.lower()))
