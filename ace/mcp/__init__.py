"""The skillbook as an MCP server (`ace mcp SKILLBOOK.json`), built on the official `mcp` SDK (1.x, `FastMCP`).

Needs the `mcp` extra (`pip install 'ace[mcp]'`). See docs/integrations.md, "MCP clients".
"""

from ._server import CATALOG_URI, SKILL_URI, create_server
from ._traces import (
    MAX_QUEUED_BYTES,
    MAX_QUEUED_TRACES,
    MAX_TRACE_BYTES,
    TraceQueueFullError,
    TraceQuota,
    TraceRecordError,
    record_trace,
    trace_queue_path,
)

__all__ = [
    "CATALOG_URI",
    "MAX_QUEUED_BYTES",
    "MAX_QUEUED_TRACES",
    "MAX_TRACE_BYTES",
    "SKILL_URI",
    "TraceQueueFullError",
    "TraceQuota",
    "TraceRecordError",
    "create_server",
    "record_trace",
    "trace_queue_path",
]
