"""A scripted stdio peer for the Rust client's own limits (no SDK: it plays a misbehaving server).

    python3 py_scripted_server.py asks-forever   # every tools/call: input_required, new state
    python3 py_scripted_server.py silent         # tools/call is never answered
    python3 py_scripted_server.py same-cursor    # tools/list: one tool, and always nextCursor "c"
    python3 py_scripted_server.py endless-pages  # tools/list: one tool, and always a new cursor
    python3 py_scripted_server.py huge           # tools/call: an answer of 2 MiB; ping: {}
    python3 py_scripted_server.py odd-result     # tools/call: resultType "task" (unknown to a client
                                                 # without the tasks extension)

Both answer server/discover as a 2026-07-28 server. Every line received is echoed to stderr
(prefixed "got: "), so a test can see what the client sent (retries, notifications/cancelled).
"""

import json
import sys

mode = sys.argv[1]
n = 0
for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    print("got: " + line, file=sys.stderr, flush=True)
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue
    meta = {"io.modelcontextprotocol/serverInfo": {"name": "scripted", "version": "0"}}
    if msg["method"] == "server/discover":
        result = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                  "resultType": "complete", "ttlMs": 0, "cacheScope": "private", "_meta": meta}
    elif msg["method"] == "tools/call" and mode == "asks-forever":
        n += 1
        result = {"resultType": "input_required", "requestState": f"s{n}",
                  "inputRequests": {"again": {"method": "elicitation/create", "params": {
                      "message": f"round {n}", "requestedSchema": {"type": "object", "properties": {
                          "ok": {"type": "boolean"}}}}}}}
    elif msg["method"] == "tools/call" and mode == "silent":
        continue
    elif msg["method"] == "tools/list" and mode in ("same-cursor", "endless-pages"):
        n += 1
        cursor = "c" if mode == "same-cursor" else f"c{n}"
        result = {"tools": [{"name": f"t{n}", "inputSchema": {"type": "object"}}], "nextCursor": cursor,
                  "resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
    elif msg["method"] == "tools/call" and mode == "huge":
        result = {"content": [{"type": "text", "text": "x" * (2 << 20)}], "resultType": "complete"}
    elif msg["method"] == "ping" and mode == "huge":
        result = {"resultType": "complete"}
    elif msg["method"] == "tools/call" and mode == "odd-result":
        result = {"resultType": "task", "task": {"taskId": "t1"}}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"],
                          "error": {"code": -32601, "message": "Method not found"}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
