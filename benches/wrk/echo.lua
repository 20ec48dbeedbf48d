-- wrk script of benches/wrk.sh: a stateless 2026-07-28 `tools/call` of `echo` over Streamable HTTP,
-- counting every answer that is not a 200 carrying "hello" (printed as BAD at the end).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "echo"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"0"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{},"url":{}}}}}}'
local bad = 0
response = function(status, headers, body)
  if status ~= 200 or not string.find(body, "hello", 1, true) then bad = bad + 1 end
end
done = function(summary, latency, requests)
  io.write(string.format("BAD %d\n", bad))
end
