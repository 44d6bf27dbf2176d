"""Trace identity: metadata first, then the trace, then the sample id, else a content fingerprint."""

from __future__ import annotations

import pytest

from ace.steps import infer_trace_identity


def test_explicit_metadata_wins() -> None:
    identity = infer_trace_identity({"id": "ignored"}, metadata={"trace_uid": "kayba-hosted:conv-123"})
    assert (identity.source_system, identity.trace_id, identity.trace_uid) == (
        "kayba-hosted",
        "conv-123",
        "kayba-hosted:conv-123",
    )


def test_tau2_simulation_uses_its_simulation_id_and_names_task_and_trial() -> None:
    trace = {"task": {"id": "7"}, "simulation": {"id": "sim-1", "task_id": "7", "trial": 2, "messages": []}}
    identity = infer_trace_identity(trace, metadata={"display_name": "run.json"})
    assert identity.trace_uid == "tau2:sim-1"
    assert identity.display_name == "run.json: task 7 trial 2"


def test_dict_trace_id_then_sample_id() -> None:
    assert infer_trace_identity({"trace_id": "t9", "source_system": "crm"}, metadata={}).trace_uid == "crm:t9"
    assert infer_trace_identity("plain text", metadata={}, sample_id="s1").trace_uid == "ace:s1"


def test_fingerprint_is_stable_and_content_sensitive() -> None:
    first = infer_trace_identity([{"role": "user", "content": "hi"}], metadata={})
    again = infer_trace_identity([{"role": "user", "content": "hi"}], metadata={})
    other = infer_trace_identity([{"role": "user", "content": "hello"}], metadata={})
    assert first.trace_uid == again.trace_uid != other.trace_uid
    assert first.source_system == "content"


def test_an_explicit_trace_uid_without_a_source_system_is_rejected_not_ignored() -> None:
    with pytest.raises(ValueError, match="trace_uid 'conv-123' must be 'source_system:trace_id'"):
        infer_trace_identity({"id": "other"}, metadata={"trace_uid": "conv-123"})
