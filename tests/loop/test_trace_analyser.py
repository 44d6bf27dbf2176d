"""TraceAnalyser over real recorded tau2 runs and over in-memory traces; bad files fail alone."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ace.roles import ReflectorOutput
from ace.runners import TraceAnalyser
from ace.steps import TraceFileError

RECORDED = ("tau2trace_gpt-4.1-mini_airline_1sim.json", "sierra_gpt-4.1_airline_test20_1trial.json")


def _analyser(roles: dict[str, Any], **kwargs: Any) -> TraceAnalyser:
    return TraceAnalyser.from_roles(reflector=roles["reflector"], skill_manager=roles["skill_manager"], **kwargs)


def test_learns_one_skill_per_recorded_simulation_with_its_tau2_identity(
    roles: dict[str, Any], recorded_dir: Path, tmp_path: Path
) -> None:
    files = [shutil.copy(recorded_dir / name, tmp_path / name) for name in RECORDED]
    simulation_ids = [
        simulation["id"] for name in RECORDED for simulation in json.loads((tmp_path / name).read_text())["simulations"]
    ]
    analyser = _analyser(roles)

    results = analyser.run([Path(f) for f in files], workers=4)

    assert len(results) == len(simulation_ids) == 21
    assert [r.error for r in results] == [None] * 21
    added = [o for s in analyser.skillbook.skills() for o in s.occurrences if o.operation_type == "ADD"]
    assert sorted(o.trace_uid for o in added) == sorted(f"tau2:{sim_id}" for sim_id in simulation_ids)
    assert all(o.display_name.startswith(RECORDED[0]) or o.display_name.startswith(RECORDED[1]) for o in added)
    assert all(o.sample_question for o in added)


def test_a_malformed_trace_file_fails_its_own_sample_only(roles: dict[str, Any], tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps({"id": "t1", "question": "refund?", "feedback": "wrong"}) + "\n")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    analyser = _analyser(roles)

    results = analyser.run([good, bad, tmp_path / "missing.json"])

    assert [r.failed_at for r in results] == [None, "LoadTracesStep", "LoadTracesStep"]
    assert isinstance(results[1].error, TraceFileError) and "bad.json" in str(results[1].error)
    assert isinstance(results[2].error, TraceFileError) and "missing.json" in str(results[2].error)
    assert len(analyser.skillbook) == 1


def test_in_memory_traces_get_a_content_fingerprint_identity(roles: dict[str, Any]) -> None:
    trace = [{"role": "user", "content": "refund?"}, {"role": "assistant", "content": "no"}]
    analyser = _analyser(roles)

    analyser.run([trace, trace])

    uids = {o.trace_uid for s in analyser.skillbook.skills() for o in s.occurrences}
    assert len(uids) == 1
    assert next(iter(uids)).startswith("content:")


def test_a_single_path_or_string_of_traces_is_rejected_with_the_list_form_suggested(
    roles: dict[str, Any], tmp_path: Path
) -> None:
    analyser = _analyser(roles)

    with pytest.raises(TypeError, match="not one str"):
        analyser.run("results.json")
    with pytest.raises(TypeError, match="not one [A-Za-z]*Path"):
        analyser.run(tmp_path / "results.json")
    assert len(analyser.skillbook) == 0


class _ConcurrencyProbe:
    """A reflector that records how many of its calls overlap."""

    def __init__(self) -> None:
        self.active = self.peak = 0

    async def reflect(self, **kwargs: Any) -> ReflectorOutput:
        self.active += 1
        self.peak = max(self.peak, self.active)
        for _ in range(5):  # yield to the loop so that other reflections can start
            await asyncio.sleep(0)
        self.active -= 1
        return ReflectorOutput.failure("probe only")


@pytest.mark.parametrize("reflect_workers", [1, 2])
def test_reflect_workers_caps_the_reflections_running_at_once(roles: dict[str, Any], reflect_workers: int) -> None:
    probe = _ConcurrencyProbe()
    analyser = TraceAnalyser.from_roles(
        reflector=probe, skill_manager=roles["skill_manager"], reflect_workers=reflect_workers
    )

    analyser.run([f"trace {index}" for index in range(4)], workers=4)

    assert probe.peak == reflect_workers


class _FailingReflector:
    async def reflect(self, **kwargs: Any) -> ReflectorOutput:
        return ReflectorOutput.failure("budget exhausted after 3 requests")


def test_a_failed_reflection_is_no_error_but_the_result_says_why_it_taught_nothing(roles: dict[str, Any]) -> None:
    analyser = TraceAnalyser.from_roles(reflector=_FailingReflector(), skill_manager=roles["skill_manager"])

    [failed] = analyser.run(["a trace"])
    [learned] = _analyser(roles).run(["a trace"])

    assert failed.error is None and failed.output.reflection_failure == "budget exhausted after 3 requests"
    assert failed.output.skill_manager_output.finished is False and len(analyser.skillbook) == 0
    assert learned.error is None and learned.output.reflection_failure is None


def test_epoch_position_fields_say_which_sample_of_which_epoch(roles: dict[str, Any]) -> None:
    results = _analyser(roles).run(["t0", "t1", "t2"], epochs=2)

    assert [
        (r.output.epoch, r.output.sample_index, r.output.samples_per_epoch, r.output.global_sample_index)
        for r in results
    ] == [(1, 0, 3, 0), (1, 1, 3, 1), (1, 2, 3, 2), (2, 0, 3, 3), (2, 1, 3, 4), (2, 2, 3, 5)]


def test_loaded_traces_are_copies_so_one_sample_cannot_change_another(tmp_path: Path) -> None:
    from ace.steps import ACEStepContext, LoadTracesStep, TraceLocation, load_trace_file

    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"id": "t1", "question": "q"}) + "\n")
    step = LoadTracesStep()

    first = step(ACEStepContext(sample=TraceLocation(path)))
    first.trace["question"] = "changed"
    load_trace_file(path)[0]["question"] = "changed too"

    assert step(ACEStepContext(sample=TraceLocation(path))).trace["question"] == "q"
