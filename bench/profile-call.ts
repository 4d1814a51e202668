/**
 * Where a tool call's time goes: N calls one after another through the bridge's path (as ./figures/calls.ts makes
 * it) or through a bare SDK v2 client, profiled after set-up and warm-up (as `node --cpu-prof` would, without the
 * loading), the profile written to PROFILE (default /tmp/<side>-<kind>.cpuprofile), with the CPU time a call took.
 * With `concurrent` above 1 the calls go in bursts of that many at once, as the throughput figure sends them (what
 * costs there is what a call holds while it waits: its frames, closures, timers and listeners).
 *
 * Run: node --import tsx bench/profile-call.ts bridge|sdk [stdio|http] [calls] [concurrent]
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { bridgeSide, httpServer, type Side, sdkSide } from "./figures/calls.ts";

const SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "examples", "hello-server.mjs");
const [side = "bridge", kind = "stdio", count = "20000", concurrent = "1"] = process.argv.slice(2);
const http = kind === "http" ? await httpServer() : undefined;
const entry = http ? { url: http.url } : { command: process.execPath, args: [SERVER] };
const made: Side =
  side === "bridge"
    ? await bridgeSide(entry)
    : await sdkSide(
        http
          ? new StreamableHTTPClientTransport(new URL(http.url))
          : new StdioClientTransport({ command: process.execPath, args: [SERVER], stderr: "ignore" }),
      );
const width = Math.max(1, Number(concurrent));
const run = async (calls: number) => {
  for (let i = 0; i < calls; i += width) {
    await Promise.all(Array.from({ length: Math.min(width, calls - i) }, () => made.call()));
  }
};
await run(width === 1 ? 500 : 5 * width);
const inspector = new Session();
inspector.connect();
await inspector.post("Profiler.enable");
await inspector.post("Profiler.start");
const cpu = process.cpuUsage();
await run(Number(count));
const used = process.cpuUsage(cpu);
const { profile } = await inspector.post("Profiler.stop");
writeFileSync(process.env.PROFILE ?? `/tmp/${side}-${kind}.cpuprofile`, JSON.stringify(profile));
console.log(`${side} ${kind}: ${((used.user + used.system) / Number(count)).toFixed(0)} µs of CPU a call`);
await made.close();
http?.close();
