"""The protocol's own stdin and stdout, out of reach of everything else in the process.

``guard_stdio`` runs first, before any library is imported: it moves the protocol's stdin and
stdout to private descriptors (not inherited by child processes), points file descriptor 1 at
stderr and descriptor 0 at ``/dev/null``. After it, whatever writes to fd 1 (llama.cpp, a C
library, a stray ``print``) lands on stderr and never corrupts the JSON-RPC stream.
"""
from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class ProtocolPipes:
    """Private descriptors carrying the ACP stream (newline-delimited JSON-RPC)."""

    read_fd: int
    write_fd: int


def guard_stdio() -> ProtocolPipes:
    """Keep stdin and stdout for the protocol alone; fd 1 becomes stderr, fd 0 ``/dev/null``."""
    sys.stdout.flush()
    write_fd = os.dup(1)  # os.dup: not inheritable, so Bash and bwrap never see the stream
    read_fd = os.dup(0)
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return ProtocolPipes(read_fd, write_fd)


async def open_streams(pipes: ProtocolPipes, limit: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """asyncio streams over the private descriptors (the reader buffers at most ``limit`` bytes)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(pipes.read_fd, "rb", buffering=0))
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, os.fdopen(pipes.write_fd, "wb", buffering=0))
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    return reader, writer
