"""Drive any MCP server (stdio or Streamable HTTP) with the official Python SDK client (mcp==2.3.0).

    <venv>/bin/python py_client.py --mode auto|legacy|2026-07-28 \
        [--answer '{"ok": true}'|decline|cancel|none] \
        [--sampling TEXT] [--roots '[{"uri":"file:///test/root","name":"Test Root"}]'] \
        [--log-level debug|info|...|emergency] \
        [--steps '[{"op":"list_tools"},{"op":"call","tool":"add","args":{"a":1,"b":2}}]'] \
        [--env KEY=VALUE ...] [--timeout SECONDS] \
        -- SERVER_CMD [ARGS...]
    <venv>/bin/python py_client.py --url http://HOST:PORT/mcp [--bearer TOKEN] ...

stdout carries exactly one JSON object per line (and nothing else):
  {"event":"connected","protocol_version":...,"server_info":...,"capabilities":...}
  {"event":"tools","tools":[...]}                      per list_tools step
  {"event":"result","result":{...}}                    per call step (CallToolResult)
  {"event":"prompts","prompts":[...],"result":{...}}   per list_prompts step
  {"event":"prompt","result":{...}}                    per get_prompt step (GetPromptResult)
  {"event":"resources","resources":[...],"result":{...}}
                                                       per list_resources step
  {"event":"templates","resourceTemplates":[...],"result":{...}}
                                                       per list_resource_templates step
  {"event":"resource","result":{...}}                  per read_resource step (ReadResourceResult)
  {"event":"completion","result":{...}}                per complete step (CompleteResult)
  {"event":"ok","op":OP,"result":{...}}                per set_logging_level / subscribe /
                                                       unsubscribe step (the empty result) and
                                                       per sleep step (no result)
  {"event":"error","code":..,"message":..,"data":..}   per step failing with MCPError
  {"event":"elicitation","message":..,"requestedSchema":..,"mode":..,"request_id":..}
                                                       per question the callback gets
  {"event":"sampling","params":{...},"request_id":..}  per sampling/createMessage (--sampling)
  {"event":"roots","request_id":..}                    per roots/list (--roots)
  {"event":"log","level":..,"logger":..,"data":..}     per notifications/message
  {"event":"notification","method":..,"params":{...}}  per other server notification
                                                       (resources/updated, list_changed, progress)
  {"event":"stream_exception","type":..,"message":..}  per transport fault the session reports
  {"event":"exception","type":..,"message":..}         anything else; exit status 1
  {"event":"done"}                                     after the last step; exit status 0

Steps, one outcome event each (the JSON keys as on the wire):
  {"op":"list_tools"}                  {"op":"call","tool":NAME,"args":{...},"meta":{...}}
  {"op":"list_prompts"}                {"op":"get_prompt","name":NAME,"args":{...}}
  {"op":"list_resources"}              {"op":"list_resource_templates"}
  {"op":"read_resource","uri":URI}
  {"op":"complete","ref":{"type":"ref/prompt","name":NAME} | {"type":"ref/resource","uri":TEMPLATE},
   "argument":{"name":ARG,"value":PREFIX},"context":{ARG:VALUE,...}}
  {"op":"set_logging_level","level":LEVEL}
  {"op":"subscribe","uri":URI}         {"op":"unsubscribe","uri":URI}
  {"op":"sleep","seconds":S}           (to let notifications arrive)
`call`'s optional "meta" goes into the request's `_meta` (on 2026-07-28 the SDK adds its
envelope keys to it; a logLevel given here, e.g. {"io.modelcontextprotocol/logLevel":"debug"},
wins over --log-level for that call). The list and read steps bypass the SDK's response cache
(cache_mode="refresh"), so every step reaches the server. Their results are dumped as the
server sent them (fields it left out are not filled in with the SDK's defaults; on the
handshake era the SDK drops 2026-07-28-only fields such as ttlMs); `tools` and `result` keep
the SDK's full dump. Notification events are printed as the session delivers them: those a
server sends during a request arrive before that request's outcome.

--answer: '{...}' accepts with that content (URL-mode questions are accepted without
content), 'decline' / 'cancel' answer with that action, 'none' installs NO
elicitation callback, so the client declares no elicitation capability.
--answers '{"issues": {...}, "ok": "decline", "url": "cancel"}': per question, for a server
that asks several: a form question takes the answer of its requestedSchema's first property
name found here (a JSON object accepts with that content, or 'decline' / 'cancel'), a URL-mode
question the answer under "url" ('accept', 'decline' or 'cancel'); a question matching no entry
gets --answer. With --answers, an elicitation callback is installed even when --answer is
'none'.
--sampling TEXT: a sampling callback answering every sampling/createMessage with an assistant
text message TEXT (model "test-model", stopReason "endTurn"); without it no callback, so no
sampling capability is declared. --roots JSON: a roots callback answering that list of roots
(objects with "uri" and optional "name"); without it no roots capability.
--log-level LEVEL: the SDK's `Client(log_level=...)`, which stamps
`_meta["io.modelcontextprotocol/logLevel"]` on every 2026-07-28 request (without that key a
2026-07-28 server sends no log messages); no effect on the handshake era, where
set_logging_level decides.

The server's stderr is inherited. Its environment is the SDK's small allowlist
(HOME, LOGNAME, PATH, SHELL, TERM, USER) plus RUST_LOG, RUST_BACKTRACE,
RUST_LIB_BACKTRACE and LLVM_PROFILE_FILE when set, plus every --env KEY=VALUE.
With --url, --bearer sends `Authorization: Bearer TOKEN` on every HTTP request (through the
SDK's own HTTP client factory, as an application holding a token would).
--wire-log PATH (with --url): every HTTP response the client receives, its status line, headers
and body bytes as they arrive (SSE streams included), is appended to PATH, so a test can check
what ever reached the client, not only what the SDK hands on.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import warnings
from typing import Any

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT, create_mcp_http_client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
    ErrorData,
    ListRootsResult,
    LoggingMessageNotification,
    LoggingMessageNotificationParams,
    PromptReference,
    ResourceTemplateReference,
    Root,
    TextContent,
)

# set_logging_level and subscribe_resource are deprecated as of 2026-07-28 (SEP-2577), which is
# what the driver tests; keep the warnings out of the server's stderr.
warnings.simplefilter("ignore", MCPDeprecationWarning)

PASSTHROUGH_ENV = ("RUST_LOG", "RUST_BACKTRACE", "RUST_LIB_BACKTRACE", "LLVM_PROFILE_FILE")


def emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj, separators=(",", ":"), default=str) + "\n")
    sys.stdout.flush()


def dump(model: Any) -> Any:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def wire(model: Any) -> Any:
    """What the server sent: fields it left out stay out (not filled with the SDK's defaults)."""
    return model.model_dump(by_alias=True, exclude_unset=True, mode="json")


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
    p.add_argument("--answers", default=None, help="JSON object: answers by form field name, or under \"url\"")
    p.add_argument("--steps", default='[{"op":"list_tools"}]', help="JSON array of steps")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="extra server env")
    p.add_argument("--timeout", type=float, default=60.0, help="overall deadline in seconds")
    p.add_argument("--cwd", default=None, help="working directory of the server")
    p.add_argument("--url", default=None, help="Streamable HTTP endpoint instead of a stdio server")
    p.add_argument("--bearer", default=None, help="a bearer token for every HTTP request (with --url)")
    p.add_argument("--wire-log", default=None, metavar="PATH", help="append every HTTP response received to PATH")
    p.add_argument("--sampling", default=None, metavar="TEXT", help="answer sampling/createMessage with TEXT")
    p.add_argument("--roots", default=None, metavar="JSON", help="answer roots/list with this JSON array of roots")
    p.add_argument("--log-level", default=None, help="Client(log_level=...): the 2026-07-28 logLevel opt-in")
    args = p.parse_args(own)
    args.steps = json.loads(args.steps)
    if not isinstance(args.steps, list):
        sys.exit("py_client.py: --steps must be a JSON array")
    if args.answer not in ("none", "decline", "cancel"):
        content = json.loads(args.answer)
        if not isinstance(content, dict):
            sys.exit("py_client.py: --answer must be a JSON object, decline, cancel or none")
        args.answer = content
    if args.answers is not None:
        answers = json.loads(args.answers)
        if not isinstance(answers, dict) or not all(
            isinstance(a, dict) or a in ("accept", "decline", "cancel") for a in answers.values()
        ):
            sys.exit("py_client.py: --answers must map names to JSON objects, accept, decline or cancel")
        args.answers = answers
    if args.roots is not None:
        roots = json.loads(args.roots)
        if not isinstance(roots, list):
            sys.exit("py_client.py: --roots must be a JSON array of roots")
        args.roots = [Root.model_validate(r) for r in roots]
    return args, server_cmd


