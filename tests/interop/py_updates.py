"""Watch a resource with the official MCP Python SDK client (mcp==2.3.0): on 2025-11-25
(`resources/subscribe`), or with --listen on 2026-07-28 (`subscriptions/listen`).

    <venv>/bin/python py_updates.py --uri URI --tool NAME [--timeout S] -- SERVER_CMD [ARGS...]
    <venv>/bin/python py_updates.py --url http://HOST:PORT/mcp --uri URI --tool NAME
    <venv>/bin/python py_updates.py --listen --uri URI --tool NAME -- SERVER_CMD [ARGS...]

With --listen the steps are:

  {"event":"connected","protocol_version":"2026-07-28","capabilities":..}
  {"event":"listening","honored":..,"subscription_id":..}   the SDK got the acknowledgment
  {"event":"result","text":..}          the tool NAME called with {"text": "v1"}
  {"event":"updated","uri":..}          the ResourceUpdated event the stream delivered
  {"event":"read","text":..}
  {"event":"unsubscribed"}              the listen context left (the SDK cancels the stream)
  {"event":"result","text":..,"calls":N}  the tool called with {"text": "v2"} until it tells
                                        nobody (the server ends the stream on its own task)
  {"event":"done"}

Otherwise:

Over stdio, or Streamable HTTP (where the SDK opens the session's GET stream itself). The
steps, each printed as one JSON line on stdout:

  {"event":"connected","protocol_version":..,"capabilities":..}
  {"event":"subscribed"}
  {"event":"result","text":..,"calls":N}  the tool NAME called with {"text": "v1"}, N times until
                                        a notification came (over HTTP the SDK opens its GET
                                        stream in the background; until then nothing can come)
  {"event":"updated","uri":..}          the notifications/resources/updated, as the SDK typed it
  {"event":"read","text":..}            the resource read after the notification
  {"event":"unsubscribed"}
  {"event":"result","text":..}          the tool called again, with {"text": "v2"}
  {"event":"quiet"}                     no notification within a second after that
  {"event":"done"}
  {"event":"exception","type":..,"message":..}   anything else; exit status 1

The tool must write the text the resource reads and announce the change. The server's stderr is
inherited; it gets RUST_LOG and RUST_BACKTRACE when set.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from typing import Any

import anyio
from mcp import Client, StdioServerParameters, types
from mcp.client.streamable_http import streamable_http_client


def emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj, separators=(",", ":"), default=str) + "\n")
    sys.stdout.flush()


async def run(args: argparse.Namespace) -> None:
    updates: anyio.abc.ObjectSendStream[str]
    updates, received = anyio.create_memory_object_stream[str](16)

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            await updates.send(str(message.params.uri))

    if args.url:
        server: Any = streamable_http_client(args.url)
    else:
        env = {k: os.environ[k] for k in ("RUST_LOG", "RUST_BACKTRACE") if k in os.environ}
        server = StdioServerParameters(command=args.server[0], args=args.server[1:], env=env)
    if args.listen:
        await listen(server, args)
        return
    async with Client(server, mode="legacy", message_handler=on_message) as client:
        capabilities = client.server_capabilities.model_dump(by_alias=True, exclude_none=True, mode="json")
        emit({"event": "connected", "protocol_version": client.protocol_version, "capabilities": capabilities})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # subscribe is deprecated as of 2026-07-28
            await client.subscribe_resource(args.uri)
            emit({"event": "subscribed"})
            # Over HTTP the SDK opens the GET stream in the background: until it is open the
            # session cannot be told, so the call is made again (at most until the timeout).
            calls = 0
            uri = None
            with anyio.fail_after(args.timeout):
                while uri is None:
                    result = await client.call_tool(args.tool, {"text": "v1"})
                    calls += 1
                    with anyio.move_on_after(0.5):
                        uri = await received.receive()
            emit({"event": "result", "text": result.content[0].text, "calls": calls})
            emit({"event": "updated", "uri": uri})
            read = await client.read_resource(args.uri)
            emit({"event": "read", "text": read.contents[0].text})
            await client.unsubscribe_resource(args.uri)
            emit({"event": "unsubscribed"})
        result = await client.call_tool(args.tool, {"text": "v2"})
        emit({"event": "result", "text": result.content[0].text})
        with anyio.move_on_after(1.0):
            uri = await received.receive()
            emit({"event": "updated", "uri": uri})
            return
        emit({"event": "quiet"})


async def listen(server: Any, args: argparse.Namespace) -> None:
    async with Client(server, mode="auto") as client:  # server/discover, then 2026-07-28
        capabilities = client.server_capabilities.model_dump(by_alias=True, exclude_none=True, mode="json")
        emit({"event": "connected", "protocol_version": client.protocol_version, "capabilities": capabilities})
        with anyio.fail_after(args.timeout):
            async with client.listen(resource_subscriptions=[args.uri]) as sub:
                honored = sub.honored.model_dump(by_alias=True, exclude_none=True, mode="json")
                emit({"event": "listening", "honored": honored, "subscription_id": sub.subscription_id})
                result = await client.call_tool(args.tool, {"text": "v1"})
                emit({"event": "result", "text": result.content[0].text})
                event = await sub.__anext__()
                emit({"event": "updated", "uri": str(event.uri)})
                read = await client.read_resource(args.uri)
                emit({"event": "read", "text": read.contents[0].text})
            emit({"event": "unsubscribed"})
            calls = 0
            while True:
                result = await client.call_tool(args.tool, {"text": "v2"})
                calls += 1
                if result.content[0].text.startswith("saved; 0 "):
                    break
                await anyio.sleep(0.05)
            emit({"event": "result", "text": result.content[0].text, "calls": calls})


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--url")
    p.add_argument("--uri", required=True)
    p.add_argument("--tool", required=True)
    p.add_argument("--timeout", type=float, default=20.0)
    p.add_argument("--listen", action="store_true")
    p.add_argument("server", nargs="*")
    args = p.parse_args()
    try:
        anyio.run(run, args)
    except BaseException as e:  # report anything as one JSON line
        while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
            e = e.exceptions[0]
        emit({"event": "exception", "type": type(e).__name__, "message": str(e)})
        return 1
    emit({"event": "done"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
