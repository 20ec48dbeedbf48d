// Drive an MCP server with the official TypeScript client (@modelcontextprotocol/client 2.4.0),
// over Streamable HTTP or stdio. Same interface and JSON-lines output as py_client.py.
//
//   NODE=$(scripts/setup-node.sh | tail -n1)
//   $NODE tests/interop/ts_client.mjs --transport http --url http://127.0.0.1:PORT/mcp [opts]
//   $NODE tests/interop/ts_client.mjs [--transport stdio] [opts] -- SERVER_CMD [ARGS...]
//
// Options:
//   --mode auto|legacy|2026-07-28|<2025 date>   era selection (default auto):
//        auto       -> versionNegotiation {mode:'auto'}: server/discover probe, falls back to initialize
//        legacy     -> versionNegotiation {mode:'legacy'}: plain 2025 initialize (offers 2025-11-25)
//        2026-07-28 -> versionNegotiation {mode:{pin:'2026-07-28'}}: modern only, no fallback
//        2025-06-18 (any pre-2026 date) -> legacy, offering only that version
//   --answer '{"ok": true}'|decline|cancel|none   (default none: no elicitation capability, no handler)
//   --steps '[{"op":"list_tools"},{"op":"call","tool":"add","args":{"a":1,"b":2}}]'
//   --header K=V       extra HTTP header on every request (repeatable), e.g. Authorization=Bearer x
//   --env K=V          extra server env for stdio (repeatable)
//   --timeout S        overall deadline, also the per-request timeout (default 60)
//   --cwd DIR          stdio server working directory
//   --wire FILE        HTTP only: log each request/response (method, status, headers, bodies)
//   --delete-session   HTTP legacy only: DELETE the session before closing (the SDK does not by itself)
//
// stdout carries exactly one JSON object per line:
//   {"event":"connected","protocol_version":..,"era":"modern"|"legacy","server_info":..,"capabilities":..,"session_id":..}
//   {"event":"tools","tools":[...]}                      per list_tools step
//   {"event":"result","result":{...}}                    per call step (final result; MRTR rounds are internal)
//   {"event":"error","code":..,"message":..,"data":..}   per step answered with a JSON-RPC error; next step runs
//   {"event":"elicitation","message":..,"requestedSchema":..,"mode":..,"request_id":..}
//        request_id = the inputRequests key on 2026-07-28, the JSON-RPC id of elicitation/create on 2025
//   {"event":"exception","type":..,"message":..,"code"?:..,"data"?:..}  anything else; exit status 1
//   {"event":"done"}                                     after the last step; exit status 0
// A ProtocolError raised by the client itself (output-schema validation) is an `exception`, not an
// `error`: only errors that arrived on the wire are `error` events (like py_client.py's MCPError).
//
// The client package is loaded from $MCP_TS_CLIENT_DIR (default <repo>/target/interop/ts).