def pick_answer(answer: Any, answers: dict[str, Any] | None, params: ElicitRequestParams) -> Any:
    """The answer to this question: from --answers when an entry matches it, else --answer."""
    if not answers:
        return answer
    if isinstance(params, ElicitRequestURLParams):
        return answers.get("url", answer)
    schema = getattr(params, "requested_schema", None) or {}
    for name in (schema.get("properties") or {}):
        if name in answers:
            return answers[name]
    return answer


class TappedStream(httpx2.AsyncByteStream):
    """A response body that copies each chunk to the wire log as the client reads it."""

    def __init__(self, inner: Any, sink: Any) -> None:
        self.inner = inner
        self.sink = sink

    async def __aiter__(self) -> Any:
        async for chunk in self.inner:
            self.sink.write(chunk)
            self.sink.flush()
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class WireTap(httpx2.AsyncBaseTransport):
    """The client's HTTP transport, with every response (status, headers, body) copied to `sink`."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, sink: Any) -> None:
        self.inner = inner
        self.sink = sink

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        head = [f"\n{request.method} {request.url.path} -> {response.status_code}"]
        head += [f"{name}: {value}" for name, value in response.headers.multi_items()]
        self.sink.write(("\n".join(head) + "\n\n").encode())
        self.sink.flush()
        response.stream = TappedStream(response.stream, self.sink)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def http_client(bearer: str | None, wire_log: str | None) -> httpx2.AsyncClient:
    """The SDK's HTTP client (its factory's timeouts), with the bearer token and the wire tap."""
    headers = {"Authorization": f"Bearer {bearer}"} if bearer else None
    if wire_log is None:
        return create_mcp_http_client(headers=headers)
    sink = open(wire_log, "ab")  # noqa: SIM115 - open for the life of the process
    return httpx2.AsyncClient(
        headers=headers,
        timeout=httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT),
        transport=WireTap(httpx2.AsyncHTTPTransport(), sink),
    )


def make_elicitation_callback(answer: Any, answers: dict[str, Any] | None = None):
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
        answer_here = pick_answer(answer, answers, params)
        if answer_here in ("decline", "cancel"):
            return ElicitResult(action=answer_here)
        if isinstance(params, ElicitRequestURLParams):
            return ElicitResult(action="accept")  # URL mode: consent only, no content
        if not isinstance(answer_here, dict):
            raise ValueError(f"no answer for the form question {params.message!r}: give it in --answers")
        return ElicitResult(action="accept", content=answer_here)

    return on_elicit


def make_sampling_callback(text: str):
    async def on_sampling(ctx: ClientRequestContext, params: CreateMessageRequestParams) -> CreateMessageResult:
        # request_id: the inputRequests key on 2026-07-28, the JSON-RPC id on the back-channel
        emit({"event": "sampling", "params": wire(params), "request_id": ctx.request_id})
        return CreateMessageResult(
            role="assistant",
            content=TextContent(type="text", text=text),
            model="test-model",
            stop_reason="endTurn",
        )

    return on_sampling


def make_roots_callback(roots: list[Root]):
    async def on_roots(ctx: ClientRequestContext) -> ListRootsResult:
        emit({"event": "roots", "request_id": ctx.request_id})
        return ListRootsResult(roots=roots)

    return on_roots


async def on_log(params: LoggingMessageNotificationParams) -> None:
    emit({"event": "log", "level": params.level, "logger": params.logger, "data": params.data})


async def on_message(message: Any) -> None:
    """Every server notification the session surfaces, and transport faults."""
    if isinstance(message, Exception):
        emit({"event": "stream_exception", "type": type(message).__name__, "message": str(message)})
        return
    if isinstance(message, LoggingMessageNotification):
        return  # already printed by the logging callback
    params = wire(message.params) if message.params is not None else None
    emit({"event": "notification", "method": message.method, "params": params})


def complete_ref(ref: dict[str, Any]) -> PromptReference | ResourceTemplateReference:
    if ref.get("type") == "ref/prompt":
        return PromptReference.model_validate(ref)
    if ref.get("type") == "ref/resource":
        return ResourceTemplateReference.model_validate(ref)
    raise ValueError(f"complete: ref.type must be ref/prompt or ref/resource, got {ref!r}")


async def run_step(client: Client, step: dict[str, Any]) -> None:
    op = step.get("op")
    # refresh: every list / read step reaches the server, whatever the response cache holds
    if op == "list_tools":
        listed = await client.list_tools(cache_mode="refresh")
        emit({"event": "tools", "tools": [dump(t) for t in listed.tools]})
    elif op == "call":
        result = await client.call_tool(step["tool"], step.get("args") or {}, meta=step.get("meta"))
        emit({"event": "result", "result": dump(result)})
    elif op == "list_prompts":
        listed = await client.list_prompts(cache_mode="refresh")
        emit({"event": "prompts", "prompts": [wire(p) for p in listed.prompts], "result": wire(listed)})
    elif op == "get_prompt":
        result = await client.get_prompt(step["name"], step.get("args"))
        emit({"event": "prompt", "result": wire(result)})
    elif op == "list_resources":
        listed = await client.list_resources(cache_mode="refresh")
        emit({"event": "resources", "resources": [wire(r) for r in listed.resources], "result": wire(listed)})
    elif op == "list_resource_templates":
        listed = await client.list_resource_templates(cache_mode="refresh")
        templates = [wire(t) for t in listed.resource_templates]
        emit({"event": "templates", "resourceTemplates": templates, "result": wire(listed)})
    elif op == "read_resource":
        result = await client.read_resource(step["uri"], cache_mode="refresh")
        emit({"event": "resource", "result": wire(result)})
    elif op == "complete":
        result = await client.complete(complete_ref(step["ref"]), step["argument"], step.get("context"))
        emit({"event": "completion", "result": wire(result)})
    elif op == "set_logging_level":
        result = await client.set_logging_level(step["level"])
        emit({"event": "ok", "op": op, "result": wire(result)})
    elif op == "subscribe":
        result = await client.subscribe_resource(step["uri"])
        emit({"event": "ok", "op": op, "result": wire(result)})
    elif op == "unsubscribe":
        result = await client.unsubscribe_resource(step["uri"])
        emit({"event": "ok", "op": op, "result": wire(result)})
    elif op == "sleep":
        await anyio.sleep(float(step["seconds"]))
        emit({"event": "ok", "op": op})
    else:
        raise ValueError(f"unknown step op {op!r}")


async def run_steps(client: Client, steps: list[dict[str, Any]]) -> None:
    for step in steps:
        try:
            await run_step(client, step)
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
    if args.url and (args.bearer or args.wire_log):
        server = streamable_http_client(args.url, http_client=http_client(args.bearer, args.wire_log))
    elif args.url:
        server = args.url
    else:
        server = StdioServerParameters(command=server_cmd[0], args=server_cmd[1:], env=env, cwd=args.cwd)
    kwargs: dict[str, Any] = {"mode": args.mode, "logging_callback": on_log, "message_handler": on_message}
    if args.answer != "none" or args.answers:
        kwargs["elicitation_callback"] = make_elicitation_callback(args.answer, args.answers)
    if args.sampling is not None:
        kwargs["sampling_callback"] = make_sampling_callback(args.sampling)
    if args.roots is not None:
        kwargs["list_roots_callback"] = make_roots_callback(args.roots)
    if args.log_level is not None:
        kwargs["log_level"] = args.log_level
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
