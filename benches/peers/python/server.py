"""Benchmark peer: the bench server's three tools on the official Python SDK (mcp==2.3.0).

Same tools and answers as `examples/bench_server.rs` and the rmcp peer, so the load
driver compares like with like:

- `echo {text}`  -> `text`
- `add {a, b}`   -> `a + b` (text plus structuredContent `{"result": a + b}`)
- `ask_name {}`  -> always asks the form `{name: string}` ("What is your name?") through
  the resolver `who`, then answers `hello {name}` / `declined` / `cancelled`. The SDK
  runs one resolver on both eras: on 2026-07-28 it returns an InputRequiredResult
  (inputRequests key `__main__:who`, i.e. `module:qualname` of the resolver, with a
  sealed `requestState`) and finishes on the retry; on 2025-06-18 / 2025-11-25 it
  sends a back-channel `elicitation/create` in the middle of the `tools/call`.

    PY=target/interop/venv/bin/python
    $PY benches/peers/python/server.py                       # stdio, both eras
    $PY benches/peers/python/server.py --http 127.0.0.1:8000 # Streamable HTTP on /mcp

stdio: the first request picks the era (`initialize` -> handshake era, an enveloped
request such as `server/discover` -> 2026-07-28), as `MCPServer.run()` always does.

HTTP: stateless and JSON responses (no Mcp-Session-Id, no SSE). 2026-07-28 POSTs
(`MCP-Protocol-Version: 2026-07-28`) are single exchanges answered with
application/json. The handshake era also works for plain calls, but a stateless
JSON server has no stream to carry a back-channel request, so `ask_name` needs
2026-07-28 over HTTP. Host/Origin checks allow 127.0.0.1, localhost and [::1] (the SDK's
default for a loopback bind). Once the socket accepts connections the script prints
`listening on HOST:PORT` to stderr (port 0 picks a free port and prints the real one).

Only warnings and errors are logged, to stderr.
"""

from __future__ import annotations

import argparse
import sys
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

mcp = MCPServer("bench", version="0.1.0", log_level="WARNING")


# The one-field form `ask_name` asks. (No docstring: pydantic would put it on the wire
# as the schema's "description" on the handshake era.)
class UserInfo(BaseModel):
    name: str


async def who() -> Elicit[UserInfo]:
    """Always asks: the benchmark measures the question round, not a shortcut. (async: a
    sync resolver would run in a worker thread.)"""
    return Elicit("What is your name?", UserInfo)


@mcp.tool()
async def echo(text: str) -> str:
    """Echo the text back."""
    return text


@mcp.tool()
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool()
async def ask_name(user: Annotated[ElicitationResult[UserInfo], Resolve(who)]) -> str:
    """Ask the user's name, then greet them."""
    match user:
        case AcceptedElicitation(data=UserInfo(name=name)):
            return f"hello {name}"
        case DeclinedElicitation():
            return "declined"
        case CancelledElicitation():
            return "cancelled"
    raise AssertionError(f"unexpected outcome {user!r}")


def serve_http(host: str, port: int) -> None:
    import uvicorn

    # Stateless + JSON: every POST is one exchange, no sessions, no SSE streams.
    app = mcp.streamable_http_app(json_response=True, stateless_http=True, host=host)

    class Server(uvicorn.Server):
        async def startup(self, sockets=None) -> None:  # type: ignore[no-untyped-def]
            await super().startup(sockets)
            if not self.should_exit:  # bound and serving: announce the real address
                addr = self.servers[0].sockets[0].getsockname()
                print(f"listening on {addr[0]}:{addr[1]}", file=sys.stderr, flush=True)

    # loop/http "auto" pick uvloop/httptools when installed, else asyncio/h11.
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False, lifespan="on")
    Server(config).run()


def main() -> None:
    p = argparse.ArgumentParser(prog="server.py", description="mcp==2.3.0 benchmark peer")
    p.add_argument("--http", metavar="HOST:PORT", help="serve Streamable HTTP at http://HOST:PORT/mcp")
    args = p.parse_args()
    if args.http is None:
        mcp.run()  # stdio
        return
    host, sep, port = args.http.rpartition(":")
    if not sep or not port.isdigit():
        p.error(f"--http expects HOST:PORT, got {args.http!r}")
    serve_http(host.strip("[]") or "127.0.0.1", int(port))


if __name__ == "__main__":
    main()
