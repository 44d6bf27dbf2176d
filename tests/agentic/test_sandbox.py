"""Sandbox: a worker process with a persistent namespace, a killing timeout, a memory cap and truncation."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from ace.agentic.sandbox import DEFAULT_IMPORTS, Sandbox, SandboxError


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(timeout_s=1.0, memory_mb=256, max_output_chars=1_000) as box:
        yield box


def test_variables_persist_between_calls(sandbox: Sandbox):
    sandbox.start({"traces": [{"reward": 1.0}, {"reward": 0.0}]})
    assert sandbox.execute("total = sum(t['reward'] for t in traces)").error is None
    result = sandbox.execute("print(total * 10)")
    assert (result.stdout, result.error) == ("10.0\n", None)


def test_trailing_expression_is_echoed_like_a_repl(sandbox: Sandbox):
    assert sandbox.execute("x = [3, 1, 2]\nsorted(x)").stdout == "[1, 2, 3]\n"


def test_endless_loop_is_stopped_by_the_timeout_and_the_sandbox_restarts_with_start_variables(sandbox: Sandbox):
    sandbox.start({"traces": [1, 2]})
    sandbox.execute("scratch = 'lost'")
    result = sandbox.execute("while True: pass")
    assert result.timed_out and result.state_lost
    assert "timeout" in (result.error or "")
    after = sandbox.execute("print(traces, 'scratch' in dir())")
    assert (after.stdout, after.error) == ("[1, 2] False\n", None)


def test_timeout_fires_when_execute_is_called_from_a_worker_thread(sandbox: Sandbox):
    with ThreadPoolExecutor(max_workers=1) as pool:
        result = pool.submit(sandbox.execute, "while True: pass").result()
    assert result.timed_out


def test_allocation_beyond_the_memory_limit_is_stopped(sandbox: Sandbox):
    result = sandbox.execute("blob = bytearray(1024 ** 3)")
    assert result.memory_exceeded
    assert sandbox.execute("print('alive')").stdout == "alive\n"


def test_gradual_memory_bomb_is_stopped():
    # A generous timeout so that only the memory limit can stop the loop.
    with Sandbox(timeout_s=60.0, memory_mb=256) as box:
        result = box.execute("chunks = []\nwhile True:\n    chunks.append(bytearray(10 ** 7))")
    assert result.memory_exceeded and not result.timed_out


def test_huge_output_is_truncated_with_a_marker(sandbox: Sandbox):
    result = sandbox.execute("print('y' * 50_000)")
    assert result.truncated
    assert result.stdout.startswith("y" * 1_000)
    assert "output truncated: 50001 characters" in result.stdout
    assert len(result.stdout) < 1_200


def test_stderr_is_captured_per_call():
    with Sandbox(allowed_imports=DEFAULT_IMPORTS | {"sys"}) as box:
        first = box.execute("import sys\nprint('warn', file=sys.stderr)")
        second = box.execute("print('ok')")
    assert (first.stderr, second.stderr) == ("warn\n", "")


def test_forbidden_import_fails_with_a_message_naming_the_module(sandbox: Sandbox):
    result = sandbox.execute("import subprocess")
    assert "import of 'subprocess' is not allowed" in (result.error or "")
    assert sandbox.execute("from collections import Counter\nCounter('aab')['a']").stdout == "2\n"


def test_code_errors_are_reported_with_a_sandbox_traceback(sandbox: Sandbox):
    result = sandbox.execute("def f():\n    return 1 / 0\nf()")
    assert result.error is not None
    assert "ZeroDivisionError" in result.error and 'File "<sandbox>", line 2' in result.error


def test_non_json_variables_are_rejected_at_start(sandbox: Sandbox):
    with pytest.raises(SandboxError, match="JSON"):
        sandbox.start({"bad": object()})


def test_execute_after_close_starts_a_fresh_worker(sandbox: Sandbox):
    sandbox.execute("kept = 1")
    sandbox.close()
    assert "NameError" in (sandbox.execute("kept").error or "")


def test_calls_from_several_threads_each_get_their_own_result(sandbox: Sandbox):
    def run(worker: int) -> list[str]:
        return [sandbox.execute(f"print({worker} * 1000 + {i})").stdout for i in range(10)]

    with ThreadPoolExecutor(max_workers=3) as pool:
        outputs = list(pool.map(run, range(3)))
    assert outputs == [[f"{w * 1000 + i}\n" for i in range(10)] for w in range(3)]


def test_a_worker_that_dies_is_reported_and_replaced_with_the_start_variables_reloaded():
    with Sandbox(allowed_imports=DEFAULT_IMPORTS | {"os"}) as box:
        box.start({"traces": ["t1"]})
        died = box.execute("import os\nos._exit(3)")
        assert died.state_lost and "the code ended the sandbox process (exit status 3)" in (died.error or "")
        assert box.execute("traces").stdout == "['t1']\n"
