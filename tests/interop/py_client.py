"""Drive any stdio MCP server with the official Python SDK client (mcp==2.3.0).

    <venv>/bin/python py_client.py --mode auto|legacy|2026-07-28 \
        [--answer '{"ok": true}'|decline|cancel|none] \
        [--steps '[{"op":"list_tools"},{"op":"call","tool":"add","args":{"a":1,"b":2}}]'] \
        [--env KEY=VALUE ...] [--timeout SECONDS] \
        -- SERVER_CMD [ARGS...]
    <venv>/bin/python py_client.py --url http://HOST:PORT/mcp [--bearer TOKEN] ...

stdout carries exactly one JSON object per line (and nothing else):
  {"event":"connected","protocol_version":...,"server_info":...,"capabilities":...}
  {"event":"tools","tools":[...]}                      per list_tools step
  {"event":"result","result":{...}}                    per call step (CallToolResult)
  {"event":"error","code":..,"message":..,"data":..}   per step failing with MCPError
  {"event":"elicitation","message":..,"requestedSchema":..,"mode":..,"request_id":..}
                                                       per question the callback gets
  {"event":"exception","type":..,"message":..}         anything else; exit status 1
  {"event":"done"}                                     after the last step; exit status 0

--answer: '{...}' accepts with that content (URL-mode questions are accepted without
content), 'decline' / 'cancel' answer with that action, 'none' installs NO
elicitation callback, so the client declares no elicitation capability.
Steps: {"op":"list_tools"} and {"op":"call","tool":NAME,"args":{...}}.

The server's stderr is inherited. Its environment is the SDK's small allowlist
(HOME, LOGNAME, PATH, SHELL, TERM, USER) plus RUST_LOG, RUST_BACKTRACE,
RUST_LIB_BACKTRACE and LLVM_PROFILE_FILE when set, plus every --env KEY=VALUE.
With --url, --bearer sends `Authorization: Bearer TOKEN` on every HTTP request (through the
SDK's own HTTP client factory, as an application holding a token would).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import ElicitRequestParams, ElicitRequestURLParams, ElicitResult, ErrorData

PASSTHROUGH_ENV = ("RUST_LOG", "RUST_BACKTRACE", "RUST_LIB_BACKTRACE", "LLVM_PROFILE_FILE")


def emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj, separators=(",", ":"), default=str) + "\n")
    sys.stdout.flush()


def dump(model: Any) -> Any:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    if "--" in argv:
        split = argv.index("--")
        own, server_cmd = argv[:split], argv[split + 1 :]
    else:
        own, server_cmd = argv, []
    if not server_cmd and "--url" not in own:
        sys.exit("py_client.py: give '--url URL' (Streamable HTTP) or '-- SERVER_CMD [ARGS...]' (stdio)")
    p = argparse.ArgumentParser(prog="py_client.py")
    p.add_argument("--mode", default="auto", help="auto | legacy | 2026-07-28")
    p.add_argument("--answer", default="none", help="JSON object | decline | cancel | none")
    p.add_argument("--steps", default='[{"op":"list_tools"}]', help="JSON array of steps")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="extra server env")
    p.add_argument("--timeout", type=float, default=60.0, help="overall deadline in seconds")
    p.add_argument("--cwd", default=None, help="working directory of the server")
    p.add_argument("--url", default=None, help="Streamable HTTP endpoint instead of a stdio server")
    p.add_argument("--bearer", default=None, help="a bearer token for every HTTP request (with --url)")
    args = p.parse_args(own)
    args.steps = json.loads(args.steps)
    if not isinstance(args.steps, list):
        sys.exit("py_client.py: --steps must be a JSON array")
    if args.answer not in ("none", "decline", "cancel"):
        content = json.loads(args.answer)
        if not isinstance(content, dict):
            sys.exit("py_client.py: --answer must be a JSON object, decline, cancel or none")
        args.answer = content
    return args, server_cmd


def make_elicitation_callback(answer: Any):
    async def on_elicit(ctx: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        event: dict[str, Any] = {
            "event": "elicitation",
            "message": params.message,
            "requestedSchema": getattr(params, "requested_schema", None),
            "mode": params.mode,
            # inputRequests key on 2026-07-28, JSON-RPC id on the back-channel
            "request_id": ctx.request_id,
        }
        if isinstance(params, ElicitRequestURLParams):
            event["url"] = params.url
            event["elicitationId"] = params.elicitation_id
        emit(event)
        if answer in ("decline", "cancel"):
            return ElicitResult(action=answer)
        if isinstance(params, ElicitRequestURLParams):
            return ElicitResult(action="accept")  # URL mode: consent only, no content
        return ElicitResult(action="accept", content=answer)

    return on_elicit


async def run_steps(client: Client, steps: list[dict[str, Any]]) -> None:
    for step in steps:
        op = step.get("op")
        try:
            if op == "list_tools":
                # refresh: every step reaches the server, whatever the response cache holds
                listed = await client.list_tools(cache_mode="refresh")
                emit({"event": "tools", "tools": [dump(t) for t in listed.tools]})
            elif op == "call":
                result = await client.call_tool(step["tool"], step.get("args") or {})
                emit({"event": "result", "result": dump(result)})
            else:
                raise ValueError(f"unknown step op {op!r}")
        except MCPError as e:
            emit({"event": "error", "code": e.code, "message": e.message, "data": e.data})


async def main(args: argparse.Namespace, server_cmd: list[str]) -> None:
    env = {k: os.environ[k] for k in PASSTHROUGH_ENV if k in os.environ}
    for kv in args.env:
        key, sep, value = kv.partition("=")
        if not sep:
            raise ValueError(f"--env expects KEY=VALUE, got {kv!r}")
        env[key] = value
    server: Any
    if args.url and args.bearer:
        http_client = create_mcp_http_client(headers={"Authorization": f"Bearer {args.bearer}"})
        server = streamable_http_client(args.url, http_client=http_client)
    elif args.url:
        server = args.url
    else:
        server = StdioServerParameters(command=server_cmd[0], args=server_cmd[1:], env=env, cwd=args.cwd)
    kwargs: dict[str, Any] = {"mode": args.mode}
    if args.answer != "none":
        kwargs["elicitation_callback"] = make_elicitation_callback(args.answer)
    with anyio.fail_after(args.timeout):
        async with Client(server, **kwargs) as client:
            emit(
                {
                    "event": "connected",
                    "protocol_version": client.protocol_version,
                    "server_info": dump(client.server_info) if client.server_info else None,
                    "capabilities": dump(client.server_capabilities),
                }
            )
            await run_steps(client, args.steps)
    emit({"event": "done"})


def leaf(exc: BaseException) -> BaseException:
    """Unwrap the ExceptionGroups that anyio task groups put around errors."""
    while isinstance(exc, BaseExceptionGroup):
        inner = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        exc = (inner or list(exc.exceptions))[0]
    return exc


async def guarded_main(args: argparse.Namespace, server_cmd: list[str]) -> int:
    try:
        await main(args, server_cmd)
    except Exception as raw:  # noqa: BLE001 - the driver reports everything as JSON
        exc = leaf(raw)
        message = str(exc)
        if isinstance(exc, TimeoutError) and not message:
            message = f"no completion within --timeout {args.timeout:g}s"
        event: dict[str, Any] = {"event": "exception", "type": type(exc).__name__, "message": message}
        if isinstance(exc, MCPError):
            event.update(code=exc.code, data=exc.data)
        emit(event)
        return 1
    return 0


def cli() -> int:
    args, server_cmd = parse_args(sys.argv[1:])
    return anyio.run(guarded_main, args, server_cmd)


if __name__ == "__main__":
    sys.exit(cli())
