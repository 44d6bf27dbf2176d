"""The SkillManager prompt states every rule of the seeds (000 "SM prompt rewrite" and 002)."""

from __future__ import annotations

import pytest

from ace.roles.prompts import SKILL_MANAGER_RULES, skill_manager_instructions

# Each required rule, and words that only a statement of that rule would contain.
REQUIRED_RULES = {
    "insight required iff context": ("context", "harness", "insight is required if and only if section is `context`"),
    "section is binary, categories are keywords": ("binary split context|harness", "keywords"),
    "issue on every add and update": ("every add_skill and update_skill carries an issue",),
    "1-5 keywords on add": ("add_skill requires non-empty keywords", "1-5"),
    "issue starts narrow": ("narrow", "single domain"),
    "search before add": ("always call search_skills before add_skill",),
    "widen instead of near-duplicate": ("another domain", "update_skill", "broader issue", "rather than adding"),
    "keywords follow widening": ("when broadening or merging", "keywords"),
    "tag every injected skill by the outcome": (
        "<injected_skills>",
        "tag each of them once",
        "<outcome>",
        "helpful (delta=1) when the run succeeded",
        "harmful (delta=-1) when it failed",
        "neutral",
        "never tag a skill that was not injected",
    ),
    "soft delete": ("soft delete", "inactive"),
    "finalize ends": ("finalize(reasoning)",),
}


@pytest.mark.parametrize("rule", sorted(REQUIRED_RULES))
def test_skill_manager_instructions_state_rule(rule: str) -> None:
    instructions = skill_manager_instructions(harmful_threshold=3).lower()
    missing = [phrase for phrase in REQUIRED_RULES[rule] if phrase.lower() not in instructions]
    assert not missing, f"rule {rule!r}: missing {missing}"


def test_harmful_removal_rule_uses_the_given_threshold() -> None:
    instructions = skill_manager_instructions(harmful_threshold=7)
    assert "harmful_count is >= 7" in instructions
    assert "remove_skill" in instructions


def test_every_named_rule_is_rendered() -> None:
    instructions = skill_manager_instructions(harmful_threshold=2)
    for name, rule in SKILL_MANAGER_RULES.items():
        assert rule.format(harmful_threshold=2) in instructions, name


def test_harmful_threshold_below_one_is_rejected() -> None:
    with pytest.raises(ValueError, match="harmful_threshold must be at least 1, got 0"):
        skill_manager_instructions(harmful_threshold=0)
