"""Reference peer: the `watch` example written with the official Python SDK (mcp==2.3.0).

One resource, `notes://today`, and a tool, `write_today(text)`, that replaces it and announces
the change to `subscriptions/listen` streams (`ctx.notify_resource_updated`). The interop test
(tests/interop_updates.rs) opens the same raw `subscriptions/listen` against this server and
against ours, and compares the frames each sends.

    target/interop/venv/bin/python tests/interop/py_watch_server.py --http 127.0.0.1:8765
"""

from __future__ import annotations

import argparse

from mcp.server.mcpserver import Context, MCPServer

mcp = MCPServer("watch")
NOTE = {"text": ""}


@mcp.resource("notes://today", mime_type="text/plain")
def today() -> str:
    """Today's note."""
    return NOTE["text"]


@mcp.tool()
async def write_today(text: str, ctx: Context) -> str:
    """Replaces today's note; its listeners are told."""
    NOTE["text"] = text
    await ctx.notify_resource_updated("notes://today")
    return "saved"


def main() -> None:
    p = argparse.ArgumentParser(prog="py_watch_server.py")
    p.add_argument("--http", metavar="HOST:PORT", required=True)
    args = p.parse_args()
    host, _, port = args.http.rpartition(":")
    mcp.run("streamable-http", host=host.strip("[]") or "127.0.0.1", port=int(port))


if __name__ == "__main__":
    main()
