"""StepContext: frozen, read-only metadata, replace()."""

from __future__ import annotations

import dataclasses

import pytest
from pipeline_helpers import NumberContext

from ace.pipeline import StepContext


def test_metadata_dict_is_copied_so_later_changes_to_it_do_not_leak_in() -> None:
    given = {"epoch": 1}
    ctx = StepContext(sample="s", metadata=given)
    given["epoch"] = 2
    assert ctx.metadata["epoch"] == 1


def test_metadata_cannot_be_mutated_through_the_context() -> None:
    ctx = StepContext(sample="s", metadata={"epoch": 1})
    with pytest.raises(TypeError):
        ctx.metadata["epoch"] = 2  # type: ignore[index]


def test_context_fields_cannot_be_reassigned() -> None:
    ctx = StepContext(sample="s")
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.sample = "other"  # type: ignore[misc]


def test_replace_returns_a_new_context_of_the_subclass_and_leaves_the_original_unchanged() -> None:
    ctx = NumberContext(sample="s", x=1, metadata={"k": "v"})
    changed = ctx.replace(x=5)
    assert isinstance(changed, NumberContext)
    assert (changed.x, ctx.x) == (5, 1)
    assert changed.metadata == {"k": "v"}


def test_replace_with_an_unknown_field_raises_type_error() -> None:
    with pytest.raises(TypeError, match="trace"):
        StepContext(sample="s").replace(trace="t")


def test_metadata_that_is_not_a_mapping_raises_type_error_naming_it() -> None:
    with pytest.raises(TypeError, match=r"metadata must be a mapping; got list"):
        StepContext(sample="s", metadata=[("a", 1)])  # type: ignore[arg-type]
