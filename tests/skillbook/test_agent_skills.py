"""Agent Skills (SKILL.md folders): export, import, the round trip and `ace skillbook export-skills /
import-skills`. Exported files are checked by a validator written from the spec, not by our code."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from ace.cli import main
from ace.skillbook import InsightSource, Skillbook
from ace.skillbook.agent_skills import (
    MAX_SKILL_MD_BYTES,
    export_agent_skills,
    import_agent_skills,
)

# -- a validator from the Agent Skills specification (agentskills.io) and the Claude API's rules --

SPEC_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")  # lowercase, digits, single inner hyphens
XML_TAG = re.compile(r"<[^>]*>")


def assert_valid_skill_folder(folder: Path) -> dict[str, Any]:
    """Check `folder/SKILL.md` against the spec; return its front matter."""
    text = (folder / "SKILL.md").read_bytes().decode("utf-8")
    assert text.startswith("---\n"), "SKILL.md must start with YAML front matter"
    front_text, separator, body = text[4:].partition("\n---\n")
    assert separator, "the front matter must be closed by a '---' line"
    front = yaml.safe_load(front_text)
    assert isinstance(front, dict)
    name, description = front["name"], front["description"]
    assert isinstance(name, str) and 1 <= len(name) <= 64 and SPEC_NAME.match(name), name
    assert name == folder.name
    assert "anthropic" not in name and "claude" not in name, "reserved words (Claude API)"
    assert isinstance(description, str) and description.strip() and len(description) <= 1024, len(description)
    assert not XML_TAG.search(description) and not XML_TAG.search(name), "no XML tags (Claude API)"
    metadata = front.get("metadata", {})
    assert isinstance(metadata, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())
    assert body.strip(), "the body holds the instructions"
    return front


def split_footer(text: str) -> tuple[str, str]:
    """(everything above the provenance footer, the footer)."""
    above, marker, footer = text.rpartition("<!-- ace:provenance -->")
    assert marker
    return above, footer


# -- fixtures --

LONG_ISSUE = "When a tool result is paginated, " + " ".join(f"page{i} must be fetched" for i in range(400)) + "."


@pytest.fixture
def varied(skillbook: Skillbook, source: InsightSource) -> Skillbook:
    """The conftest skillbook plus skills that stress the format: an inactive one in the middle, a
    very long issue, line breaks, XML tags, Unicode, a reserved word and many keywords."""
    skillbook.tag_skill("context-00001", 1, insight_source=source)
    skillbook.mark_used(["context-00001"])
    skillbook.add_skill("context", "Old refund rule.", ["refund"], "Refund everything.")
    skillbook.remove_skill("context-00002", "wrong")
    skillbook.add_skill("context", LONG_ISSUE, ["pagination"] + [f"topic_{i}" for i in range(40)], "Fetch all pages.")
    skillbook.add_skill(
        "context",
        "Claude-style <tool_call> tags\nleak into the reply: « Zürich » flights.",
        ["tags", "unicode"],
        "Strip <tool_call> blocks before answering.\n\n---\n\n- then answer",
    )
    skillbook.add_skill(
        "harness", "anthropic SDK 429s --- yes: no", ["sdk", "rate-limit"], "Back off: 'quoted' \"text\"."
    )
    return skillbook


def _export(skillbook: Skillbook, out: Path) -> dict[str, str]:
    export_agent_skills(skillbook, out)
    return {p.parent.name: p.read_bytes().decode("utf-8") for p in sorted(out.glob("*/SKILL.md"))}


def _write_skill(root: Path, folder: str, text: str | bytes) -> Path:
    (root / folder).mkdir(parents=True, exist_ok=True)
    path = root / folder / "SKILL.md"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


HAND_WRITTEN = """---
name: pdf-processing
description: Extract text and tables from PDF files, fill PDF forms and merge documents. Use when working with PDF files or when the user mentions PDFs, forms or document extraction.
license: Apache-2.0
compatibility: Requires pdfplumber and Python 3.10+
allowed-tools: Bash(python:*) Read
disable-model-invocation: false
metadata:
  author: example-org
  version: "1.0"
---

# PDF processing

## Extract text
Use pdfplumber: `pdfplumber.open(path).pages[0].extract_text()`.

