"""Whether a skill's issue applies to the tasks it is learned from, as the matcher judges it.

A SkillManager widens a skill by rewriting its issue. A small model also "widens" a skill into a
different one: it finds the only skill there is and rewrites its issue for the new lesson, leaving
the old insight under an issue it no longer answers (measured with a 1.5B model: a date-format
insight ended up under "the weight of a parcel for the shipping label"). A widened issue keeps
matching the tasks the skill was learned from; a replaced one matches none of them. And a skill
whose issue does not match even the task it is learned from (a small model writes the answer or the
lesson there: "the expected answer is in the format 'YYYY.MM.DD'") is never offered for tasks like it.
"""

from __future__ import annotations

from collections.abc import Sequence

from ace import tracing
from ace.retrieval import Embedder, SkillMatcher
from ace.skillbook import Skill, Skillbook

__all__ = ["lost_questions", "misses_question"]


def lost_questions(
    skill: Skill, issue: str, keywords: Sequence[str] | None, embedder: Embedder | None
) -> tuple[str, ...] | None:
    """The learned-from questions `skill` matches now, when an issue of `issue` (and `keywords`,
    None: the skill's own) would match none of them; None when the new issue keeps at least one
    (or the skill matches none of its questions today, so there is no scope to lose). Raises
    `SkillbookError` for keywords a skill cannot have, `EmbeddingError` when embedding fails."""
    questions = skill.learned_from_questions
    if not questions:
        return None
    covered = _matched(questions, skill.section, skill.issue, skill.keywords, skill.insight, embedder)
    if not covered:
        return None
    new_keywords = skill.keywords if keywords is None else tuple(keywords)
    return None if _matched(covered, skill.section, issue, new_keywords, skill.insight, embedder) else covered


def misses_question(
    section: str, issue: str, keywords: Sequence[str], insight: str | None, question: str, embedder: Embedder | None
) -> bool:
    """Whether a skill of `section` / `issue` / `keywords` / `insight` would not be matched to
    `question`. Raises `SkillbookError` for fields a skill cannot have, `EmbeddingError` when
    embedding fails."""
    return not _matched((question,), section, issue, keywords, insight, embedder)


def _matched(
    questions: Sequence[str],
    section: str,
    issue: str,
    keywords: Sequence[str],
    insight: str | None,
    embedder: Embedder | None,
) -> tuple[str, ...]:
    """The questions a one-skill skillbook holding that skill matches (a probe: its adds and
    matches open no span, which would read as the real skillbook's)."""
    with tracing.no_spans():
        probe = Skillbook()
        probe.add_skill(section, issue, keywords, insight)  # SkillbookError for bad fields
        matcher = SkillMatcher(probe, embedder=embedder)
        return tuple(question for question in questions if matcher.match(question, limit=1))
