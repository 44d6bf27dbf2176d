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
        "from ace_eval.cli import make_parser; make_parser(['bench', 'conventions'])",
    ],
    ids=[
        "import-ace",
        "ace-parser",
        "ace-eval-parser",
        "ace-match-parser",
        "ace-serve-parser",
        "ace-eval-bench-parser",
    ],
)
def test_no_llm_client_is_imported(code: str) -> None:
    assert _loaded_after(code) == []


def test_importing_the_matcher_does_not_import_the_llm_rerankers() -> None:
    assert [m for m in _loaded_after("import ace.retrieval") if m in ("pydantic_ai", "litellm", "openai")] == []


@pytest.mark.parametrize("cli", ["ace.cli", "ace_eval.cli"])
def test_every_command_is_listed_once_with_the_help_its_command_entry_declares(cli: str) -> None:
    module = __import__(cli, fromlist=["COMMANDS", "make_parser"])
    [subparsers] = [action for action in module.make_parser()._actions if action.dest == "command"]
    listed = [(action.dest, action.help) for action in subparsers._choices_actions]
    assert listed == [(command.name, command.help) for command in module.COMMANDS]


def test_a_command_without_a_longer_description_describes_itself_with_its_listed_help(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from ace.cli import COMMANDS, main

    with pytest.raises(SystemExit):
        main(["match", "--help"])
    [match] = [command for command in COMMANDS if command.name == "match"]
    assert match.help in " ".join(capsys.readouterr().out.split())


def test_ace_help_lists_every_command_without_loading_them(capsys: pytest.CaptureFixture[str]) -> None:
    from ace.cli import COMMANDS, main

    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert all(command.name in out for command in COMMANDS)


def test_showing_a_skillbook_loads_neither_numpy_nor_the_llm_stack(tmp_path) -> None:
    from ace.skillbook import Skillbook

    book = Skillbook()
    book.add_skill("context", "An issue.", ["k"], "An insight.")
    book.set_embeddings({"context-00001": [1.0, 0.0]}, model="m")  # a sidecar to (not) read
    book.save_to_file(tmp_path / "sb.json")
    code = (
        f"from ace.cli import main; import sys; code = main(['skillbook', 'show', {str(tmp_path / 'sb.json')!r}]); "
        "print(code, ' '.join(m for m in ('numpy', 'filelock', 'pydantic_ai', 'litellm') if m in sys.modules))"
    )

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "0 "


@pytest.mark.parametrize(
    "argv",
    [
        [
            "ace_eval.cli",
            "e2e",
            "--agent-model",
            "openai/x",
            "--user-model",
            "openai/x",
            "--reflector-model",
            "openai/x",
            "--skill-manager-model",
            "openai/x",
        ],
        [
            "ace.cli",
            "learn",
            "{trace}",
            "--skillbook",
            "{book}",
            "--reflector-model",
            "anthropic/x",
            "--skill-manager-model",
            "anthropic/x",
        ],
    ],
    ids=["e2e", "learn"],
)
def test_a_missing_key_is_reported_before_the_llm_stack_loads(argv: list[str], tmp_path) -> None:
    (tmp_path / "trace.json").write_text("{}")
    module, *args = [a.format(trace=tmp_path / "trace.json", book=tmp_path / "sb.json") for a in argv]
    code = (
        f"import sys; from {module} import main; code = main({args!r}); "
        f"print(code, ' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    env = {k: v for k, v in __import__("os").environ.items() if not k.endswith(("_API_KEY", "_AUTH_TOKEN"))}

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.splitlines()[-1] == "2 "
    assert "is not set for" in done.stderr and done.stderr.count("\n") == 1
