// Drives a toolenv MCP server with the official TypeScript SDK
// (@modelcontextprotocol/sdk, pinned in testdata/npm) over streamable HTTP
// or stdio, and prints a JSON report of what it saw: every protocol
// deviation the SDK detects (its zod schemas check each message, its Ajv
// checks each structured result against the tool's outputSchema) or this
// script checks is a problem. Run by TestMCPTypeScriptSDK.
//
//   node sdk-check.mjs '<config JSON>'
//
// config: {transport: "http", url} or {transport: "stdio", command, args, env},
// and {call: {name, args}, invalid: {name, args, param}, searchTools: bool,
// minTools: n, collection: name}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LoggingMessageNotificationSchema, McpError } from "@modelcontextprotocol/sdk/types.js";

const cfg = JSON.parse(process.argv[2]);
const problems = [];
const fail = (msg) => problems.push(msg);
const report = { transport: cfg.transport };

const transport =
  cfg.transport === "http"
    ? new StreamableHTTPClientTransport(new URL(cfg.url))
    : new StdioClientTransport({
        command: cfg.command,
        args: cfg.args,
        env: { ...getDefaultEnvironment(), ...cfg.env },
        stderr: "pipe",
      });
let stderr = "";
if (cfg.transport === "stdio") {
  transport.stderr?.on("data", (d) => (stderr += d));
}
const client = new Client({ name: "toolenv-sdk-check", version: "1.0.0" }, { capabilities: {} });
client.onerror = (e) => fail(`client error: ${e?.message ?? e}`);
const logs = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));

const errorCode = async (what, fn) => {
  try {
    await fn();
    fail(`${what}: no error`);
    return 0;
  } catch (e) {
    if (!(e instanceof McpError)) {
      fail(`${what}: not a JSON-RPC error: ${e}`);
      return 0;
    }
    return e.code;
  }
};

