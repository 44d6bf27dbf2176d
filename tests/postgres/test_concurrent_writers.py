"""Several processes mutating one PostgreSQL skillbook through `Skillbook.locked` lose nothing."""

from __future__ import annotations

import multiprocessing

from ace.skillbook import InsightSource, Skillbook

PROCESSES = 4
OPERATIONS = 25


def _writer(url: str, worker: int) -> None:
    for step in range(OPERATIONS):
        source = InsightSource(source_system="writer", trace_id=f"{worker}-{step}")
        with Skillbook.locked(url) as skillbook:
            if step % 2 == 0:
                skillbook.tag_skill("context-00001", 1, insight_source=source)
            else:
                skillbook.add_skill("context", f"Issue {worker}-{step}.", ["k"], "Insight.", insight_source=source)


def test_four_processes_times_25_locked_operations_lose_no_update(pg_url: str) -> None:
    with Skillbook.locked(pg_url) as skillbook:
        skillbook.add_skill("context", "The shared skill.", ["shared"], "Tag it.")
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(pg_url, worker)) for worker in range(PROCESSES)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(timeout=120)
    assert [process.exitcode for process in workers] == [0] * PROCESSES

    skillbook = Skillbook.load_from_file(pg_url)
    tags = PROCESSES * len(range(0, OPERATIONS, 2))
    adds = PROCESSES * len(range(1, OPERATIONS, 2))
    shared = skillbook.get_skill("context-00001")
    assert shared.helpful_count == tags
    assert sorted(o.trace_id for o in shared.occurrences if o.operation_type == "TAG") == sorted(
        f"{w}-{s}" for w in range(PROCESSES) for s in range(0, OPERATIONS, 2)
    )
    added = [s for s in skillbook.skills() if s.id != "context-00001"]
    assert len(added) == adds
    assert sorted(s.id for s in added) == [f"context-{n:05d}" for n in range(2, adds + 2)]
    assert sorted(s.issue for s in added) == sorted(
        f"Issue {w}-{s}." for w in range(PROCESSES) for s in range(1, OPERATIONS, 2)
    )
    assert all(len(s.occurrences) == 1 and s.occurrences[0].operation_type == "ADD" for s in added)
