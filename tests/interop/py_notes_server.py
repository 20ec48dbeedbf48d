"""Reference peer: a tiny "Notes" MCP server written with the official Python SDK (mcp==2.3.0).

It shows what the Python SDK itself puts on the wire, so the interop driver
(py_client.py) can be checked without our Rust server, and so Rust output can be
compared with the SDK's output for the same tools.

    target/interop/venv/bin/python tests/interop/py_notes_server.py     # stdio
    target/interop/venv/bin/python tests/interop/py_notes_server.py --http 127.0.0.1:8765
        # Streamable HTTP at http://127.0.0.1:8765/mcp, both eras on one endpoint (the SDK's
        # own runner: MCPServer.run("streamable-http")). --json-response answers POSTs with
        # application/json instead of SSE where the SDK allows it; --stateless serves the
        # handshake era without sessions.

Tools:
  add(a: int, b: int) -> int
  delete_folder(path: str) -> str
      Folders live in memory: "/tmp/notes/empty" (no files) and
      "/tmp/notes/drafts" (a.md, b.md). Exactly the seed-001 tutorial server: a
      non-empty folder is confirmed first through the resolver `confirm_delete`
      (elicitation `{"ok": boolean}`), like the "Notes" demo behind
      /work/shared/reference/transcripts: on 2026-07-28 as an InputRequiredResult, on
      the handshake era as a back-channel elicitation/create. An empty or unknown
      folder asks nothing (count 0) and returns "deleted <path>", so it works for
      clients without elicitation.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel

from mcp.server.mcpserver import (
    AcceptedElicitation,
    CancelledElicitation,
    DeclinedElicitation,
    Elicit,
    ElicitationResult,
    MCPServer,
    Resolve,
)

mcp = MCPServer("Notes")

FOLDERS: dict[str, list[str]] = {
    "/tmp/notes/empty": [],
    "/tmp/notes/drafts": ["a.md", "b.md"],
}


class Confirm(BaseModel):
    ok: bool


def confirm_delete(path: str) -> Confirm | Elicit[Confirm]:
    """Ask only when the folder has files (an empty or unknown folder counts 0)."""
    count = len(FOLDERS.get(path, []))
    if count == 0:
        return Confirm(ok=True)
    return Elicit(f"{path} has {count} file(s). Delete anyway?", Confirm)


@mcp.tool()
def add(a: int, b: int) -> int:
    """Trivial tool for benchmarking."""
    return a + b


@mcp.tool()
def delete_folder(
    path: str,
    confirm: Annotated[ElicitationResult[Confirm], Resolve(confirm_delete)],
) -> str:
    """Delete a notes folder, asking first when it is not empty."""
    match confirm:
        case AcceptedElicitation(data=Confirm(ok=True)):
            FOLDERS.pop(path, None)
            return f"deleted {path}"
        case AcceptedElicitation():
            return "kept the folder"
        case DeclinedElicitation():
            return "declined: folder not deleted"
        case CancelledElicitation():
            return "cancelled: folder not deleted"
    raise AssertionError(f"unexpected outcome {confirm!r}")


def main() -> None:
    import argparse

    p = argparse.ArgumentParser(prog="py_notes_server.py")
    p.add_argument("--http", metavar="HOST:PORT", help="serve Streamable HTTP at http://HOST:PORT/mcp")
    p.add_argument("--json-response", action="store_true", help="HTTP: prefer application/json responses")
    p.add_argument("--stateless", action="store_true", help="HTTP: no Mcp-Session-Id on the handshake era")
    args = p.parse_args()
    if args.http is None:
        mcp.run()
        return
    host, sep, port = args.http.rpartition(":")
    if not sep or not port.isdigit():
        p.error(f"--http expects HOST:PORT, got {args.http!r}")
    mcp.run(
        "streamable-http",
        host=host.strip("[]") or "127.0.0.1",
        port=int(port),
        json_response=args.json_response,
        stateless_http=args.stateless,
    )


if __name__ == "__main__":
    main()
