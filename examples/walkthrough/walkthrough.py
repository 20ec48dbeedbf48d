"""The Notes walkthrough: the official MCP Python SDK client calls `delete_folder` of the `notes`
example and answers its question with accept, decline and cancel, deletes a folder that needs
no question, and last calls it as a client that cannot be asked. docs/walkthrough.md shows what
it prints; tests/walkthrough.rs checks that it still prints exactly that.

    python examples/walkthrough/walkthrough.py                    # cargo run --example notes
    python examples/walkthrough/walkthrough.py --mode legacy      # the 2025-11-25 handshake
    python examples/walkthrough/walkthrough.py -- target/release/examples/notes

--mode is the SDK's `Client(mode=...)`: `auto` (the default) speaks 2026-07-28 to a server that
offers it, `legacy` the 2025-11-25 handshake. After `--` comes the command that starts the
server on stdio (default `cargo run --quiet --example notes`, from the repository's root). The
server starts afresh on each run, with its sample folders, so every run prints the same lines.
Its logs go to stderr (RUST_LOG, `warn` unless set); stdout is the walkthrough alone.
"""

from __future__ import annotations

import argparse
import os
import sys

import anyio
from mcp import Client, StdioServerParameters
from mcp.client import ClientRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import ElicitRequestParams, ElicitRequestURLParams, ElicitResult

# What the user answers to the next question: set before each call.
answer = ElicitResult(action="cancel")


async def handle(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
    """The elicitation callback: passing one is how the client says it can be asked."""
    if isinstance(params, ElicitRequestURLParams):
        # The Notes server asks no URL-mode questions; a client would show the URL and ask.
        print(f"[client] asked to open: {params.url}")
        return ElicitResult(action="decline")
    print(f"[client] asked: {params.message}")
    print(f"[client] schema: {params.requested_schema}")
    shown = f" {answer.content}" if answer.content is not None else ""
    print(f"[client] answers: {answer.action}{shown}")
    return answer


async def delete(client: Client, title: str, path: str, reply: ElicitResult) -> None:
    global answer
    answer = reply
    print(f"== {title} ==")
    result = await client.call_tool("delete_folder", {"path": path})
    text = result.content[0].text if result.content else ""
    print(f"[client] -> {text}" + (" (error)" if result.is_error else ""))


async def main(mode: str, command: list[str]) -> None:
    env = {"RUST_LOG": os.environ.get("RUST_LOG", "warn")}
    if "CARGO_TARGET_DIR" in os.environ:
        env["CARGO_TARGET_DIR"] = os.environ["CARGO_TARGET_DIR"]
    server = StdioServerParameters(command=command[0], args=command[1:], env=env)
    async with Client(server, mode=mode, elicitation_callback=handle) as client:
        print(f"protocol {client.protocol_version}")
        drafts, ideas = "/tmp/notes/drafts", "/tmp/notes/ideas"
        await delete(client, "a folder with files, the user accepts", drafts,
                     ElicitResult(action="accept", content={"ok": True}))
        await delete(client, "a folder with files, the user declines", ideas, ElicitResult(action="decline"))
        await delete(client, "the same folder, the user cancels", ideas, ElicitResult(action="cancel"))
        await delete(client, "an empty folder: no question", "/tmp/notes/empty", ElicitResult(action="cancel"))
    # Without an elicitation callback the client declares no elicitation capability: the call
    # that would ask fails before the tool's body runs (a new server, with every folder back).
    async with Client(server, mode=mode) as client:
        print("== a client that cannot be asked ==")
        try:
            await client.call_tool("delete_folder", {"path": ideas})
        except MCPError as e:
            print(f"[client] error {e.code}: {e.message}")


def cli() -> None:
    argv = sys.argv[1:]
    command = ["cargo", "run", "--quiet", "--example", "notes"]
    if "--" in argv:
        split = argv.index("--")
        argv, command = argv[:split], argv[split + 1 :]
    parser = argparse.ArgumentParser(description="Replay the Notes walkthrough: accept, decline, cancel.")
    parser.add_argument("--mode", choices=["auto", "legacy"], default="auto",
                        help="auto: 2026-07-28 when the server offers it; legacy: the 2025-11-25 handshake")
    args = parser.parse_args(argv)
    if not command:
        parser.error("no server command after --")
    anyio.run(main, args.mode, command)


if __name__ == "__main__":
    cli()
