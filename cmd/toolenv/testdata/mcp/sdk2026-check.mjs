// Drives a toolenv MCP server over streamable HTTP with the official
// TypeScript SDK's v2 client (@modelcontextprotocol/client, pinned in
// testdata/npm), pinned to the sessionless revision 2026-07-28, and prints
// a JSON report: every deviation the SDK detects (it checks each message
// against its schemas) or this script checks is a problem. Run by
// TestMCPTypeScriptSDK2026.
//
//   node sdk2026-check.mjs '<config JSON>'
//
// config: {url, call: {name, args, want}, unknown: name, elicit: {name,
// args, content, want} (a tool that asks for input: the client accepts,
// answering content)}.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const cfg = JSON.parse(process.argv[2]);
const problems = [];
const fail = (msg) => problems.push(msg);
const report = {};

const client = new Client(
  { name: "toolenv-sdk2026-check", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
);
client.onerror = (e) => fail(`client error: ${e?.message ?? e}`);
let asked = 0;
client.setRequestHandler("elicitation/create", async () => {
  asked++;
  return { action: "accept", content: cfg.elicit?.content ?? {} };
});

const text = (res) => (res?.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

try {
  await client.connect(new StreamableHTTPClientTransport(new URL(cfg.url)));
  report.protocol = client.getNegotiatedProtocolVersion();
  if (report.protocol !== "2026-07-28") fail(`negotiated ${report.protocol}, want 2026-07-28`);
  const { tools } = await client.listTools();
  report.tools = tools.length;
  if (cfg.call) {
    const res = await client.callTool({ name: cfg.call.name, arguments: cfg.call.args });
    report.call = text(res);
    if (res.isError || !report.call.includes(cfg.call.want)) fail(`call ${cfg.call.name}: ${JSON.stringify(res).slice(0, 400)}`);
  }
  if (cfg.unknown) {
    let refused = false;
    try {
      await client.callTool({ name: cfg.unknown, arguments: {} });
    } catch (e) {
      refused = true;
      report.unknownCode = e?.code;
      if (e?.code !== -32602) fail(`unknown tool: code ${e?.code}: ${e?.message}`);
    }
    if (!refused) fail(`calling the unknown tool ${cfg.unknown} did not fail`);
  }
  if (cfg.elicit) {
    const res = await client.callTool({ name: cfg.elicit.name, arguments: cfg.elicit.args });
    report.elicit = text(res);
    report.asked = asked;
    if (res.isError || !report.elicit.includes(cfg.elicit.want)) fail(`elicitation through ${cfg.elicit.name}: ${JSON.stringify(res).slice(0, 400)}`);
    if (asked !== 1) fail(`the client was asked ${asked} times, want once`);
  }
} catch (e) {
  fail(`exception: ${e?.stack ?? e}`);
} finally {
  try {
    await client.close();
  } catch {}
}
report.problems = problems;
process.stdout.write(JSON.stringify(report));
