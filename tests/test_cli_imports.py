"""`import ace`, `ace --help` and `ace-eval --help` load no LLM client: heavy imports wait for the command."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("pydantic_ai", "litellm", "openai", "onnxruntime")


def _loaded_after(code: str) -> list[str]:
    probe = f"{code}\nimport sys\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()


@pytest.mark.parametrize(
    "code",
    [
        "import ace",
        "from ace.cli import make_parser; make_parser(['--help'])",
        "from ace_eval.cli import make_parser; make_parser(['--help'])",
        "from ace.cli import make_parser; make_parser(['match', 'sb.json', 'task'])",
        "from ace.cli import make_parser; make_parser(['serve', 'sb.json'])",
    ],
    ids=["import-ace", "ace-parser", "ace-eval-parser", "ace-match-parser", "ace-serve-parser"],
)
def test_no_llm_client_is_imported(code: str) -> None:
    assert _loaded_after(code) == []


def test_importing_the_matcher_does_not_import_the_llm_rerankers() -> None:
    assert [m for m in _loaded_after("import ace.retrieval") if m in ("pydantic_ai", "litellm", "openai")] == []


@pytest.mark.parametrize("cli", ["ace.cli", "ace_eval.cli"])
def test_listed_help_of_every_command_is_the_help_its_module_registers(cli: str) -> None:
    module = __import__(cli, fromlist=["COMMANDS", "make_parser"])
    [subparsers] = [action for action in module.make_parser()._actions if action.dest == "command"]
    registered = {action.dest: action.help for action in subparsers._choices_actions}
    assert {command.name: command.help for command in module.COMMANDS} == registered


def test_ace_help_lists_every_command_without_loading_them(capsys: pytest.CaptureFixture[str]) -> None:
    from ace.cli import COMMANDS, main

    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert all(command.name in out for command in COMMANDS)
