/**
 * npx behind a TLS-inspecting gateway, with real npm: a registry on 127.0.0.1 whose certificate no CA Node knows signed
 * (as a company proxy's is), serving a real package (the stdio fixture, bundled). Without pi's trust of that
 * certificate, npx fails for good with the fix named; with pi's npm settings saying to trust it (`npm_config_cafile` in
 * pi's environment, which the bridge passes on), the server downloads, starts and answers.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { bundledFixture } from "./fixture-bundle.ts";
import { connectFailure, connectionFor, REPO_ROOT, tempDir } from "./helpers.ts";
import { runTool, toolsOf } from "./pi-tools.ts";

const PACKAGE = "mcp-bridge-tls-fixture";

describe("npx from a registry whose certificate no known CA signed", { timeout: 180_000 }, () => {
  const tmp = tempDir();
  const cert = path.join(tmp.dir, "cert.pem");
  let registry: Server;
  let url: string;
  after(() => tmp.cleanup());

  before(async () => {
    const key = path.join(tmp.dir, "key.pem");
    const request = "req -x509 -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -days 1 -addext subjectAltName=IP:127.0.0.1";
    execFileSync("openssl", [...request.split(" "), "-keyout", key, "-out", cert], {
      stdio: "ignore",
      timeout: 60_000,
    });
    const tarball = fixturePackage(path.join(tmp.dir, "pkg"));
    const bytes = readFileSync(tarball);
    registry = createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
      if (req.url === `/${PACKAGE}`) {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify(packument(bytes)));
      } else if (req.url === `/${PACKAGE}/-/${PACKAGE}-1.0.0.tgz`) res.end(bytes);
      else res.writeHead(404).end("{}");
    });
    await new Promise<void>((resolve) => registry.listen(0, "127.0.0.1", resolve));
    url = `https://127.0.0.1:${(registry.address() as AddressInfo).port}/`;
  });

  after(async () => {
    registry.closeAllConnections();
    await new Promise((resolve) => registry.close(resolve));
  });

  function packument(bytes: Buffer) {
    return {
      name: PACKAGE,
      "dist-tags": { latest: "1.0.0" },
      versions: {
        "1.0.0": {
          name: PACKAGE,
          version: "1.0.0",
          bin: { [PACKAGE]: "server.mjs" },
          dist: {
            tarball: `${url}${PACKAGE}/-/${PACKAGE}-1.0.0.tgz`,
            shasum: createHash("sha1").update(bytes).digest("hex"),
            integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`,
          },
        },
      },
    };
  }

  /** The server's entry: npx from the registry, into a cache of the test's own. */
  function entry(cache: string) {
    return {
      command: "npx",
      args: ["-y", PACKAGE],
      env: { npm_config_cache: cache, npm_config_fetch_retries: "0", npm_config_update_notifier: "false" },
      reconnect: { maxAttempts: 2, initialDelayMs: 100, maxDelayMs: 200 },
      initTimeout: 120_000,
    };
  }

  test("not trusted: fails for good at its first start, naming NODE_EXTRA_CA_CERTS and npm's cafile", async () => {
    const connection = connectionFor("tls", entry(path.join(tmp.dir, "cache-1")), {
      env: { ...process.env, npm_config_registry: url },
    });
    const { message } = await connectFailure(connection);
    assert.match(
      message,
      /npx could not download its package: npm does not trust the registry's certificate \(npm (DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)\).*start pi with NODE_EXTRA_CA_CERTS set to that CA's PEM file.*Restarting would not help/,
    );
  });

  test("trusted by pi's npm settings (npm_config_cafile in pi's environment): npx downloads it and it answers", async () => {
    const connection = connectionFor("tls", entry(path.join(tmp.dir, "cache-2")), {
      env: { ...process.env, npm_config_registry: url, npm_config_cafile: cert },
    });
    try {
      await connection.connect();
      assert.equal(connection.status, "connected", connection.lastError);
      const echo = await runTool(toolsOf(connection).get("mcp_tls_echo"), { text: "through the gateway" });
      assert.equal(echo.text, "through the gateway");
    } finally {
      await connection.close();
    }
  });
});

/** The stdio fixture as an npm package (one bundled file, no dependencies), packed as npm packs: `package/` in a tgz. */
function fixturePackage(dir: string): string {
  const root = path.join(dir, "package");
  mkdirSync(root, { recursive: true });
  const server = path.join(root, "server.mjs");
  const bundle = readFileSync(bundledFixture(path.join(REPO_ROOT, "test", "fixtures", "stdio-server.ts")), "utf8");
  writeFileSync(server, `#!/usr/bin/env node\n${bundle}`);
  chmodSync(server, 0o755);
  const manifest = { name: PACKAGE, version: "1.0.0", bin: { [PACKAGE]: "server.mjs" } };
  writeFileSync(path.join(root, "package.json"), JSON.stringify(manifest));
  const tarball = path.join(dir, `${PACKAGE}-1.0.0.tgz`);
  execFileSync("tar", ["czf", tarball, "-C", dir, "package"]);
  return tarball;
}