## Fill forms
See [FORMS.md](FORMS.md).
"""


# -- export --


def test_every_exported_skill_md_satisfies_the_spec(varied: Skillbook, tmp_path: Path) -> None:
    files = _export(varied, tmp_path / "out")
    fronts = [assert_valid_skill_folder(tmp_path / "out" / name) for name in files]
    assert sorted(front["metadata"]["ace-skill-id"] for front in fronts) == sorted(s.id for s in varied.skills())


def test_export_writes_only_active_skills_named_id_then_issue_words(varied: Skillbook, tmp_path: Path) -> None:
    names = list(_export(varied, tmp_path / "out"))
    assert "context-00002" not in " ".join(names)  # inactive
    assert "context-00001-in-tau-airline-s-update-reservation" in names
    assert "harness-00002-sdk-429s-yes-no" in names  # "anthropic" dropped: a reserved word


def test_the_description_says_what_and_when_within_1024_characters(varied: Skillbook, tmp_path: Path) -> None:
    files = _export(varied, tmp_path / "out")
    [long_name] = [name for name in files if name.startswith("context-00003")]
    front = assert_valid_skill_folder(tmp_path / "out" / long_name)
    assert front["description"].endswith(", topic 39.")  # the when-to-use sentence survives the cut
    assert "…" in front["description"] and front["metadata"]["ace-issue"] == LONG_ISSUE


def test_a_harness_skill_without_insight_says_what_its_body_holds(skillbook: Skillbook, tmp_path: Path) -> None:
    files = _export(skillbook, tmp_path / "out")
    [harness] = [text for name, text in files.items() if name.startswith("harness-")]
    assert "holds no instruction yet: the description is the whole skill" in harness


def test_the_footer_gives_id_section_counters_and_source_traces(varied: Skillbook, tmp_path: Path) -> None:
    files = _export(varied, tmp_path / "out")
    _, footer = split_footer(files["context-00001-in-tau-airline-s-update-reservation"])
    assert "skill `context-00001` (context); used 1, helpful 1, harmful 0, neutral 0" in footer
    assert "`tau2-airline:task-7`" in footer


def test_names_do_not_change_when_counters_change(varied: Skillbook, tmp_path: Path) -> None:
    before = _export(varied, tmp_path / "out")
    for skill in varied.skills():
        varied.tag_skill(skill.id, -1)
    varied.mark_used([skill.id for skill in varied.skills()])
    after = _export(varied, tmp_path / "out")
    assert list(after) == list(before)
    assert all(split_footer(after[n])[0] == split_footer(before[n])[0] for n in before)


def test_an_unchanged_skill_is_not_rewritten(skillbook: Skillbook, tmp_path: Path) -> None:
    export_agent_skills(skillbook, tmp_path / "out")
    report = export_agent_skills(skillbook, tmp_path / "out")
    assert (report.written, len(report.unchanged), report.removed) == ((), 2, ())


def test_an_edited_issue_renames_the_folder_and_removes_the_old_one(skillbook: Skillbook, tmp_path: Path) -> None:
    _export(skillbook, tmp_path / "out")
    skillbook.update_skill("context-00001", issue="Cabin class is all-or-nothing in tau-airline.")
    report = export_agent_skills(skillbook, tmp_path / "out")
    assert report.removed == ("context-00001-in-tau-airline-s-update-reservation",)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "context-00001-cabin-class-is-all-or-nothing",
        "harness-00001-tau2-runner-retries-bedrock-429-with",
    ]


def test_a_removed_skill_leaves_the_export_and_other_folders_stay(skillbook: Skillbook, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _write_skill(out, "pdf-processing", HAND_WRITTEN)
    _export(skillbook, out)
    (out / "harness-00001-tau2-runner-retries-bedrock-429-with" / "notes.txt").write_text("mine")
    skillbook.remove_skill("context-00001", "obsolete")
    skillbook.remove_skill("harness-00001", "fixed")
    report = export_agent_skills(skillbook, out)
    assert len(report.removed) == 2
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "harness-00001-tau2-runner-retries-bedrock-429-with/notes.txt",
        "pdf-processing/SKILL.md",
    ]


def test_export_refuses_to_replace_a_folder_it_did_not_write(skillbook: Skillbook, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _write_skill(out, "harness-00001-tau2-runner-retries-bedrock-429-with", "my own notes")
    with pytest.raises(Exception, match="is not a skill exported by ace"):
        export_agent_skills(skillbook, out)
    assert not (out / "context-00001-in-tau-airline-s-update-reservation").exists()


# -- the round trip --


def test_export_import_export_keeps_every_file_above_the_footer(varied: Skillbook, tmp_path: Path) -> None:
    first = _export(varied, tmp_path / "a")
    empty = Skillbook()
    report = import_agent_skills(tmp_path / "a", empty)
    second = _export(empty, tmp_path / "b")
    assert report.failed == [] and list(second) == list(first)
    assert all(split_footer(second[n])[0] == split_footer(first[n])[0] for n in first)
    assert [(s.id, s.issue, s.insight, s.keywords) for s in empty.skills()] == [
        (s.id, s.issue, s.insight, s.keywords) for s in varied.skills()
    ]


def test_the_round_trip_is_byte_identical_from_the_second_export_on(varied: Skillbook, tmp_path: Path) -> None:
    export_agent_skills(varied, tmp_path / "a")
    second_book, third_book = Skillbook(), Skillbook()
    import_agent_skills(tmp_path / "a", second_book)
    second = _export(second_book, tmp_path / "b")
    import_agent_skills(tmp_path / "b", third_book)
    assert _export(third_book, tmp_path / "c") == second


def test_importing_an_export_into_its_own_skillbook_adds_nothing(varied: Skillbook, tmp_path: Path) -> None:
    export_agent_skills(varied, tmp_path / "a")
    before = len(varied)
    report = import_agent_skills(tmp_path / "a", varied)
    assert (report.added, len(report.skipped), len(varied)) == ([], 5, before)


def test_an_exported_skill_whose_id_is_taken_gets_the_next_id(skillbook: Skillbook, tmp_path: Path) -> None:
    export_agent_skills(skillbook, tmp_path / "a")
    other = Skillbook()
    other.add_skill("context", "Something else entirely.", ["other"], "Do the other thing.")
    report = import_agent_skills(tmp_path / "a", other)
    assert sorted(skill_id for _, skill_id in report.added) == ["context-00002", "harness-00001"]


# -- import of anyone's SKILL.md --


def test_a_hand_written_skill_folder_imports_with_provenance(tmp_path: Path) -> None:
    path = _write_skill(tmp_path / "skills", "pdf-processing", HAND_WRITTEN)
    book = Skillbook()
    report = import_agent_skills(tmp_path / "skills", book)
    [skill] = book.skills()
    assert report.added == [(path, "context-00001")]
    assert skill.issue.startswith("Extract text and tables") and skill.issue.endswith("document extraction.")
    assert skill.keywords == ("pdf", "processing")
    assert skill.insight is not None and skill.insight.startswith("# PDF processing") and "FORMS.md" in skill.insight
    [origin] = skill.occurrences
    assert (origin.source_system, origin.trace_id, origin.display_name) == ("skill-md", "pdf-processing", str(path))


def test_one_skill_folder_can_be_imported_by_itself(tmp_path: Path) -> None:
    _write_skill(tmp_path, "pdf-processing", HAND_WRITTEN)
    book = Skillbook()
    assert len(import_agent_skills(tmp_path / "pdf-processing", book).added) == 1


def test_an_empty_body_needs_the_harness_section(tmp_path: Path) -> None:
    _write_skill(tmp_path / "s", "retry-policy", "---\nname: retry-policy\ndescription: Retries stall runs.\n---\n")
    book = Skillbook()
    assert "context skill needs it as its insight" in import_agent_skills(tmp_path / "s", book).failed[0][1]
    import_agent_skills(tmp_path / "s", book, section="harness")
    assert [(s.id, s.insight) for s in book.skills()] == [("harness-00001", None)]


MALFORMED: dict[str, str | bytes] = {
    "bad-yaml": "---\nname: bad-yaml\ndescription: [unclosed\n---\nbody\n",
    "duplicate-key": "---\nname: duplicate-key\ndescription: x\ndescription: y\n---\nbody\n",
    "no-front-matter": "# Just Markdown\n",
    "unclosed-front-matter": "---\nname: unclosed-front-matter\ndescription: x\n",
    "no-description": "---\nname: no-description\n---\nbody\n",
    "blank-description": "---\nname: blank-description\ndescription: '  '\n---\nbody\n",
    "long-description": "---\nname: long-description\ndescription: " + "x" * 1025 + "\n---\nbody\n",
    "other-name": "---\nname: another-name\ndescription: x\n---\nbody\n",
    "Upper-Case": "---\nname: Upper-Case\ndescription: x\n---\nbody\n",
    "double--hyphen": "---\nname: double--hyphen\ndescription: x\n---\nbody\n",
    "not-a-mapping": "---\n- a\n- b\n---\nbody\n",
    "bad-date": "---\nname: bad-date\ndescription: x\ncreated: 2024-13-45\n---\nbody\n",
    "lone-surrogate": '---\nname: lone-surrogate\ndescription: "x \\ud800"\n---\nbody\n',
    "metadata-list": "---\nname: metadata-list\ndescription: x\nmetadata: [a]\n---\nbody\n",
    "bad-ace-id": "---\nname: bad-ace-id\ndescription: x\nmetadata:\n  ace-skill-id: context-1\n  ace-section: context\n"
    "  ace-keywords: a\n---\nbody\n",
    "not-utf8": b"---\nname: not-utf8\ndescription: caf\xe9\n---\nbody\n",
    "huge": "---\nname: huge\ndescription: x\n---\n" + "y" * MAX_SKILL_MD_BYTES,
}


@pytest.mark.parametrize("folder", list(MALFORMED))
def test_a_malformed_folder_fails_alone_with_a_one_line_message(folder: str, tmp_path: Path) -> None:
    root = tmp_path / "skills"
    _write_skill(root, "pdf-processing", HAND_WRITTEN)
    bad = _write_skill(root, folder, MALFORMED[folder])
    book = Skillbook()
    report = import_agent_skills(root, book)
    assert [path for path, _ in report.failed] == [bad] and len(report.added) == 1
    [(_, message)] = report.failed
    assert str(bad) in message and "\n" not in message


def test_a_folder_without_skill_md_fails(tmp_path: Path) -> None:
    (tmp_path / "skills" / "empty").mkdir(parents=True)
    report = import_agent_skills(tmp_path / "skills", Skillbook())
    assert "cannot read" in report.failed[0][1]


# -- the command line --


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["skillbook", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_export_then_import_into_a_new_skillbook(capsys, varied: Skillbook, tmp_path: Path) -> None:
    varied.save_to_file(tmp_path / "sb.json")
    code, out, _ = _run(capsys, "export-skills", str(tmp_path / "sb.json"), str(tmp_path / "skills"))
    assert (code, out) == (0, f"exported 5 skills to {tmp_path / 'skills'}: 5 written, 0 unchanged, 0 removed\n")
    code, out, _ = _run(capsys, "import-skills", str(tmp_path / "skills"), str(tmp_path / "new.json"))
    assert code == 0 and out.endswith(
        "imported 5 skills into " + str(tmp_path / "new.json") + ": 0 already present, 0 failed\n"
    )
    assert len(Skillbook.load_from_file(tmp_path / "new.json")) == 5


def test_cli_import_exits_1_naming_the_failed_file_and_keeps_the_others(capsys, tmp_path: Path) -> None:
    _write_skill(tmp_path / "skills", "pdf-processing", HAND_WRITTEN)
    bad = _write_skill(tmp_path / "skills", "bad-yaml", MALFORMED["bad-yaml"])
    code, _, err = _run(capsys, "import-skills", str(tmp_path / "skills"), str(tmp_path / "sb.json"))
    assert code == 1 and len(err.splitlines()) == 1 and str(bad) in err
    assert [s.id for s in Skillbook.load_from_file(tmp_path / "sb.json").skills()] == ["context-00001"]


@pytest.mark.parametrize(
    "argv",
    [
        ["export-skills", "{tmp}/missing.json", "{tmp}/out"],
        ["import-skills", "{tmp}/missing-dir", "{tmp}/sb.json"],
        ["import-skills", "{tmp}", "{tmp}/broken.json"],
        ["export-skills", "{tmp}/sb.json", "{tmp}/sb.json"],
    ],
    ids=["missing-skillbook", "missing-dir", "malformed-skillbook", "out-dir-is-a-file"],
)
def test_cli_bad_arguments_exit_2(capsys, argv: list[str], skillbook: Skillbook, tmp_path: Path) -> None:
    skillbook.save_to_file(tmp_path / "sb.json")
    (tmp_path / "broken.json").write_text("{")
    code, _, err = _run(capsys, *(arg.format(tmp=tmp_path) for arg in argv))
    assert code == 2 and len(err.splitlines()) == 1


def test_cli_rejects_an_unknown_section(capsys, tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        _run(capsys, "import-skills", str(tmp_path), str(tmp_path / "sb.json"), "--section", "other")
    assert exit_info.value.code == 2


def test_the_example_in_the_docs_is_what_export_writes() -> None:
    from ace.skillbook import Skill
    from ace.skillbook.agent_skills import render_skill_md

    doc = (Path(__file__).resolve().parents[2] / "docs" / "integrations.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Agent Skills (SKILL.md)") :]
    shown = re.search(r"```markdown\n(.*?)```", section, flags=re.DOTALL)
    assert shown is not None
    skill = Skill(
        id="context-00001",
        section="context",
        keywords=("airline", "booking_api", "cabin_class"),
        issue="In tau-airline's update_reservation_flights API, cabin class applies to all legs and passengers.",
        insight="Tell the user that cabin class is all-or-nothing, then offer only all-or-nothing options.",
        occurrences=(InsightSource(source_system="tau2-airline", trace_id="task-7"),),
        used_count=3,
        helpful_count=1,
    )
    assert render_skill_md(skill) == shown.group(1)
