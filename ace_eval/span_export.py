"""Where the spans of an `ace-eval` command go: nowhere by default, Logfire with `--logfire`, and a
local OTLP JSON lines file with `--spans-file PATH` (OpenTelemetry's file exporter; no account).

`add_span_options(parser)` adds the three flags; `exporting_spans(args)` configures logfire for the
duration of the command and flushes every span before it returns.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ace import tracing
from ace.cli import CommandError

__all__ = ["add_span_options", "exporting_spans"]


def add_span_options(parser: argparse.ArgumentParser) -> None:
    """Add `--logfire`, `--spans-file PATH` and `--span-content` to `parser`."""
    parser.add_argument("--logfire", action="store_true", help="send spans to Logfire (needs LOGFIRE_TOKEN)")
    parser.add_argument(
        "--spans-file",
        type=Path,
        metavar="PATH",
        help="write every span to PATH as OTLP JSON lines (question it with `ace-eval spans PATH`)",
    )
    parser.add_argument(
        "--span-content",
        action="store_true",
        help="put prompts, model outputs and tool arguments/results in the spans (off: ids, counts, "
        "timings and tokens only)",
    )


@contextmanager
def exporting_spans(args: argparse.Namespace) -> Iterator[None]:
    """Configure span export as `args` asks (nothing when neither `--logfire` nor `--spans-file`),
    and flush and close the exporters on exit. Raises `CommandError` when the spans file cannot be
    created."""
    spans_file: Path | None = args.spans_file
    if not args.logfire and spans_file is None:
        yield
        return
    import logfire
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    processors = []
    if spans_file is not None:
        try:
            spans_file.parent.mkdir(parents=True, exist_ok=True)
            spans_file.open("w").close()
        except OSError as exc:
            raise CommandError(f"--spans-file {spans_file}: cannot write there ({exc.strerror})") from exc
        processors.append(BatchSpanProcessor(FileSpanExporter(spans_file)))
    logfire.configure(
        send_to_logfire="if-token-present" if args.logfire else False,
        service_name="ace-eval",
        console=False,
        inspect_arguments=False,
        additional_span_processors=processors,
    )
    if args.span_content:
        tracing.capture_content()
    try:
        yield
    finally:
        logfire.force_flush()
        for processor in processors:
            processor.shutdown()
