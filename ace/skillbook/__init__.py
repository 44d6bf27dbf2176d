"""The skillbook: typed, provenance-carrying skills with validated mutations and crash-safe storage.

See docs/skillbook.md. Main entry point: `Skillbook`; records: `Skill`, `InsightSource`,
`TraceRef`; audit log: `UpdateOperation`, `UpdateBatch`.

The names below are imported on first use (`ace.lazy_exports`), so a command line can check a
location string without loading numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ace.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from ace.skillbook._errors import SkillbookError, SkillbookFormatError, SkillbookStorageError, SkillNotFoundError
    from ace.skillbook._journal import MutationJournal
    from ace.skillbook._operations import UpdateBatch, UpdateOperation
    from ace.skillbook._provenance import (
        CONFIRMATION,
        COUNTEREXAMPLE,
        DEDUP_SOURCE_SYSTEM,
        InsightSource,
        ManualOrigin,
        OperationType,
        Relation,
        TraceRef,
        manual_source,
    )
    from ace.skillbook._reports import render_markdown, render_prompt
    from ace.skillbook._skill import (
        COUNTERS,
        MAX_KEYWORD_LENGTH,
        SECTIONS,
        TAG_OUTCOMES,
        VALID_SECTIONS,
        Section,
        Skill,
        TagDelta,
        match_text,
        normalize_keywords,
        skill_id_order,
    )
    from ace.skillbook._skillbook import Skillbook
    from ace.skillbook._view import SkillbookView
    from ace.skillbook.storage import embedding_sidecar_path

__all__ = [
    "COUNTERS",
    "CONFIRMATION",
    "COUNTEREXAMPLE",
    "DEDUP_SOURCE_SYSTEM",
    "InsightSource",
    "MAX_KEYWORD_LENGTH",
    "ManualOrigin",
    "MutationJournal",
    "OperationType",
    "Relation",
    "SECTIONS",
    "Section",
    "Skill",
    "SkillNotFoundError",
    "Skillbook",
    "SkillbookError",
    "SkillbookFormatError",
    "SkillbookStorageError",
    "SkillbookView",
    "TAG_OUTCOMES",
    "TagDelta",
    "TraceRef",
    "UpdateBatch",
    "UpdateOperation",
    "VALID_SECTIONS",
    "embedding_sidecar_path",
    "manual_source",
    "match_text",
    "normalize_keywords",
    "render_markdown",
    "render_prompt",
    "skill_id_order",
]

_EXPORTS: dict[str, str] = {
    "COUNTERS": "ace.skillbook._skill",
    "SECTIONS": "ace.skillbook._skill",
    "TAG_OUTCOMES": "ace.skillbook._skill",
    "TagDelta": "ace.skillbook._skill",
    "CONFIRMATION": "ace.skillbook._provenance",
    "COUNTEREXAMPLE": "ace.skillbook._provenance",
    "DEDUP_SOURCE_SYSTEM": "ace.skillbook._provenance",
    "InsightSource": "ace.skillbook._provenance",
    "MAX_KEYWORD_LENGTH": "ace.skillbook._skill",
    "ManualOrigin": "ace.skillbook._provenance",
    "MutationJournal": "ace.skillbook._journal",
    "OperationType": "ace.skillbook._provenance",
    "Relation": "ace.skillbook._provenance",
    "Section": "ace.skillbook._skill",
    "Skill": "ace.skillbook._skill",
    "SkillNotFoundError": "ace.skillbook._errors",
    "Skillbook": "ace.skillbook._skillbook",
    "SkillbookError": "ace.skillbook._errors",
    "SkillbookFormatError": "ace.skillbook._errors",
    "SkillbookStorageError": "ace.skillbook._errors",
    "SkillbookView": "ace.skillbook._view",
    "TraceRef": "ace.skillbook._provenance",
    "UpdateBatch": "ace.skillbook._operations",
    "UpdateOperation": "ace.skillbook._operations",
    "VALID_SECTIONS": "ace.skillbook._skill",
    "embedding_sidecar_path": "ace.skillbook.storage",
    "manual_source": "ace.skillbook._provenance",
    "match_text": "ace.skillbook._skill",
    "normalize_keywords": "ace.skillbook._skill",
    "render_markdown": "ace.skillbook._reports",
    "render_prompt": "ace.skillbook._reports",
    "skill_id_order": "ace.skillbook._skill",
}
"""Where each lazily imported name of `__all__` lives."""

__getattr__ = lazy_getattr(__name__, _EXPORTS)
