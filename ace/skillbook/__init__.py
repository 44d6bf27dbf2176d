"""The skillbook: typed, provenance-carrying skills with validated mutations and crash-safe storage.

See docs/skillbook.md. Main entry point: `Skillbook`; records: `Skill`, `InsightSource`,
`TraceRef`; audit log: `UpdateOperation`, `UpdateBatch`.
"""

from ace.skillbook._errors import SkillbookError, SkillbookFormatError, SkillNotFoundError
from ace.skillbook._journal import MutationJournal
from ace.skillbook._operations import UpdateBatch, UpdateOperation
from ace.skillbook._provenance import (
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
    MAX_KEYWORD_LENGTH,
    VALID_SECTIONS,
    Section,
    Skill,
    normalize_keywords,
    skill_id_order,
)
from ace.skillbook._skillbook import Skillbook
from ace.skillbook._sidecar import embedding_sidecar_path
from ace.skillbook._view import SkillbookView

__all__ = [
    "DEDUP_SOURCE_SYSTEM",
    "InsightSource",
    "MAX_KEYWORD_LENGTH",
    "ManualOrigin",
    "MutationJournal",
    "OperationType",
    "Relation",
    "Section",
    "Skill",
    "SkillNotFoundError",
    "Skillbook",
    "SkillbookError",
    "SkillbookFormatError",
    "SkillbookView",
    "TraceRef",
    "UpdateBatch",
    "UpdateOperation",
    "VALID_SECTIONS",
    "embedding_sidecar_path",
    "manual_source",
    "normalize_keywords",
    "render_markdown",
    "render_prompt",
    "skill_id_order",
]
