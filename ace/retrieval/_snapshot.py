"""An immutable snapshot of the search index: rows are a skillbook's active skills in id order."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ace.skillbook import skill_id_order

from ._lexical import LexicalIndex
from ._terms import terms_of

__all__ = ["IndexRow", "IndexSnapshot", "row_for"]


@dataclass(frozen=True, slots=True)
class IndexRow:
    """What the index keeps about one active skill."""

    text: str
    """The skill's `embedding_text()` when it was indexed (a changed text means a changed skill)."""
    terms: tuple[str, ...]
    """The BM25 terms of `text`."""
    is_context: bool
    """True for the `context` section, False for `harness`."""
    keywords: tuple[str, ...]
    """The skill's normalised keywords."""


@dataclass(frozen=True, slots=True)
class IndexSnapshot:
    """The index at one skillbook version. Never mutated: an update builds a new snapshot, so a query
    running on another thread keeps a consistent view."""

    version: int
    """The skillbook version this snapshot reflects."""
    ids: tuple[str, ...]
    """Active skill ids in `skill_id_order`; row i of every array below is skill `ids[i]`."""
    rows: tuple[IndexRow, ...]
    """Per-row text, terms, section and keywords."""
    matrix: np.ndarray
    """`(len(ids), dim)` float32 unit vectors; `matrix @ query` gives cosines."""
    is_context: np.ndarray
    """Boolean per row: the skill is in the `context` section."""
    keyword_rows: Mapping[str, np.ndarray]
    """Keyword -> sorted row numbers of the skills carrying it."""
    lexical: LexicalIndex
    """BM25 over the rows' terms."""

    @classmethod
    def empty(cls) -> IndexSnapshot:
        """A snapshot with no rows, at version -1 (older than any skillbook)."""
        return cls.build(-1, [], [], np.zeros((0, 0), dtype=np.float32))

    @classmethod
    def build(cls, version: int, ids: Sequence[str], rows: Sequence[IndexRow], matrix: np.ndarray) -> IndexSnapshot:
        """Assemble a snapshot; `ids` must be in `skill_id_order` and aligned with `rows` and `matrix`."""
        postings: dict[str, list[int]] = {}
        for row_number, row in enumerate(rows):
            for keyword in row.keywords:
                postings.setdefault(keyword, []).append(row_number)
        matrix.setflags(write=False)
        return cls(
            version=version,
            ids=tuple(ids),
            rows=tuple(rows),
            matrix=matrix,
            is_context=np.array([row.is_context for row in rows], dtype=bool),
            keyword_rows={keyword: np.array(numbers, dtype=np.intp) for keyword, numbers in postings.items()},
            lexical=LexicalIndex([list(row.terms) for row in rows]),
        )

    def at_version(self, version: int) -> IndexSnapshot:
        """This snapshot relabelled with a newer version (nothing the index covers changed)."""
        return dataclasses.replace(self, version=version)

    def updated(
        self,
        version: int,
        changed: Mapping[str, tuple[IndexRow, np.ndarray]],
        removed: frozenset[str],
    ) -> IndexSnapshot:
        """A new snapshot with `changed` rows (new or replaced: row and vector) and `removed` ids gone.

        Unchanged rows are copied, not recomputed: only BM25's statistics are rebuilt from the kept
        term lists, because every document's BM25 score depends on corpus-wide frequencies.
        """
        kept = [name for name in self.ids if name not in removed and name not in changed]
        ids = sorted([*kept, *changed], key=skill_id_order)
        position = {name: number for number, name in enumerate(ids)}
        old_position = {name: number for number, name in enumerate(self.ids)}
        # The first vectors fix the width (the empty start snapshot does not know the embedder).
        dim = next(iter(changed.values()))[1].shape[0] if changed else self.matrix.shape[1]
        matrix = np.empty((len(ids), dim), dtype=np.float32)
        rows: list[IndexRow | None] = [None] * len(ids)
        if kept:
            matrix[[position[name] for name in kept]] = self.matrix[[old_position[name] for name in kept]]
            for name in kept:
                rows[position[name]] = self.rows[old_position[name]]
        for name, (row, vector) in changed.items():
            matrix[position[name]] = vector
            rows[position[name]] = row
        return IndexSnapshot.build(version, ids, rows, matrix)  # type: ignore[arg-type]


def row_for(text: str, is_context: bool, keywords: Sequence[str]) -> IndexRow:
    """The index row of a skill with this embedding text, section flag and keywords."""
    # Interned: the same term in 5,000 skills is then stored once.
    terms = tuple(sys.intern(term) for term in terms_of(text))
    return IndexRow(text=text, terms=terms, is_context=is_context, keywords=tuple(keywords))
