"""The built-in `conventions` family: short tasks whose right answer follows hidden house rules.

Five rules are at work at once, each over its own kind of task, and none is stated in any question:
only the feedback reveals them (with `labels` the expected answer shows the convention; with
`verdict` the learner hears only right or wrong).

| rule | task | the house answer |
|---|---|---|
| `delivery_date` | the ship date of an order, for the delivery note | `2024.03.05` (YYYY.MM.DD) |
| `invoice_reference` | the reference of invoice n of a year | `INV/2023/482` |
| `directory_name` | an employee's staff directory entry | `BERG, Anna` |
| `label_weight` | a parcel's weight for the shipping label | `2500 g` (whole grams) |
| `clearance_refund` | a refund request for a clearance-sale item | `DENY` (never refunded) |

Control items sit next to each rule and are touched by none: the same kind of data with the
format or the policy stated in the question (an ISO date, the year of an invoice, an employee's
given name, a weight in kilograms, a refund at the regular price within the stated 30-day policy).
A model answers them without help; a skill applied where it does not belong breaks them.

Everything is drawn from `random.Random(seed)`: the same seed gives the same items. No question
appears twice, so train and test items are distinct while drawn from the same rules. Within a
split, the items of each rule and the controls are spread evenly over the order, so the first N of
a split hold every rule and the controls in proportion (what `--train-limit` / `--test-limit` keep).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from types import MappingProxyType

from ace.errors import UsageError
from ace_eval.bench.items import BenchItem, Split
from ace_eval.bench.task_set import RuleSkill, TaskSet

__all__ = ["CONTROL_KINDS", "RULES", "conventions"]

_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_GIVEN = (
    "Anna",
    "Ben",
    "Clara",
    "David",
    "Elena",
    "Felix",
    "Grace",
    "Hugo",
    "Irene",
    "Jonas",
    "Karin",
    "Liam",
    "Maria",
    "Nils",
    "Olga",
    "Paul",
    "Rosa",
    "Simon",
    "Tara",
    "Victor",
)
_SURNAMES = (
    "Berg",
    "Costa",
    "Dahl",
    "Evans",
    "Fischer",
    "Garcia",
    "Hansen",
    "Ito",
    "Jensen",
    "Keller",
    "Larsen",
    "Moreau",
    "Novak",
    "Olsen",
    "Petrov",
    "Quinn",
    "Rossi",
    "Schmidt",
    "Torres",
    "Weber",
)
_ARTICLES = (
    "a lamp",
    "a jacket",
    "a kettle",
    "a backpack",
    "a desk chair",
    "a rug",
    "a toaster",
    "a pair of boots",
    "a mirror",
    "a blender",
    "a tent",
    "a bookshelf",
)
_WEIGHTS = (0.4, 0.75, 1.2, 1.5, 2.25, 2.5, 3.1, 3.6, 4.8, 5.5, 6.25, 7.4, 8.05, 9.3)

Generated = tuple[str, str]
"""A question and its expected answer."""


def _date(rng: random.Random) -> tuple[int, int, int]:
    return rng.randint(2019, 2026), rng.randint(1, 12), rng.randint(1, 28)


def _order(rng: random.Random) -> int:
    return rng.randint(10000, 99999)


def _delivery_date(rng: random.Random) -> Generated:
    year, month, day = _date(rng)
    return (
        f"Order {_order(rng)} ships on {_MONTHS[month - 1]} {day}, {year}. Write the ship date as it must "
        "appear on the delivery note.",
        f"{year}.{month:02d}.{day:02d}",
    )


def _invoice_reference(rng: random.Random) -> Generated:
    number, year = rng.randint(100, 9999), rng.randint(2019, 2026)
    return f"Give the reference of invoice number {number}, issued in {year}.", f"INV/{year}/{number}"


def _directory_name(rng: random.Random) -> Generated:
    given, surname = rng.choice(_GIVEN), rng.choice(_SURNAMES)
    return f"Write the staff directory entry for the employee {given} {surname}.", f"{surname.upper()}, {given}"


def _label_weight(rng: random.Random) -> Generated:
    kilograms = rng.choice(_WEIGHTS)
    return (
        f"The parcel for order {_order(rng)} weighs {kilograms:g} kg. Write its weight for the shipping label.",
        f"{round(kilograms * 1000)} g",
    )


def _clearance_refund(rng: random.Random) -> Generated:
    return (
        f"Refund request: a customer returns {rng.choice(_ARTICLES)} bought in the clearance sale "
        f"{rng.randint(2, 25)} days ago. Our standard policy refunds purchases within 30 days. "
        "Answer APPROVE or DENY.",
        "DENY",
    )


def _iso_date(rng: random.Random) -> Generated:
    year, month, day = _date(rng)
    return (
        f"Write {_MONTHS[month - 1]} {day}, {year} in ISO 8601 format (YYYY-MM-DD).",
        f"{year}-{month:02d}-{day:02d}",
    )


def _invoice_year(rng: random.Random) -> Generated:
    number, year = rng.randint(100, 9999), rng.randint(2019, 2026)
    return (
        f"Invoice number {number} was issued in {year}. In which year was it issued? Answer with the year only.",
        str(year),
    )


def _given_name(rng: random.Random) -> Generated:
    given, surname = rng.choice(_GIVEN), rng.choice(_SURNAMES)
    return f"What is the given name of the employee {given} {surname}? Answer with the name only.", given


def _weight_kilograms(rng: random.Random) -> Generated:
    kilograms = rng.choice(_WEIGHTS)
    return (
        f"The parcel for order {_order(rng)} weighs {kilograms:g} kg. How many kilograms is that? Answer with "
        "the number only.",
        f"{kilograms:g}",
    )


def _regular_refund(rng: random.Random) -> Generated:
    # Always inside the window: a clearance rule applied here turns the right APPROVE into DENY.
    return (
        f"Refund request: a customer returns {rng.choice(_ARTICLES)} bought at the regular price "
        f"{rng.randint(2, 25)} days ago. Our standard policy refunds purchases within 30 days. "
        "Answer APPROVE or DENY.",
        "APPROVE",
    )


RULES: MappingProxyType[str, RuleSkill] = MappingProxyType(
    {
        "delivery_date": RuleSkill(
            issue="Writing a date on a delivery note, such as the date an order ships",
            insight="Write delivery-note dates as YYYY.MM.DD, with dots and a two-digit month and day: "
            "March 5, 2024 -> 2024.03.05.",
            keywords=("delivery note", "ship date", "date format"),
        ),
        "invoice_reference": RuleSkill(
            issue="Giving the reference of an invoice from its number and the year it was issued",
            insight="An invoice reference is INV/<year>/<number>: invoice number 482 issued in 2023 -> INV/2023/482.",
            keywords=("invoice", "invoice reference", "reference format"),
        ),
        "directory_name": RuleSkill(
            issue="Writing an employee's name as an entry of the staff directory",
            insight="Staff directory entries are SURNAME, Given name, with the surname in capitals: "
            "Anna Berg -> BERG, Anna.",
            keywords=("staff directory", "employee name", "name format"),
        ),
        "label_weight": RuleSkill(
            issue="Writing a parcel's weight on a shipping label",
            insight="Shipping labels give the weight in whole grams followed by g: 2.5 kg -> 2500 g.",
            keywords=("shipping label", "parcel weight", "units"),
        ),
        "clearance_refund": RuleSkill(
            issue="A refund request for an item bought in the clearance sale",
            insight="Items bought in the clearance sale are never refunded, however recent the purchase: answer DENY.",
            keywords=("refund", "clearance sale", "returns policy"),
        ),
    }
)
"""The hidden rules, each written as the skill the `oracle` arm injects."""

_GENERATORS: dict[str, Callable[[random.Random], Generated]] = {
    "delivery_date": _delivery_date,
    "invoice_reference": _invoice_reference,
    "directory_name": _directory_name,
    "label_weight": _label_weight,
    "clearance_refund": _clearance_refund,
}

CONTROL_KINDS: MappingProxyType[str, Callable[[random.Random], Generated]] = MappingProxyType(
    {
        "iso_date": _iso_date,
        "invoice_year": _invoice_year,
        "given_name": _given_name,
        "weight_kilograms": _weight_kilograms,
        "regular_refund": _regular_refund,
    }
)
"""The control tasks, each beside the rule whose kind of data it shares (in `RULES` order)."""

_ATTEMPTS = 1000


def conventions(
    seed: int = 0,
    *,
    train_per_rule: int = 3,
    test_per_rule: int = 4,
    train_controls: int = 5,
    test_controls: int = 10,
) -> TaskSet:
    """The family's items for `seed`: per rule `train_per_rule` train and `test_per_rule` test
    items, and `train_controls` / `test_controls` control items cycling through the control kinds.
    Raises UsageError for a negative count."""
    counts = (train_per_rule, test_per_rule, train_controls, test_controls)
    if any(count < 0 for count in counts):
        raise UsageError(f"item counts must be >= 0, got {counts}")
    rng = random.Random(f"ace-bench-conventions:{seed}")
    seen: set[str] = set()
    control_kinds = list(CONTROL_KINDS.items())
    items: list[BenchItem] = []
    splits: tuple[tuple[Split, int, int], ...] = (
        ("train", train_per_rule, train_controls),
        ("test", test_per_rule, test_controls),
    )
    for split, per_rule, controls in splits:
        groups = []
        for rule, generator in _GENERATORS.items():
            drawn = [_draw(generator, rng, seen, rule) for _ in range(per_rule)]
            groups.append(
                [
                    BenchItem(
                        id=f"{split}-{rule}-{index}", split=split, question=question, expected=expected, rule=rule
                    )
                    for index, (question, expected) in enumerate(drawn, start=1)
                ]
            )
        control_group = []
        for index in range(1, controls + 1):
            kind, generator = control_kinds[(index - 1) % len(control_kinds)]
            question, expected = _draw(generator, rng, seen, kind)
            control_group.append(
                BenchItem(
                    id=f"{split}-control-{kind}-{index}",
                    split=split,
                    question=question,
                    expected=expected,
                    control=True,
                )
            )
        groups.append(control_group)
        items.extend(_interleaved(groups))
    return TaskSet(name="conventions", items=tuple(items), rules=RULES)


def _draw(generator: Callable[[random.Random], Generated], rng: random.Random, seen: set[str], kind: str) -> Generated:
    """A question of `kind` not drawn before (so no question is both a train and a test item)."""
    for _ in range(_ATTEMPTS):
        question, expected = generator(rng)
        if question not in seen:
            seen.add(question)
            return question, expected
    raise UsageError(f"could not draw another distinct {kind} question; ask for fewer items")


def _interleaved(groups: list[list[BenchItem]]) -> list[BenchItem]:
    """Each group's items spread evenly over the order (item k of a group of n sits at (k + 1/2) / n;
    ties in group order), so every prefix holds each group in proportion to its size."""
    keyed = [
        ((index + 0.5) / len(group), rank, item)
        for rank, group in enumerate(groups)
        for index, item in enumerate(group)
    ]
    return [item for _, _, item in sorted(keyed, key=lambda entry: (entry[0], entry[1]))]
