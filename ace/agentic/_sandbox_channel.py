"""The host's side of the sandbox protocol: requests out, one validated frame back per request.

The host is the trusted party. It never runs model code; the worker process does, and everything the
worker holds (its reply descriptor, the current nonce in its memory) is within reach of model code
that escapes Python-level restrictions. So the reader assumes the byte stream may hold anything:
- each request carries a fresh random 16-byte nonce; the reply is the first frame that starts with
  FRAME_MAGIC + that nonce. Bytes before it (fake JSON lines, frames with other nonces, leftovers of
  an earlier call) are discarded, so nothing written during one call can be taken for the answer to
  a later one, and the stream can never desynchronise;
- a frame longer than `max_frame_bytes` or whose payload is not the expected JSON object is a
  protocol violation (`FrameError`): the host kills the worker. Payloads are parsed by
  `ace.untrusted.parse_json` (nesting depth bounded, so no RecursionError; no lone surrogates,
  which an honest worker replaces before it replies);
- every write and read is non-blocking and waits with `poll` (no fd-number limit, unlike select)
  only until the request's deadline: a worker that stops reading its requests or stalls its
  replies costs the host at most the call's timeout, never a blocked thread;
- reading is linear: a bytearray that, while no frame start has been seen, keeps only its last
  len(pattern) - 1 bytes, so each byte is searched a bounded number of times.
"""

from __future__ import annotations

import json
import os
import select
import time
from typing import Any

from ace.agentic._sandbox_worker import FRAME_MAGIC, LENGTH_BYTES, NONCE_BYTES
from ace.errors import AceError
from ace.untrusted import UntrustedInputError, parse_json

__all__ = ["Channel", "FrameError"]

_CHUNK = 1 << 16
_REPLY_DEPTH = 2
"""Nesting of a reply object: {"stdout": ..., ...} holds no containers; one level to spare."""


class FrameError(AceError):
    """The worker's reply stream held an invalid frame for the current request."""


class Channel:
    """Length-prefixed requests to the worker's fd 0; nonce-checked reply frames from its reply pipe."""

    def __init__(self, request_fd: int, reply_fd: int, max_frame_bytes: int) -> None:
        """Sets both descriptors non-blocking (this process's ends of the pipes only)."""
        self._request_fd = request_fd
        self._reply_fd = reply_fd
        self._max_frame_bytes = max_frame_bytes
        self._buffer = bytearray()
        for fd in (request_fd, reply_fd):
            os.set_blocking(fd, False)

    def request(self, message: dict[str, Any], deadline: float) -> dict[str, Any]:
        """Send `message` and return the payload of its reply frame.

        Raises TimeoutError at `deadline` (while writing or reading), EOFError when the worker closed
        a pipe, FrameError for a malformed frame carrying this request's nonce.
        """
        nonce = os.urandom(NONCE_BYTES)
        body = json.dumps({**message, "nonce": nonce.hex()}).encode()
        _write_all(self._request_fd, len(body).to_bytes(LENGTH_BYTES, "big") + body, deadline)
        payload = self._read_frame(FRAME_MAGIC + nonce, deadline)
        try:
            reply = parse_json(payload, "the reply", max_depth=_REPLY_DEPTH)
        except UntrustedInputError as exc:
            raise FrameError(str(exc)) from None
        if not isinstance(reply, dict):
            raise FrameError(f"the reply is a JSON {type(reply).__name__}, not an object")
        return reply

    def _read_frame(self, start: bytes, deadline: float) -> bytes:
        header = len(start) + LENGTH_BYTES
        while True:
            # Either the buffer starts with a frame start (found == 0, O(1)) or it was cut to its tail.
            found = self._buffer.find(start)
            if found < 0:
                keep = len(start) - 1
                if len(self._buffer) > keep:
                    del self._buffer[: len(self._buffer) - keep]
            else:
                if found:
                    del self._buffer[:found]
                if len(self._buffer) >= header:
                    length = int.from_bytes(self._buffer[len(start) : header], "big")
                    if length > self._max_frame_bytes:
                        raise FrameError(
                            f"the reply frame announces {length} bytes, over the {self._max_frame_bytes}-byte limit"
                        )
                    if len(self._buffer) >= header + length:
                        payload = bytes(self._buffer[header : header + length])
                        del self._buffer[: header + length]
                        return payload
            self._buffer += self._receive(deadline)

    def _receive(self, deadline: float) -> bytes:
        while True:
            _wait(self._reply_fd, select.POLLIN, deadline)
            try:
                chunk = os.read(self._reply_fd, _CHUNK)
            except BlockingIOError:
                continue
            if not chunk:
                raise EOFError
            return chunk


def _write_all(fd: int, data: bytes, deadline: float) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            _wait(fd, select.POLLOUT, deadline)
        except BrokenPipeError:
            raise EOFError from None


def _wait(fd: int, event: int, deadline: float) -> None:
    """Return when `fd` is ready for `event` or hung up (the next read or write tells which); raise
    TimeoutError at `deadline`."""
    poller = select.poll()
    poller.register(fd, event)
    while not poller.poll(_milliseconds_until(deadline)):
        if time.monotonic() >= deadline:
            raise TimeoutError


def _milliseconds_until(deadline: float) -> int:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError
    return int(remaining * 1000) + 1
