"""docs/ui.md's Python block runs as written, and every `ace serve` command it shows parses."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from ace.cli import make_parser

PAGE = Path(__file__).resolve().parents[2] / "docs" / "ui.md"


def test_the_python_block_runs(capsys):
    [block] = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.DOTALL)
    exec(compile(block, str(PAGE), "exec"), {})

    first, second = capsys.readouterr().out.splitlines()
    assert first.startswith("[('context-00001',") and "floor 0.5" in first


def test_every_ace_serve_command_parses():
    commands = re.findall(r"^(ace serve [^#\n]*?)\s*(?:#.*)?$", PAGE.read_text(), flags=re.MULTILINE)
    assert len(commands) == 4
    for command in commands:
        args = make_parser().parse_args(shlex.split(command)[1:])
        assert args.handler.__name__ == "_serve"
