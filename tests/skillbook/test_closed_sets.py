"""The skillbook's closed sets are defined once: sections, tag outcomes and counters, and what
reads them agrees with the Skill record."""

from __future__ import annotations

import dataclasses
from typing import get_args

from ace.skillbook import COUNTERS, SECTIONS, TAG_OUTCOMES, VALID_SECTIONS, Section, Skill, Skillbook, TagDelta


def test_sections_are_the_literal_s_members_in_skillbook_order() -> None:
    assert SECTIONS == get_args(Section) == ("context", "harness")
    assert VALID_SECTIONS == frozenset(SECTIONS)


def test_every_tag_delta_has_an_outcome_whose_counter_is_a_skill_field() -> None:
    assert set(TAG_OUTCOMES) == set(get_args(TagDelta))
    assert {f"{outcome}_count" for outcome in TAG_OUTCOMES.values()} < set(COUNTERS)


def test_counters_are_the_skill_s_count_fields_in_field_order() -> None:
    fields = [field.name for field in dataclasses.fields(Skill)]

    assert COUNTERS == ("used_count", "helpful_count", "harmful_count", "neutral_count")
    assert list(COUNTERS) == [name for name in fields if name in COUNTERS]


def test_a_tag_bumps_the_counter_its_outcome_names() -> None:
    skillbook = Skillbook()
    skill = skillbook.add_skill("context", "An issue.", ["k"], "An insight.")
    for delta in get_args(TagDelta):
        skillbook.tag_skill(skill.id, delta)

    tagged = skillbook.get_skill(skill.id)
    assert tagged is not None
    assert tagged.counters() == {"used_count": 0, "helpful_count": 1, "harmful_count": 1, "neutral_count": 1}
    assert tagged.counters_text() == "used 0, helpful 1, harmful 1, neutral 1"
    assert {name: tagged.to_dict()[name] for name in COUNTERS} == tagged.counters()
