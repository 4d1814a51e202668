// A bare JSON-RPC stdio server (no SDK, so it costs almost no CPU to start) that takes START_DELAY_MS to answer
// `initialize`: startup time is then waiting, not CPU, and the benchmark sees how the bridge overlaps it. With
// START_GATE (a file path) it answers once that file exists instead: a test decides when the server is ready.
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";

const delay = Number(process.env.START_DELAY_MS ?? 300);
const gate = process.env.START_GATE;
/** Calls `then` once the server may answer `initialize`. */
function whenReady(then) {
  if (!gate) return void setTimeout(then, delay);
  const check = setInterval(() => {
    if (!existsSync(gate)) return;
    clearInterval(check);
    then();
  }, 20);
}
const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
const tools = [{ name: "echo", inputSchema: { type: "object", properties: { text: { type: "string" } } } }];

createInterface({ input: process.stdin }).on("line", (line) => {
  const message = JSON.parse(line);
  if (message.id === undefined) return;
  switch (message.method) {
    case "initialize":
      whenReady(() =>
        send({
          id: message.id,
          result: {
            protocolVersion: message.params.protocolVersion,
            capabilities: { tools: {} },
            serverInfo: { name: "slow-start", version: "1" },
          },
        }),
      );
      break;
    case "tools/list":
      send({ id: message.id, result: { tools } });
      break;
    case "tools/call":
      send({
        id: message.id,
        result: { content: [{ type: "text", text: String(message.params.arguments?.text ?? "") }] },
      });
      break;
    default:
      send({ id: message.id, error: { code: -32601, message: "Method not found" } });
  }
});
