"""Block ("symbol") definitions of contextbench-spec §4 with the tree-sitter stack upstream
pins (optional and imported lazily: :func:`tree_sitter_finder` raises the install hint)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from arbwb.contextbench.intervals import Interval
from arbwb.io.checkout import Checkout

Symbol = tuple[str, str, int, int]  # (file, node_type, start_byte, end_byte)


@dataclass(frozen=True)
class Definition:
    """A definition node of a file: tree-sitter type, byte range (end exclusive), name."""

    node_type: str
    start_byte: int
    end_byte: int
    name: str | None


#: Definitions of a file from its path and bytes (e.g. :func:`tree_sitter_finder`).
SymbolFinder = Callable[[str, bytes], Sequence[Definition]]

INSTALL_HINT = (
    "block (symbol) level needs the tree-sitter stack upstream pins: "
    "pip install 'tree-sitter==0.20.4' 'tree-sitter-languages==1.10.2' "
    "(or pip install 'arbwb[contextbench]')"
)

_JS = "function_declaration class_declaration method_definition"
#: §4: each language's lower-cased extensions and definition node types.
_LANGUAGE_TABLE = {
    "python": (".py", "function_definition class_definition async_function_definition"),
    "javascript": (".js .jsx", f"{_JS} arrow_function"),
    "typescript": (".ts", f"{_JS} interface_declaration"),
    "tsx": (".tsx", f"{_JS} interface_declaration"),
    "java": (
        ".java",
        "method_declaration class_declaration interface_declaration constructor_declaration",
    ),
    "go": (".go", "function_declaration method_declaration type_declaration"),
    "rust": (".rs", "function_item impl_item struct_item trait_item"),
    "c": (".c .h", "function_definition struct_specifier"),
    "cpp": (".cpp .cc .hpp", "function_definition class_specifier struct_specifier"),
    "c_sharp": (".cs", "method_declaration class_declaration interface_declaration"),
    "php": (".php", "function_definition method_declaration class_declaration"),
    "ruby": (".rb", "method class module"),
    "swift": (".swift", "function_declaration class_declaration protocol_declaration"),
    "kotlin": (".kt", "function_declaration class_declaration"),
    "scala": (".scala", "function_definition class_definition trait_definition"),
}
LANGUAGES = {ext: lang for lang, (exts, _) in _LANGUAGE_TABLE.items() for ext in exts.split()}
DEFINITIONS = {lang: frozenset(types.split()) for lang, (_, types) in _LANGUAGE_TABLE.items()}
#: Name search order (§4): identifier < field_identifier < property_identifier <
#: method_identifier < any other *identifier kind.
_NAME_RANK = ("identifier", "field_identifier", "property_identifier", "method_identifier")


def _rank(node_type: str) -> int | None:
    if node_type in _NAME_RANK:
        return _NAME_RANK.index(node_type)
    return len(_NAME_RANK) if node_type.endswith("identifier") else None


def _text(node: Any, source: bytes) -> str:
    return str(source[node.start_byte : node.end_byte].decode("utf-8", errors="replace"))


def node_name(node: Any, source: bytes) -> str | None:
    """The ``name`` field's text, else the best-ranked identifier in pre-order of the
    ``declarator`` child (or the node itself); None for unnamed nodes (e.g. arrow functions)."""
    name = node.child_by_field_name("name")
    if name is not None:
        return _text(name, source)
    root = node.child_by_field_name("declarator") or node
    best: tuple[int, Any] | None = None
    stack = [root]
    while stack:
        current = stack.pop()
        rank = _rank(current.type)
        if rank is not None and (best is None or rank < best[0]):
            best = (rank, current)
        stack.extend(reversed(current.children))
    return None if best is None else _text(best[1], source)


def _walk_definitions(root: Any, wanted: frozenset[str], source: bytes) -> list[Definition]:
    """Named, non-comment nodes from the root down (nested definitions included)."""
    out = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in wanted:
            out.append(
                Definition(node.type, node.start_byte, node.end_byte, node_name(node, source))
            )
        stack.extend(
            child
            for child in reversed(node.children)
            if child.is_named and "comment" not in child.type
        )
    return out


def tree_sitter_finder() -> SymbolFinder:
    """A :data:`SymbolFinder` parsing with tree-sitter-languages (lazy import); ``.swift`` yields
    none (no parser in the pinned wheel; upstream aborts there, BUG B9)."""
    try:
        from tree_sitter_languages import get_parser
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    parsers: dict[str, Any] = {}

    def find(path: str, source: bytes) -> Sequence[Definition]:
        language = LANGUAGES.get(PurePosixPath(path).suffix.lower())
        if language is None or language == "swift":
            return ()
        if language not in parsers:
            parsers[language] = get_parser(language)
        tree = parsers[language].parse(source)
        return _walk_definitions(tree.root_node, DEFINITIONS[language], source)

    return find


class DefinitionIndex:
    """Definitions of the files of one checkout, parsed once each."""

    def __init__(self, checkout: Checkout, finder: SymbolFinder) -> None:
        self.checkout = checkout
        self.finder = finder
        self.cache: dict[str, Sequence[Definition]] = {}

    def defs(self, path: str) -> Sequence[Definition]:
        """The file's definitions (none when it has no bytes at the commit)."""
        if path not in self.cache:
            data = self.checkout.read(path)
            self.cache[path] = () if data is None else self.finder(path, data)
        return self.cache[path]

    def overlapping(self, bytes_map: Mapping[str, Sequence[Interval]]) -> set[Symbol]:
        """Definitions with ``start <= iv.end`` and ``end >= iv.start`` (1-byte leniency, Q7)."""
        return {
            (path, d.node_type, d.start_byte, d.end_byte)
            for path, ivs in bytes_map.items()
            for d in self.defs(path)
            if any(d.start_byte <= e and d.end_byte >= s for s, e in ivs)
        }

    def named(self, names: Mapping[str, Sequence[str]]) -> set[Symbol]:
        """Definitions matching predicted names exactly, else by their last dotted part."""
        out: set[Symbol] = set()
        for path, wanted in names.items():
            defs = self.defs(path)
            for name in wanted:
                hits = [d for d in defs if d.name == name]
                if not hits and "." in name:
                    hits = [d for d in defs if d.name == name.rsplit(".", 1)[1]]
                out.update((path, d.node_type, d.start_byte, d.end_byte) for d in hits)
        return out


def optional_finder(wanted: bool) -> tuple[SymbolFinder | None, str | None]:
    """The tree-sitter finder when ``wanted``; without the stack None and why the block level
    is skipped (every other level is scored as before)."""
    if not wanted:
        return None, None
    try:
        return tree_sitter_finder(), None
    except ImportError as exc:
        return None, f"block level skipped: {exc}"