try {
  await client.connect(transport);
  report.server = client.getServerVersion();
  report.protocolVersion = cfg.transport === "http" ? transport.protocolVersion : undefined;
  const caps = client.getServerCapabilities() ?? {};
  report.capabilities = Object.keys(caps).sort();
  if (!caps.tools?.listChanged) fail("capabilities: no tools.listChanged");
  if (!caps.resources?.subscribe) fail("capabilities: no resources.subscribe");
  if (!caps.logging) fail("capabilities: no logging");
  if (caps.prompts || caps.completions) fail("capabilities: prompts or completions declared");

  await client.ping();

  // Every page of tools/list.
  const names = [];
  let cursor;
  let pages = 0;
  let first = [];
  do {
    const r = await client.listTools(cursor ? { cursor } : undefined);
    pages++;
    if (pages === 1) first = r.tools.map((t) => t.name);
    names.push(...r.tools.map((t) => t.name));
    cursor = r.nextCursor;
    if (pages > 1000) throw new Error("more than 1000 pages");
  } while (cursor);
  report.pages = pages;
  report.tools = names.length;
  report.firstPageStart = first.slice(0, 2);
  if (new Set(names).size !== names.length) fail("tools/list: a name is listed twice");
  if (names.length < cfg.minTools) fail(`tools/list: ${names.length} tools, want at least ${cfg.minTools}`);
  if (cfg.searchTools && first[0] !== "search_tools") fail(`the first page starts with ${first[0]}, not search_tools`);
  // listTools() as MCP Inspector calls it: page 1 only.
  const page1 = await client.listTools();
  if (cfg.searchTools && !page1.tools.some((t) => t.name === "search_tools")) fail("listTools() without a cursor does not show search_tools");

  // A successful call (the SDK checks structuredContent against the
  // tool's outputSchema, if it has one).
  const ok = await client.callTool({ name: cfg.call.name, arguments: cfg.call.args });
  report.callOK = { isError: ok.isError ?? false, structured: ok.structuredContent !== undefined, meta: ok._meta?.["toolenv/status"] };
  if (ok.isError) fail(`${cfg.call.name}: isError: ${JSON.stringify(ok.content)}`);
  if (ok.content?.[0]?.type !== "text" || !ok.content[0].text) fail(`${cfg.call.name}: no text content`);
  report.hasOutputSchema = page1.tools.concat([]).some((t) => t.name === cfg.call.name && t.outputSchema);

  // Every tool of the first page with an outputSchema, called: what comes
  // back either conforms or is an error result.
  let withSchema = 0;
  for (const t of page1.tools.filter((t) => t.outputSchema && t.name !== "search_tools").slice(0, cfg.schemaCalls ?? 0)) {
    withSchema++;
    const r = await client.callTool({ name: t.name, arguments: cfg.argsFor?.[t.name] ?? cfg.call.args });
    if (r.isError) fail(`${t.name}: isError: ${r.content?.[0]?.text?.slice(0, 300)}`);
  }
  report.schemaCalls = withSchema;

  // A validation error is a result the model reads, naming the argument.
  const bad = await client.callTool({ name: cfg.invalid.name, arguments: cfg.invalid.args });
  if (!bad.isError || !bad.content?.[0]?.text?.includes(cfg.invalid.param)) fail(`invalid arguments: ${JSON.stringify(bad)}`);

  // An unknown tool is a JSON-RPC invalid-params error.
  report.unknownToolCode = await errorCode("unknown tool", () => client.callTool({ name: "no_such_tool_anywhere", arguments: {} }));

  if (cfg.searchTools) {
    const s = await client.callTool({ name: "search_tools", arguments: { query: cfg.searchQuery, limit: 3 } });
    if (s.isError || !Array.isArray(s.structuredContent?.tools) || s.structuredContent.tools.length === 0) fail(`search_tools: ${JSON.stringify(s).slice(0, 300)}`);
  }

  // Resources: the documentation of the collection and of the tool.
  const res = await client.listResources();
  report.resources = res.resources.map((r) => r.uri);
  const doc = await client.readResource({ uri: `toolenv://collections/${cfg.collection}` });
  if (!doc.contents?.[0]?.text?.includes(`## ${cfg.call.name}`)) fail("the collection's documentation does not name the tool");
  const tmpl = await client.listResourceTemplates();
  if (tmpl.resourceTemplates?.[0]?.uriTemplate !== "toolenv://tools/{collection}/{tool}") fail(`resource templates: ${JSON.stringify(tmpl)}`);
  const tdoc = await client.readResource({ uri: `toolenv://tools/${cfg.collection}/${cfg.call.name}` });
  if (JSON.parse(tdoc.contents[0].text).name !== cfg.call.name) fail("the tool's documentation");
  await client.subscribeResource({ uri: `toolenv://collections/${cfg.collection}` });
  await client.unsubscribeResource({ uri: `toolenv://collections/${cfg.collection}` });

  // Logging: messages about the client's own call, once it set a level.
  await client.setLoggingLevel("debug");
  await client.callTool({ name: cfg.call.name, arguments: cfg.call.args });
  for (let i = 0; i < 100 && logs.length < 2; i++) await new Promise((r) => setTimeout(r, 50));
  report.logs = logs.map((l) => l.level);
  if (!logs.some((l) => l.level === "debug") || !logs.some((l) => l.level === "info")) fail(`logging: ${JSON.stringify(logs)}`);

  // What is not declared is not answered.
  report.promptsCode = await errorCode("prompts/list", () => client.listPrompts());

  if (cfg.transport === "http") {
    const sid = transport.sessionId;
    if (!sid) fail("no Mcp-Session-Id");
    await transport.terminateSession();
    if (transport.sessionId !== undefined) fail("terminateSession left a session id");
    const after = await fetch(cfg.url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", "Mcp-Session-Id": sid, "Mcp-Protocol-Version": report.protocolVersion },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    report.afterTerminate = after.status;
    const body = await after.json().catch(() => null);
    if (after.status !== 404 || body?.jsonrpc !== "2.0" || typeof body?.error?.code !== "number") fail(`after terminateSession: ${after.status} ${JSON.stringify(body)}`);
  }
  await client.close();
} catch (e) {
  fail(`exception: ${e?.stack ?? e}`);
}
report.problems = problems;
if (problems.length && stderr) report.stderr = stderr.slice(-2000);
console.log(JSON.stringify(report));
process.exit(0);
