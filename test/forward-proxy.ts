/**
 * A company proxy on 127.0.0.1 for tests: CONNECT tunnels and requests in absolute form, each host it was asked for
 * recorded. With `port` it takes every host to that port on 127.0.0.1 (a name only the proxy reaches); without, to the
 * host asked for (the way out to the npm registry).
 */
import { createServer, request } from "node:http";
import { type AddressInfo, connect } from "node:net";

export async function forwardProxy(port?: number) {
  const asked: string[] = [];
  const proxy = createServer((req, res) => {
    const target = new URL(req.url ?? "/");
    asked.push(target.host);
    const upstream = request(
      {
        host: port ? "127.0.0.1" : target.hostname,
        port: port ?? target.port,
        path: target.pathname + target.search,
        method: req.method,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  proxy.on("connect", (req, client, head) => {
    asked.push(req.url ?? "");
    const [host = "", hostPort = ""] = (req.url ?? "").split(/:(?=\d+$)/);
    const upstream = connect(port ?? Number(hostPort), port ? "127.0.0.1" : host, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    asked,
    close: () => {
      proxy.closeAllConnections();
      return new Promise((resolve) => proxy.close(resolve));
    },
  };
}
