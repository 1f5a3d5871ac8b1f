"""A small MCP server written with the official SDK (mcp 2.x `MCPServer`), for the MCP tests and the notebook.

    python mcp_server.py                      # stdio
    python mcp_server.py http PORT            # streamable HTTP on 127.0.0.1:PORT/mcp
    python mcp_server.py crash-at-start       # dies before it answers anything (a broken server)

Its tools cover what a client must handle: a sum and a structured result, an error, an image, its own pid (to
prove the process is gone), a crash in the middle of a call (`crash`: the process exits) and a call that never
answers (`hang`). `notes_written` counts the side effects of `write_note`.
"""

from __future__ import annotations

import os
import struct
import sys
import time
import zlib

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.utilities.types import Image
from pydantic import BaseModel

server = MCPServer("nbagent-test")
_notes: list[str] = []


class Weather(BaseModel):
    city: str
    celsius: float


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first number
        b: the second number
    """
    return a + b


@server.tool()
def weather(city: str) -> Weather:
    """Today's weather in a city, as a record."""
    return Weather(city=city, celsius=21.5)


@server.tool(name="shout-text")
def shout(text: str, times: int = 1) -> str:
    """Upper-case a text, repeated `times` times."""
    return " ".join([text.upper()] * times)


@server.tool()
def fail(reason: str) -> str:
    """Always fails, with the reason."""
    raise ValueError(f"refused: {reason}")


@server.tool()
def swatch(red: int, green: int, blue: int) -> Image:
    """A 4x3 PNG of one color."""
    return Image(data=_png(4, 3, bytes([red, green, blue])), format="png")


@server.tool()
def write_note(text: str) -> int:
    """Write a note (a side effect); the number of notes written so far."""
    _notes.append(text)
    return len(_notes)


@server.tool()
def pid() -> int:
    """This server's process id."""
    return os.getpid()


@server.tool()
def crash(code: int = 3) -> str:
    """The server process exits at once, mid-call."""
    print(f"crash: exiting with code {code}", file=sys.stderr, flush=True)
    os._exit(code)


@server.tool()
def hang(seconds: float = 3600.0) -> str:
    """Answers after `seconds` (an hour by default: never, for a test)."""
    time.sleep(seconds)
    return "woke up"


def _png(width: int, height: int, rgb: bytes) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + rgb * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "crash-at-start":
        print("this server cannot start: no configuration", file=sys.stderr, flush=True)
        sys.exit(2)
    if mode == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
