#!/usr/bin/env node
// Prints pi's JSON event stream (`pi --mode json ...`, read from stdin) as a short transcript: the prompt, each tool
// call pi runs with its arguments and result, and the model's answers. `npm run demo:agent` pipes pi into it.
// Exits 1 if pi stops before the agent has finished (pi's own messages, on stderr, say why).
import { createInterface } from "node:readline";

const WIDTH = "tool result  ".length;

function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((c) => (c?.type === "text" ? c.text : c?.type === "image" ? `[image, ${c.mimeType}]` : ""))
    .filter(Boolean)
    .join("\n");
}

function show(label, text) {
  const [first = "", ...more] = String(text).split("\n");
  console.log(label.padEnd(WIDTH) + first);
  for (const line of more) console.log(" ".repeat(WIDTH) + line);
}

let finished = false;
for await (const line of createInterface({ input: process.stdin })) {
  let event;
  try {
    event = JSON.parse(line);
  } catch {
    console.log(line);
    continue;
  }
  if (event.type === "message_end" && event.message?.role === "user") show("prompt", textOf(event.message.content));
  if (event.type === "tool_execution_start") show("tool call", `${event.toolName} ${JSON.stringify(event.args)}`);
  if (event.type === "tool_execution_end")
    show(event.isError ? "tool error" : "tool result", textOf(event.result?.content));
  if (event.type === "message_end" && event.message?.role === "assistant") {
    const text = textOf(event.message.content);
    if (text) show("answer", text);
    if (event.message.errorMessage) show("model error", event.message.errorMessage);
  }
  if (event.type === "agent_end") finished = true;
}
if (!finished) {
  console.error("pi stopped before the agent finished; its messages above say why.");
  process.exitCode = 1;
}
