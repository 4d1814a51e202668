// @ts-check
/**
 * The floor of any relay process, for ./figures/shared.ts: it answers a session's attach line as the hub does
 * (src/connection/hub/hub.mjs), starts the server it names, and from then on passes bytes through both ways, parsing
 * nothing (one session per server, no ids rewritten). A call through it against the same call through the hub shows
 * what the hub's own code adds to the extra hop.
 *
 * Usage: node byte-relay.mjs <dir>   (listens on <dir>/hub.sock; writes its pid to <dir>/hub.lock once it listens)
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";

const dir = process.argv[2];
if (!dir) {
  process.stderr.write("usage: node byte-relay.mjs <dir>\n");
  process.exit(2);
}
fs.mkdirSync(dir, { recursive: true, mode: 0o700 });

/** @param {net.Socket} socket */
function relay(socket) {
  let head = Buffer.alloc(0);
  /** @param {Buffer} chunk */
  const onHead = (chunk) => {
    head = Buffer.concat([head, chunk]);
    const newline = head.indexOf(10);
    if (newline < 0) return;
    socket.off("data", onHead);
    socket.pause();
    const { spec } = JSON.parse(head.subarray(0, newline).toString("utf8"));
    const child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      stdio: ["pipe", "pipe", "ignore"],
      detached: true,
    });
    child.once("spawn", () => {
      socket.write(`${JSON.stringify({ hub: "attached", pid: child.pid, sessions: 1 })}\n`);
      const rest = head.subarray(newline + 1);
      if (rest.length > 0) child.stdin.write(rest);
      socket.on("data", (data) => child.stdin.write(data));
      child.stdout.on("data", (data) => socket.write(data));
      socket.resume();
    });
    child.stdin.on("error", () => undefined);
    socket.on("close", () => child.kill());
  };
  socket.on("data", onHead);
  socket.on("error", () => undefined);
}

net.createServer(relay).listen(path.join(dir, "hub.sock"), () => {
  fs.writeFileSync(path.join(dir, "hub.lock"), String(process.pid));
});
process.on("SIGTERM", () => process.exit(0));
