"""as_prompt golden text from the seeds, stats, and provenance queries."""

from __future__ import annotations

import getpass

from ace.skillbook import InsightSource, Skillbook

from .conftest import CABIN_INSIGHT, CABIN_ISSUE, RETRY_ISSUE

SEED_000_PROMPT = f"""## context
- [context-00001]
  Keywords: airline, booking_api, cabin_class
  Issue: {CABIN_ISSUE}
  Insight: {CABIN_INSIGHT}

## harness
- [harness-00001]
  Keywords: tau2, rate_limit, retries
  Issue: {RETRY_ISSUE}"""

SEED_001_PROMPT = """## context
- [context-00001]
  Keywords: math, decomposition
  Issue: Complex arithmetic questions are easier to solve when the work is decomposed into smaller verified steps.
  Insight: Break the problem into smaller steps before computing.

## harness
- [harness-00001]
  Keywords: retries, rate_limit
  Issue: The runtime can stall for long periods when provider 429 retries fan out."""


def test_as_prompt_matches_the_design_seed_example(skillbook: Skillbook) -> None:
    assert skillbook.as_prompt() == SEED_000_PROMPT


def test_as_prompt_matches_the_user_docs_example() -> None:
    book = Skillbook()
    book.add_skill(
        "context",
        "Complex arithmetic questions are easier to solve when the work is decomposed into smaller verified steps.",
        ["math", "decomposition"],
        "Break the problem into smaller steps before computing.",
    )
    book.add_skill(
        "harness",
        "The runtime can stall for long periods when provider 429 retries fan out.",
        ["retries", "rate_limit"],
    )
    assert book.as_prompt() == SEED_001_PROMPT


def test_as_prompt_of_empty_skillbook_is_empty() -> None:
    assert Skillbook().as_prompt() == ""


def test_as_prompt_leaves_out_inactive_skills_and_empty_sections(skillbook: Skillbook) -> None:
    skillbook.remove_skill("harness-00001", "fixed upstream")
    assert skillbook.as_prompt() == SEED_000_PROMPT.split("\n\n## harness")[0]


def test_as_prompt_separates_skills_of_one_section_by_a_blank_line() -> None:
    book = Skillbook()
    book.add_skill("harness", "First.", ["a"])
    book.add_skill("harness", "Second.", ["b"], "Do this.")
    assert book.as_prompt() == (
        "## harness\n- [harness-00001]\n  Keywords: a\n  Issue: First.\n\n"
        "- [harness-00002]\n  Keywords: b\n  Issue: Second.\n  Insight: Do this."
    )


def test_stats_count_all_and_active_skills_by_section(skillbook: Skillbook) -> None:
    skillbook.add_skill("context", "more", ["k"], "x")
    skillbook.remove_skill("harness-00001", "stale")
    assert skillbook.stats() == {
        "sections": 1,
        "skills": 3,
        "active_skills": 2,
        "by_section": {"context": 2, "harness": 0},
    }


def test_source_map_lists_occurrence_dicts_per_skill(skillbook: Skillbook, source: InsightSource) -> None:
    skillbook.tag_skill("context-00001", 1, insight_source=source)
    added_by_api = {
        "trace_uid": f"api:{getpass.getuser()}",
        "source_system": "api",
        "trace_id": getpass.getuser(),
        "operation_type": "ADD",
    }
    assert skillbook.source_map() == {
        "context-00001": [
            added_by_api,
            {
                "trace_uid": "tau2-airline:task-7",
                "source_system": "tau2-airline",
                "trace_id": "task-7",
                "sample_question": "Upgrade my second leg to business",
                "epoch": 1,
                "operation_type": "TAG",
                "error_identification": "agent offered a per-leg upgrade",
                "learning_text": "cabin class is all-or-nothing",
            },
        ],
        "harness-00001": [added_by_api],
    }


def test_source_summary_counts_by_epoch_system_trace_and_operation(skillbook: Skillbook, source: InsightSource) -> None:
    skillbook.tag_skill("context-00001", 1, insight_source=source)
    skillbook.update_skill("context-00001", issue="wider", insight_source=source.replace(epoch=2, trace_id="task-9"))
    api = f"api:{getpass.getuser()}"
    assert skillbook.source_summary() == {  # each skill of the fixture was added through the API
        "total_sources": 4,
        "by_epoch": {None: 2, 1: 1, 2: 1},
        "by_source_system": {"api": 2, "tau2-airline": 2},
        "by_trace_uid": {api: 2, "tau2-airline:task-7": 1, "tau2-airline:task-9": 1},
        "by_operation_type": {"ADD": 2, "TAG": 1, "UPDATE": 1},
        "skills_with_sources": 2,
        "skills_without_sources": 0,
    }


def test_markdown_source_count_is_the_number_of_traces_it_lists(skillbook: Skillbook, source: InsightSource) -> None:
    from ace.skillbook import render_markdown

    skillbook.tag_skill("context-00001", 1, insight_source=source)
    skillbook.tag_skill("context-00001", 1, insight_source=source)  # the same trace again
    skillbook.tag_skill("context-00001", 0, insight_source=source.replace(trace_id="task-8"))
    [line] = [
        line
        for line in render_markdown(skillbook.skills()).splitlines()
        if line.startswith("- **Sources:**") and "task-8" in line
    ]

    listed = line.split(": ", 1)[1].split(", ")
    assert line.startswith(f"- **Sources:** {len(listed)} trace(s) in 4 record(s)")
    assert listed == sorted([f"api:{getpass.getuser()}", "tau2-airline:task-7", "tau2-airline:task-8"])
