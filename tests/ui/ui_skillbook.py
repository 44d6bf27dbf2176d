"""The skillbook the UI tests serve: the matching acceptance skills, one skill with a learned
history (occurrences from three traces with trace references, tags of both outcomes), and one
whose text is an HTML injection attempt."""

from __future__ import annotations

from pathlib import Path

from matching.fixture_skills import CRASHLOOP, build_acceptance_skillbook

from ace.skillbook import InsightSource, Skillbook, TraceRef

HISTORY_SKILL = "context-00009"
"""The skill with a learned history (ADD, UPDATE, three TAGs)."""
HISTORY_OPERATIONS = ["ADD", "UPDATE", "TAG", "TAG", "TAG"]
HISTORY_TAGS = {"helpful": 2, "harmful": 1}
HOSTILE_SKILL = "context-00010"
"""The skill whose issue, insight and keywords try to inject markup."""
HOSTILE_ISSUE = 'Refund <script>window.__pwned = 1</script> requests <img src=x onerror="window.__pwned = 2">'
MATCHING_TASK = "My pod is in CrashLoopBackOff and kubectl logs shows nothing; where is the crash message?"
"""A task the crash-loop skill matches with the default field-aware reranker."""
MATCHED_SKILL = CRASHLOOP


def _source(trace: str, epoch: int, step: int, relation: str, learning: str, excerpt: str) -> InsightSource:
    return InsightSource(
        source_system="tau2",
        trace_id=trace,
        display_name=f"task {trace} trial 0",
        relation=relation,
        sample_question=f"Customer request of task {trace}",
        epoch=epoch,
        step=step,
        error_identification="the agent refunded a basic economy ticket without insurance",
        learning_text=learning,
        trace_refs=(
            TraceRef(text_excerpt=excerpt, excerpt_location="reflection.error_identification", message_indices=(4, 5)),
        ),
    )


def build_ui_skillbook() -> Skillbook:
    """The acceptance skillbook plus the history skill and the hostile skill."""
    skillbook = build_acceptance_skillbook()
    first = _source(
        "t-101",
        1,
        2,
        "primary",
        "Check insurance before refunding basic economy.",
        "agent: I have refunded your basic economy ticket.",
    )
    skill = skillbook.add_skill(
        "context",
        "Customers ask to refund basic economy tickets that have no travel insurance.",
        ["airline", "refunds", "basic_economy"],
        insight="Check the insurance first; refuse politely when there is none.",
        insight_source=first,
    )
    assert skill.id == HISTORY_SKILL
    second = _source(
        "t-205",
        1,
        7,
        "supporting",
        "Widened to changes as well as refunds.",
        "user: can I at least change the date then?",
    )
    skillbook.update_skill(skill.id, issue=skill.issue + " The same holds for date changes.", insight_source=second)
    for trace, epoch, step, label, delta in (
        ("t-301", 2, 1, "helpful", 1),
        ("t-302", 2, 4, "harmful", -1),
        ("t-303", 2, 9, "helpful", 1),
    ):
        tag = _source(trace, epoch, step, "supporting", f"tagged {label}", f"outcome of {trace}")
        skillbook.tag_skill(skill.id, delta, insight_source=tag)
    skillbook.mark_used([skill.id, skill.id, skill.id])
    hostile = skillbook.add_skill(
        "context", HOSTILE_ISSUE, ["<b>bold</b>", "refunds"], insight='"><script>window.__pwned = 3</script>'
    )
    assert hostile.id == HOSTILE_SKILL
    return skillbook


def write_ui_skillbook(folder: Path) -> Path:
    """Save `build_ui_skillbook()` as `folder/skillbook.json` and return the path."""
    path = folder / "skillbook.json"
    build_ui_skillbook().save_to_file(path)
    return path