import { readFileSync, appendFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

// The SDK prints diagnostics with console.debug/log (e.g. "server does not advertise tools");
// stdout is reserved for events.
for (const k of ["log", "info", "debug"]) console[k] = (...a) => console.error(...a);

const PASSTHROUGH_ENV = ["RUST_LOG", "RUST_BACKTRACE", "RUST_LIB_BACKTRACE", "LLVM_PROFILE_FILE"];

function emit(obj) {
    process.stdout.write(JSON.stringify(obj) + "\n");
}

function usage(msg) {
    process.stderr.write(`ts_client.mjs: ${msg}\n`);
    process.exit(2);
}

function parseArgs(argv) {
    const split = argv.indexOf("--");
    const own = split >= 0 ? argv.slice(0, split) : argv;
    const serverCmd = split >= 0 ? argv.slice(split + 1) : [];
    const a = {
        transport: undefined, url: undefined, mode: "auto", answer: "none",
        steps: [{ op: "list_tools" }], headers: {}, env: {}, timeout: 60, cwd: undefined,
        wire: undefined, deleteSession: false,
    };
    const kv = (s, flag) => {
        const i = s.indexOf("=");
        if (i <= 0) usage(`${flag} expects KEY=VALUE, got ${JSON.stringify(s)}`);
        return [s.slice(0, i), s.slice(i + 1)];
    };
    for (let i = 0; i < own.length; i++) {
        const flag = own[i];
        const val = () => {
            if (i + 1 >= own.length) usage(`${flag} needs a value`);
            return own[++i];
        };
        switch (flag) {
            case "--transport": a.transport = val(); break;
            case "--url": a.url = val(); break;
            case "--mode": a.mode = val(); break;
            case "--answer": a.answer = val(); break;
            case "--steps": a.steps = JSON.parse(val()); break;
            case "--header": { const [k, v] = kv(val(), flag); a.headers[k] = v; break; }
            case "--env": { const [k, v] = kv(val(), flag); a.env[k] = v; break; }
            case "--timeout": a.timeout = Number(val()); break;
            case "--cwd": a.cwd = val(); break;
            case "--wire": a.wire = val(); break;
            case "--delete-session": a.deleteSession = true; break;
            default: usage(`unknown option ${flag}`);
        }
    }
    a.transport ??= a.url !== undefined ? "http" : "stdio";
    if (a.transport === "http") {
        if (!a.url) usage("--transport http needs --url");
        if (serverCmd.length) usage("--transport http takes no server command");
    } else if (a.transport === "stdio") {
        if (!serverCmd.length) usage("missing '-- SERVER_CMD [ARGS...]'");
    } else usage(`unknown transport ${a.transport}`);
    if (!Array.isArray(a.steps)) usage("--steps must be a JSON array");
    if (!(a.timeout > 0)) usage("--timeout must be a positive number");
    if (!["none", "decline", "cancel"].includes(a.answer)) {
        const content = JSON.parse(a.answer);
        if (typeof content !== "object" || content === null || Array.isArray(content))
            usage("--answer must be a JSON object, decline, cancel or none");
        a.answer = content;
    }
    return [a, serverCmd];
}

async function loadSdk() {
    const here = path.dirname(fileURLToPath(import.meta.url));
    const dir = process.env.MCP_TS_CLIENT_DIR || path.resolve(here, "../../target/interop/ts");
    const pkgDir = path.join(dir, "node_modules", "@modelcontextprotocol", "client");
    let pkg;
    try {
        pkg = JSON.parse(readFileSync(path.join(pkgDir, "package.json"), "utf8"));
    } catch {
        throw new Error(`@modelcontextprotocol/client not found under ${dir} (run scripts/setup-node.sh)`);
    }
    const entry = (sub) => pathToFileURL(path.join(pkgDir, pkg.exports[sub].import.default)).href;
    const main = await import(entry("."));
    const stdio = await import(entry("./stdio"));
    return { ...main, StdioClientTransport: stdio.StdioClientTransport, version: pkg.version };
}

function versionNegotiation(mode) {
    if (mode === "auto" || mode === "legacy") return { options: { versionNegotiation: { mode } } };
    if (!/^\d{4}-\d{2}-\d{2}$/.test(mode)) usage(`--mode must be auto, legacy or a protocol date, got ${mode}`);
    if (mode >= "2026-07-28") return { options: { versionNegotiation: { mode: { pin: mode } } } };
    // A 2025-era date: plain initialize offering exactly that version.
    return { options: { versionNegotiation: { mode: "legacy" }, supportedProtocolVersions: [mode] } };
}

// HTTP wire log: request line, headers and body; response status, headers and body (SSE included).
function wireFetch(file) {
    writeFileSync(file, "");
    let n = 0;
    const log = (s) => appendFileSync(file, s + "\n");
    return async (url, init = {}) => {
        const id = ++n;
        const headers = new Headers(init.headers);
        log(`>> #${id} ${init.method ?? "GET"} ${url}`);
        for (const [k, v] of headers) log(`>> #${id} ${k}: ${v}`);
        if (init.body !== undefined) log(`>> #${id} ${init.body}`);
        let res;
        try {
            res = await fetch(url, init);
        } catch (e) {
            log(`<< #${id} fetch failed: ${e}`);
            throw e;
        }
        log(`<< #${id} ${res.status} ${res.statusText}`);
        for (const [k, v] of res.headers) log(`<< #${id} ${k}: ${v}`);
        res.clone().text().then(
            (t) => log(`<< #${id} body: ${t.replace(/\n/g, "\\n")}`),
            (e) => log(`<< #${id} body aborted: ${e?.name ?? e}`),
        );
        return res;
    };
}

function makeElicitationHandler(answer) {
    return async (request, ctx) => {
        const p = request.params ?? {};
        const mode = p.mode ?? "form";
        const event = {
            event: "elicitation",
            message: p.message,
            requestedSchema: p.requestedSchema ?? null,
            mode,
            // inputRequests key on 2026-07-28, JSON-RPC id on the 2025 back-channel
            request_id: ctx?.mcpReq?.id ?? request.id ?? null,
        };
        if (mode === "url") {
            event.url = p.url;
            event.elicitationId = p.elicitationId;
        }
        emit(event);
        if (answer === "decline" || answer === "cancel") return { action: answer };
        if (mode === "url") return { action: "accept" };
        return { action: "accept", content: answer };
    };
}

// Errors that arrived as JSON-RPC error responses, keyed "code\0message", to tell a server error
// from a ProtocolError the client raised itself.
const wireErrors = new Set();
const errKey = (code, message) => `${code}\u0000${message}`;

function tapErrors(transport) {
    const inner = transport.onmessage;
    transport.onmessage = (message, extra) => {
        if (message && typeof message === "object" && "error" in message && message.error)
            wireErrors.add(errKey(message.error.code, message.error.message));
        return inner?.call(transport, message, extra);
    };
}

function exceptionEvent(e) {
    const ev = { event: "exception", type: e?.name ?? typeof e, message: e instanceof Error ? e.message : String(e) };
    if (e && typeof e === "object") {
        if (e.code !== undefined) ev.code = e.code;
        if (e.data !== undefined) ev.data = e.data;
        if (e.cause !== undefined) ev.cause = e.cause instanceof Error ? e.cause.message : String(e.cause);
    }
    return ev;
}

async function runSteps(sdk, client, steps, reqOpts) {
    for (const step of steps) {
        try {
            if (step.op === "list_tools") {
                // refresh: every step reaches the server, whatever the response cache holds
                const listed = await client.listTools(undefined, { ...reqOpts, cacheMode: "refresh" });
                emit({ event: "tools", tools: listed.tools });
            } else if (step.op === "call") {
                const result = await client.callTool({ name: step.tool, arguments: step.args ?? {} }, reqOpts);
                emit({ event: "result", result });
            } else {
                throw new Error(`unknown step op ${JSON.stringify(step.op)}`);
            }
        } catch (e) {
            if (sdk.ProtocolError.isInstance(e) && wireErrors.has(errKey(e.code, e.message))) {
                emit({ event: "error", code: e.code, message: e.message, data: e.data ?? null });
            } else {
                throw e;
            }
        }
    }
}

async function main() {
    const [args, serverCmd] = parseArgs(process.argv.slice(2));
    const sdk = await loadSdk();
    const timeoutMs = Math.round(args.timeout * 1000);
    let client;
    let transport;
    const deadline = setTimeout(() => {
        emit({ event: "exception", type: "TimeoutError", message: `no completion within --timeout ${args.timeout}s` });
        Promise.race([client?.close(), new Promise((r) => setTimeout(r, 3000))]).finally(() => process.exit(1));
    }, timeoutMs);

    const neg = versionNegotiation(args.mode);
    const capabilities = {};
    if (args.answer !== "none") capabilities.elicitation = { form: {}, url: {} };
    client = new sdk.Client({ name: "mcp-resolve-ts-interop", version: sdk.version }, { capabilities, ...neg.options });
    // Transport diagnostics (SSE drops, failed GET stream…) go to stderr; the abort of the legacy GET
    // stream on close is expected and not reported.
    client.onerror = (e) => {
        if (e?.name !== "AbortError") process.stderr.write(`ts_client: onerror: ${e?.message ?? e}\n`);
    };
    if (args.answer !== "none") client.setRequestHandler("elicitation/create", makeElicitationHandler(args.answer));

    if (args.transport === "http") {
        transport = new sdk.StreamableHTTPClientTransport(new URL(args.url), {
            requestInit: { headers: args.headers },
            ...(args.wire && { fetch: wireFetch(args.wire) }),
        });
    } else {
        const env = {};
        for (const k of PASSTHROUGH_ENV) if (process.env[k] !== undefined) env[k] = process.env[k];
        Object.assign(env, args.env);
        transport = new sdk.StdioClientTransport({
            command: serverCmd[0], args: serverCmd.slice(1), env, cwd: args.cwd, stderr: "inherit",
        });
    }

    const reqOpts = { timeout: timeoutMs };
    await client.connect(transport, reqOpts);
    tapErrors(transport);
    emit({
        event: "connected",
        protocol_version: client.getNegotiatedProtocolVersion() ?? null,
        era: client.getProtocolEra() ?? null,
        server_info: client.getServerVersion() ?? null,
        capabilities: client.getServerCapabilities() ?? null,
        session_id: transport.sessionId ?? null,
    });
    await runSteps(sdk, client, args.steps, reqOpts);
    if (args.deleteSession && transport.sessionId !== undefined) await transport.terminateSession();
    await client.close();
    clearTimeout(deadline);
    emit({ event: "done" });
}

main().then(
    () => process.exit(0),
    (e) => {
        emit(exceptionEvent(e));
        process.exit(1);
    },
);
