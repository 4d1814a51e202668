/**
 * The keep-alive race (src/connection/http/unread-request.ts) for requests that waited for a free connection: more
 * requests at once than a server's pool holds, through the pool itself, against a server that resets each connection
 * at its second request without reading it. Every request must still be answered once: the ones that waited meet the
 * reset on a connection an earlier request freed, and are sent again like any other.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { test } from "node:test";
import { MAX_CONNECTIONS_PER_SERVER, ServerPool } from "../src/connection/http/http-pool.ts";

async function body(req: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of req) text += chunk;
  return text;
}

test("requests that waited for a free connection and met an unread reset are sent again, each answered once", async () => {
  const served = new Map<Socket, number>();
  const answered: string[] = [];
  let resets = 0;
  const server = createServer(async (req, res) => {
    const count = (served.get(req.socket) ?? 0) + 1;
    served.set(req.socket, count);
    // The server's kernel resets a connection closed with bytes unread: the client got nothing of an answer.
    if (count === 2) return void (resets++, req.socket.resetAndDestroy());
    const text = await body(req);
    answered.push(text);
    res.writeHead(200, { "content-type": "application/json" }).end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`;
  const pool = new ServerPool();
  try {
    const count = MAX_CONNECTIONS_PER_SERVER + 36;
    const bodies = Array.from({ length: count }, (_, n) => JSON.stringify({ n }));
    const send = (text: string) => pool.fetch(url, { method: "POST", body: text }).then((r) => r.text());
    assert.deepEqual(await Promise.all(bodies.map(send)), bodies);
    assert.ok(resets >= 1, "some requests waited for a connection and met the reset");
    assert.deepEqual([...answered].sort(), [...bodies].sort(), "each answered once");
  } finally {
    await pool.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
