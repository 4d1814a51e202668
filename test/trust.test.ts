/**
 * Project trust's pure part (fingerprints, states, what the user is shown) and its store on disk.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import { fileLock } from "../src/common/atomic-file.ts";
import { visible } from "../src/common/terminal-text.ts";
import { McpBridge } from "../src/bridge/mcp-bridge.ts";
import { ProjectTrust } from "../src/trust/project-trust.ts";
import {
  describeForTrust,
  needsTrust,
  trustAfterWrite,
  trustFingerprint,
  trustNotRecorded,
  trustQuestion,
  trustState,
  withAnswer,
} from "../src/trust/trust-rules.ts";
import { TrustStore } from "../src/trust/trust-store.ts";
import type { ConfigScope, ServerConfig } from "../src/config/types.ts";
import { validateServerEntry } from "../src/config/validate/entry.ts";
import { addToServerList, setServerEntry, setServerField } from "../src/config/write/server-edits.ts";
import { tempDir, trustFile } from "./helpers.ts";

function config(entry: Record<string, unknown>, name = "srv", scope: ConfigScope = "project"): ServerConfig {
  const result = validateServerEntry(name, entry, { scope, path: `/p/${scope}.json` });
  if (!result.config) throw new Error(result.errors.join("; "));
  return result.config;
}

const LOCAL = {
  command: "npx",
  args: ["-y", "pkg", "${ROOT}"],
  env: { TOKEN: "${MY_TOKEN}", MODE: "prod" },
  cwd: "./tools",
};
const REMOTE = { url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer ${GH_TOKEN}" } };

describe("trust fingerprint", () => {
  test("only a project's own file needs trust", () => {
    assert.equal(needsTrust(config(LOCAL)), true);
    for (const scope of ["flag", "user", "bundled"] as const)
      assert.equal(needsTrust(config(LOCAL, "srv", scope)), false, scope);
  });

  test("changes with what runs or where data goes: command, args, env, cwd, url, headers, type, OAuth endpoints, tools run unasked", () => {
    const base = trustFingerprint(config(LOCAL));
    const changes: Record<string, unknown>[] = [
      { ...LOCAL, command: "uvx" },
      { ...LOCAL, args: ["-y", "pkg", "/"] },
      { ...LOCAL, env: { ...LOCAL.env, EXTRA: "1" } },
      { ...LOCAL, env: { ...LOCAL.env, TOKEN: "${OTHER}" } },
      { ...LOCAL, cwd: "/" },
      // A project that could widen what runs without asking would not need its command changed to do harm.
      { ...LOCAL, autoApprove: ["*"] },
      { ...LOCAL, autoApproveReadOnly: true },
      { ...LOCAL, sampling: "allow" },
      // A call sent again after a drop may run a second time: the project's word for that is trusted like autoApprove.
      { ...LOCAL, resendAfterDrop: ["*"] },
    ];
    for (const changed of changes) assert.notEqual(trustFingerprint(config(changed)), base, JSON.stringify(changed));
    const remote = trustFingerprint(config(REMOTE));
    const remoteChanges: Record<string, unknown>[] = [
      { ...REMOTE, url: "https://evil.example.com/mcp" },
      { ...REMOTE, headers: { Authorization: "Bearer ${AWS_SECRET_ACCESS_KEY}" } },
      { ...REMOTE, type: "sse" },
    ];
    for (const changed of remoteChanges)
      assert.notEqual(trustFingerprint(config(changed)), remote, JSON.stringify(changed));
    const oauthEndpoints = {
      tokenUrl: "https://evil.example.com/token",
      authorizationUrl: "https://evil.example.com/auth",
    };
    assert.notEqual(
      trustFingerprint(config({ url: REMOTE.url, auth: oauthEndpoints })),
      trustFingerprint(config({ url: REMOTE.url })),
      "OAuth endpoints",
    );
  });

  test("does not change with key order, timeouts, lazy, prefix or enabled", () => {
    const base = trustFingerprint(config(LOCAL));
    const reordered = {
      cwd: LOCAL.cwd,
      env: { MODE: "prod", TOKEN: "${MY_TOKEN}" },
      args: LOCAL.args,
      command: LOCAL.command,
    };
    assert.equal(trustFingerprint(config(reordered)), base);
    assert.equal(
      trustFingerprint(
        config({ ...LOCAL, initTimeout: 5000, lazy: true, prefix: "x", enabled: false, requestTimeout: 1000 }),
      ),
      base,
    );
  });

  test("state against the recorded answers: new, trusted, declined, changed", () => {
    const srv = config(LOCAL);
    assert.equal(trustState(srv, new Map()), "new");
    assert.equal(trustState(srv, withAnswer(new Map(), [srv], true)), "trusted");
    assert.equal(trustState(srv, withAnswer(new Map(), [srv], false)), "declined");
    assert.equal(trustState(config({ ...LOCAL, args: ["other"] }), withAnswer(new Map(), [srv], true)), "changed");
    assert.equal(
      trustState(config(LOCAL, "another"), withAnswer(new Map(), [srv], true)),
      "new",
      "answers are per server name",
    );
  });
});

describe("trust fingerprint and the sandbox", () => {
  const rules = (allowWrite: string[]) => ({ filesystem: { allowWrite }, network: { allowedDomains: [] } });

  test('`"sandbox": false` hashes as no setting: answers given before `sandbox` existed stand', () => {
    assert.equal(trustFingerprint(config({ ...LOCAL, sandbox: false })), trustFingerprint(config(LOCAL)));
  });

  test("a project that widens its sandbox rules, or drops them for false, is asked again", () => {
    const narrow = config({ ...LOCAL, sandbox: rules([]) });
    const hashes = [narrow, config({ ...LOCAL, sandbox: rules(["/etc"]) }), config({ ...LOCAL, sandbox: false })].map(
      trustFingerprint,
    );
    assert.equal(new Set(hashes).size, 3);
    assert.equal(
      trustState(config({ ...LOCAL, sandbox: false }), withAnswer(new Map(), [narrow], true, true)),
      "changed",
    );
  });

  test("trusted sandboxed: recorded for a local server only; a write by the user keeps it sandboxed", () => {
    const local = config(LOCAL);
    const remote = config(REMOTE, "web");
    const answers = withAnswer(new Map(), [local, remote], true, true);
    assert.equal(answers.get("srv")?.sandboxed, true);
    assert.equal(answers.get("web")?.sandboxed, undefined, "a remote server has no process to sandbox");
    const edited = config({ ...LOCAL, autoApprove: ["greet"] });
    assert.equal(trustAfterWrite([local], [edited], answers, new Set()).get("srv")?.sandboxed, true);
  });
});

describe("what the user is shown", () => {
  test("a local server: its command line, directory, env names and the variables it reads — never values", () => {
    const lines = describeForTrust(
      config({
        ...LOCAL,
        args: [...LOCAL.args, "two words", "it's"],
        env: { ...LOCAL.env, KEY: "sk-live-inline-secret" },
      }),
    );
    assert.deepEqual(lines, [
      `runs: npx -y pkg \${ROOT} 'two words' 'it'\\''s'`,
      "in: ./tools",
      "env: TOKEN ← ${MY_TOKEN}, MODE (inline), KEY (inline)",
      "reads your variables: ${ROOT}, ${MY_TOKEN}",
    ]);
    assert.doesNotMatch(lines.join("\n"), /sk-live|prod/);
  });

  test("the tools a server would run without asking", () => {
    const lines = describeForTrust(
      config({
        ...LOCAL,
        autoApprove: ["*"],
        autoApproveReadOnly: true,
        sampling: "allow",
        resendAfterDrop: ["get_*"],
      }),
    );
    assert.ok(lines.includes("sent again after a dropped connection, though it may have run: get_*"), lines.join("\n"));
    assert.ok(lines.includes("may have your model answer it without asking (sampling)"), lines.join("\n"));
    assert.ok(lines.includes("runs without asking: *"), lines.join("\n"));
    assert.ok(lines.includes("runs without asking: the tools it marks read-only"), lines.join("\n"));
  });

  test("a local server's command line hides the values of secret-looking flags, as /mcp import's list does", () => {
    const lines = describeForTrust(
      config({
        ...LOCAL,
        args: ["-y", "pkg", "--api-key", "sk-live-inline-9f3c", "--token=ghp_inline7a1b", "--port", "8080"],
      }),
    );
    assert.equal(lines[0], "runs: npx -y pkg --api-key *** --token=*** --port 8080");
    const quoted = describeForTrust(config({ ...LOCAL, args: ["--password", "it's-s3cret-77"] }));
    assert.equal(quoted[0], "runs: npx --password ***", "a quote in it does not hide it from the redaction");
  });

  test("a URL argument (mcp-remote's) and a `NAME=value` one (docker's -e) are shown as `url` and `env` values are", () => {
    const key = "NjNkNTc4ZDMtMjA0Zi00MjEzLWJhMmEtODJhZjRkNjU4NDI2OjE2Yzk0Zm==";
    const args = [
      "-y",
      "mcp-remote",
      `https://mcp.zapier.com/api/mcp/s/${key}/sse`,
      "https://u:pw-9f8e@h.example/mcp?api_key=sk-live-abc123&k=${K}",
    ];
    const lines = describeForTrust(
      config({
        ...LOCAL,
        args: [...args, "-e", "GITHUB_TOKEN=ghp_abc123def456", "-e", "LOG_LEVEL=debug", "TOKEN=${T}"],
      }),
    );
    assert.equal(
      lines[0],
      "runs: npx -y mcp-remote https://mcp.zapier.com/api/mcp/s/***/sse https://u:***@h.example/mcp?api_key=…&k=${K} -e GITHUB_TOKEN=*** -e LOG_LEVEL=debug TOKEN=${T}",
    );
  });

  test("a remote server: its URL without a password or inline query values, header names, OAuth endpoints", () => {
    const lines = describeForTrust(
      config({
        url: "https://user:hunter22@mcp.example.com/mcp?key=${API_KEY}&session=abc123secret",
        headers: { Authorization: "Bearer ${GH_TOKEN}", "X-Static": "inline-value" },
        auth: { authorizationUrl: "https://auth.example.com/authorize", tokenUrl: "https://auth.example.com/token" },
      }),
    );
    assert.deepEqual(lines, [
      "connects to: https://user:***@mcp.example.com/mcp?key=${API_KEY}&session=…",
      "headers: Authorization ← ${GH_TOKEN}, X-Static (inline)",
      "OAuth endpoints: https://auth.example.com/authorize, https://auth.example.com/token",
      "reads your variables: ${API_KEY}, ${GH_TOKEN}",
    ]);
    assert.doesNotMatch(lines.join("\n"), /hunter22|abc123secret|inline-value/);
  });

  test("a remote server whose URL holds its key in its path (Zapier's): the key is hidden, the host and path shown", () => {
    const key = "NjNkNTc4ZDMtMjA0Zi00MjEzLWJhMmEtODJhZjRkNjU4NDI2OjE2Yzk0Zm==";
    const lines = describeForTrust(config({ url: `https://mcp.zapier.com/api/mcp/s/${key}/mcp` }));
    assert.equal(lines[0], "connects to: https://mcp.zapier.com/api/mcp/s/***/mcp");
  });

  test("a shared server says so: being shared is part of what is trusted, and adding it asks again", () => {
    const lines = describeForTrust(config({ ...LOCAL, shared: true }));
    assert.ok(
      lines.includes("shared: one process for every pi session of yours, kept a while after the last has left"),
      lines.join("\n"),
    );
  });

  test("a password with an '@' in it, or after a user with one, is hidden whole", () => {
    const lines = describeForTrust(config({ url: "https://user:hun@ter22@mcp.example.com/mcp" }));
    assert.equal(lines[0], "connects to: https://user:***@mcp.example.com/mcp");
    const odd = describeForTrust(config({ url: "https://us@er:hunter22@mcp.example.com/mcp" }));
    assert.equal(
      odd[0],
      "connects to: https://us@er:***@mcp.example.com/mcp",
      "and so is one after a user with an '@'",
    );
  });

  test("control characters and bidi overrides cannot hide part of a command", () => {
    const lines = describeForTrust(
      config({ command: "sh", args: ["-c", "rm -rf ~ \u001b[2K\rnode server.js", "\u202eevil"] }),
    );
    assert.doesNotMatch(lines.join(""), /[\u001b\r\u202e]/);
    assert.match(lines[0]!, /\\u001b\[2K\\u000dnode/);
    assert.equal(visible("a\u0007b\u200bc"), "a\\u0007b\\u200bc");
  });

  test("the question names each server and why it is asked", () => {
    const text = trustQuestion("/repo", [
      { config: config(LOCAL, "fs"), state: "new" },
      { config: config(REMOTE, "gh"), state: "changed" },
    ]);
    assert.match(text, /^This project \(\/repo\) defines MCP servers/);
    assert.match(text, /\nfs {2}\(new\)\n {4}runs: npx -y pkg \$\{ROOT\}\n/);
    assert.match(
      text,
      /\ngh {2}\(changed since you last answered\)\n {4}connects to: https:\/\/mcp\.example\.com\/mcp\n/,
    );
  });
});

describe("trust store", () => {
  test("answers are kept per project (by real path), merged per server, in a file only the user can read", async () => {
    const tmp = tempDir();
    try {
      const file = path.join(tmp.dir, "agent", "mcp-bridge", "trust.json");
      const store = new TrustStore(file);
      const projectA = path.join(tmp.dir, "a");
      const projectB = path.join(tmp.dir, "b");
      mkdirSync(projectA);
      mkdirSync(projectB);
      symlinkSync(projectA, path.join(tmp.dir, "link-to-a"));
      const one = config(LOCAL, "one");
      const two = config(REMOTE, "two");
      await store.save(projectA, withAnswer(new Map(), [one], true));
      await store.save(path.join(tmp.dir, "link-to-a"), withAnswer(new Map(), [two], false));
      const a = await store.read(path.join(tmp.dir, "b", "..", "a"));
      assert.equal(trustState(one, a), "trusted");
      assert.equal(trustState(two, a), "declined");
      assert.equal((await store.read(projectB)).size, 0, "another project has its own answers");
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.equal(statSync(path.dirname(file)).mode & 0o777, 0o700);
      assert.doesNotMatch(readFileSync(file, "utf8"), /MY_TOKEN|npx/, "only fingerprints are stored");
      assert.match(trustFingerprint(one), /^[0-9a-f]{64}$/, "a SHA-256, in hex");
      assert.ok(readFileSync(file, "utf8").includes(trustFingerprint(one)));
      assert.deepEqual(
        readdirSync(path.dirname(file)),
        ["trust.json"],
        "written in place of the old file, no temp left",
      );
    } finally {
      tmp.cleanup();
    }
  });

  test("a corrupt or foreign file reads as no answers, and a server named __proto__ is stored as a name", async () => {
    const tmp = tempDir();
    try {
      const file = path.join(tmp.dir, "trust.json");
      const store = new TrustStore(file);
      for (const text of [
        "{ not json",
        "[]",
        JSON.stringify({ version: 99, projects: {} }),
        JSON.stringify({ version: 1, projects: { [tmp.dir]: { x: { hash: 1 } } } }),
      ]) {
        writeFileSync(file, text);
        assert.equal((await store.read(tmp.dir)).size, 0, text);
      }
      const proto = { ...config(LOCAL), name: "__proto__" };
      await store.save(tmp.dir, withAnswer(new Map(), [proto], true));
      const read = await store.read(tmp.dir);
      assert.equal(trustState(proto, read), "trusted");
      assert.equal(({} as Record<string, unknown>).hash, undefined, "no prototype was touched");
    } finally {
      tmp.cleanup();
    }
  });
});

test("two pi processes answering at once keep both answers: neither write drops the other's", async () => {
  const tmp = tempDir();
  try {
    const file = path.join(tmp.dir, "trust.json");
    const store = path.resolve("src/trust/trust-store.ts");
    const script = path.join(tmp.dir, "answer.mts");
    writeFileSync(
      script,
      `import { TrustStore } from ${JSON.stringify(store)};
       const [file, project] = process.argv.slice(2);
       for (let i = 0; i < 40; i++)
         await new TrustStore(file).save(project, new Map([["s" + i, { hash: "h", trusted: true }]]));`,
    );
    const run = (project: string) =>
      promisify(execFile)(process.execPath, ["--import", "tsx", script, file, path.join(tmp.dir, project)]);
    await Promise.all([run("a"), run("b")]);
    const store2 = new TrustStore(file);
    assert.deepEqual(
      [(await store2.read(path.join(tmp.dir, "a"))).size, (await store2.read(path.join(tmp.dir, "b"))).size],
      [40, 40],
    );
  } finally {
    tmp.cleanup();
  }
});

test("the first answer ever, its directory not made yet, is written under the lock too", async () => {
  const tmp = tempDir();
  try {
    const lock = path.join(tmp.dir, "agent", "mcp-bridge", "trust.json.lock");
    const release = await fileLock(lock);
    assert.ok(existsSync(lock), "another pi process waits for this one");
    release();
    assert.ok(!existsSync(lock));
  } finally {
    tmp.cleanup();
  }
});

describe("trust after a write by the bridge (trustAfterWrite)", () => {
  const old = config(LOCAL, "srv");
  const withTool = config({ ...LOCAL, autoApprove: ["greet"] }, "srv");
  const hashOf = (answers: Map<string, { hash: string; trusted: boolean }>) =>
    Object.fromEntries([...answers].map(([name, a]) => [name, a.trusted && a.hash]));

  test("a trusted server stays trusted with the change written: its new definition is recorded", () => {
    const added = trustAfterWrite([old], [withTool], withAnswer(new Map(), [old], true), new Set());
    assert.deepEqual(hashOf(added), { srv: trustFingerprint(withTool) });
  });

  test("an untrusted server never becomes trusted: declined, never answered, or changed by someone else since the answer", () => {
    assert.equal(
      trustAfterWrite([old], [withTool], withAnswer(new Map(), [old], false), new Set()).size,
      0,
      "declined",
    );
    assert.equal(trustAfterWrite([old], [withTool], new Map(), new Set()).size, 0, "never answered");
    // The user trusted `old`; someone edited its args since, and the bridge's write lands on the edited definition.
    const edited = config({ ...LOCAL, args: ["-y", "evil"] }, "srv");
    const editedWithTool = config({ ...LOCAL, args: ["-y", "evil"], autoApprove: ["greet"] }, "srv");
    assert.equal(
      trustAfterWrite([edited], [editedWithTool], withAnswer(new Map(), [old], true), new Set()).size,
      0,
      "changed since",
    );
    // A server the write brings in without the user writing it (its name not authored) is not trusted either.
    assert.equal(trustAfterWrite([], [config(REMOTE, "other")], new Map(), new Set()).size, 0, "new, not authored");
  });

  test("a server the user wrote whole is trusted as written; what the write left as it was is not recorded again", () => {
    const replaced = config(REMOTE, "srv");
    const added = trustAfterWrite(
      [old],
      [replaced, config(REMOTE, "kept")],
      withAnswer(new Map(), [old], false),
      new Set(["srv"]),
    );
    assert.deepEqual(
      hashOf(added),
      { srv: trustFingerprint(replaced) },
      "authored, whatever the answer about what it replaced",
    );
    const same = trustAfterWrite(
      [old],
      [config({ ...LOCAL, enabled: false }, "srv")],
      withAnswer(new Map(), [old], true),
      new Set(),
    );
    assert.equal(same.size, 0, "enabled is not part of the definition: nothing to record");
  });

  test("only project servers: a write to another file records nothing", () => {
    const user = (entry: Record<string, unknown>) => config(entry, "srv", "user");
    assert.equal(
      trustAfterWrite([user(LOCAL)], [user({ ...LOCAL, autoApprove: ["greet"] })], new Map(), new Set(["srv"])).size,
      0,
    );
  });

  test("the warning when the record could not be saved names the command that trusts again", () => {
    assert.equal(
      trustNotRecorded(["a b", "c"], new Error("disk full")),
      `The change is saved, but not that MCP servers 'a b', 'c' are trusted with it (disk full). If the next session does not trust them, /mcp trust "a b" c trusts them again.`,
    );
  });
});

describe("McpBridge.writeConfig: the bridge's own writes to config files keep project trust in step", () => {
  /** A project with a trusted server, a declined one, and a user file; the bridge over them with a trust store. */
  function setUp() {
    const tmp = tempDir();
    const projectRoot = path.join(tmp.dir, "project");
    const agentDir = path.join(tmp.dir, "agent");
    const projectFile = path.join(projectRoot, ".pi", "mcp.json");
    const userFile = path.join(agentDir, "mcp.json");
    mkdirSync(path.dirname(projectFile), { recursive: true });
    mkdirSync(agentDir);
    const entries = { trusted: LOCAL, declined: { ...LOCAL, args: ["other"] } };
    writeFileSync(projectFile, JSON.stringify({ mcpServers: entries }, null, 2));
    writeFileSync(userFile, JSON.stringify({ mcpServers: { mine: LOCAL } }));
    const source = { scope: "project" as const, path: projectFile };
    const defined = (name: keyof typeof entries, entry: Record<string, unknown> = entries[name]) => {
      const result = validateServerEntry(name, entry, source);
      if (!result.config) throw new Error(result.errors.join("; "));
      return result.config;
    };
    const store = new TrustStore(trustFile(agentDir));
    const bridge = (trustStore = store) =>
      new McpBridge({
        projectRoot,
        agentDir,
        bundledPath: path.join(tmp.dir, "bundled.json"),
        env: {},
        clientInfo: { name: "test", version: "0" },
        projectTrust: new ProjectTrust(projectRoot, trustStore),
      });
    return { tmp, projectRoot, projectFile, userFile, entries, defined, store, bridge };
  }

  test("a trusted server's change is recorded as trusted; a declined one's is not; the other servers' answers stay", async () => {
    const { tmp, projectRoot, projectFile, defined, store, bridge } = setUp();
    try {
      await store.save(
        projectRoot,
        new Map([
          ...withAnswer(new Map(), [defined("trusted")], true),
          ...withAnswer(new Map(), [defined("declined")], false),
        ]),
      );
      const written = await bridge().writeConfig(projectFile, (text) =>
        addToServerList(addToServerList(text, "trusted", "autoApprove", "greet"), "declined", "autoApprove", "greet"),
      );
      assert.deepEqual(written, {});
      const record = await store.read(projectRoot);
      assert.equal(trustState(defined("trusted", { ...LOCAL, autoApprove: ["greet"] }), record), "trusted");
      assert.equal(
        trustState(defined("declined", { ...LOCAL, args: ["other"], autoApprove: ["greet"] }), record),
        "changed",
        "still asked about",
      );
      assert.equal(record.get("declined")?.trusted, false);
    } finally {
      tmp.cleanup();
    }
  });

  test("someone else's change in between is not blessed: the write is judged on the file as it is when written", async () => {
    const { tmp, projectRoot, projectFile, entries, defined, store, bridge } = setUp();
    try {
      await store.save(projectRoot, withAnswer(new Map(), [defined("trusted")], true));
      const theirs = { ...entries, trusted: { ...LOCAL, args: ["-y", "pkg", "--edited"] } };
      writeFileSync(projectFile, JSON.stringify({ mcpServers: theirs }));
      await bridge().writeConfig(projectFile, (text) => addToServerList(text, "trusted", "autoApprove", "greet"));
      const record = await store.read(projectRoot);
      assert.equal(
        record.get("trusted")?.hash,
        trustFingerprint(defined("trusted")),
        "the answer is still about the user's definition",
      );
      assert.equal(
        trustState(defined("trusted", { ...LOCAL, args: ["-y", "pkg", "--edited"], autoApprove: ["greet"] }), record),
        "changed",
      );
    } finally {
      tmp.cleanup();
    }
  });

  test("a write that fails records nothing; a write to another file records nothing", async () => {
    const { tmp, projectRoot, projectFile, userFile, defined, store, bridge } = setUp();
    try {
      await store.save(projectRoot, withAnswer(new Map(), [defined("trusted")], true));
      const stored = readFileSync(trustFile(path.dirname(userFile)), "utf8");
      const text = readFileSync(projectFile, "utf8");
      // The change itself refuses (a server the file lacks), and a file that does not parse is never written.
      await assert.rejects(
        bridge().writeConfig(
          projectFile,
          (t) => addToServerList(setServerEntry(t, "trusted", { command: "x" }), "nope", "autoApprove", "greet"),
          ["trusted"],
        ),
        /no server "nope"/,
      );
      writeFileSync(projectFile, "{ broken");
      await assert.rejects(
        bridge().writeConfig(projectFile, (t) => setServerEntry(t, "trusted", { command: "x" }), ["trusted"]),
        /fix it by hand/,
      );
      writeFileSync(projectFile, text);
      await bridge().writeConfig(userFile, (t) => setServerEntry(t, "trusted", { command: "x" }), ["trusted"]);
      assert.equal(readFileSync(trustFile(path.dirname(userFile)), "utf8"), stored, "the answers are untouched");
      // enable/disable changes nothing that is trusted: nothing to record.
      await bridge().writeConfig(projectFile, (t) => setServerField(t, "trusted", "enabled", false));
      assert.equal(readFileSync(trustFile(path.dirname(userFile)), "utf8"), stored);
    } finally {
      tmp.cleanup();
    }
  });

  test("the file is written even when the answer cannot be saved: that error comes back as a value", async () => {
    const { tmp, projectFile, bridge } = setUp();
    try {
      // A directory where the store's file would be: it reads as no answers, and saving fails.
      const blocked = path.join(tmp.dir, "blocked");
      mkdirSync(path.join(blocked, "inside"), { recursive: true });
      const written = await bridge(new TrustStore(blocked)).writeConfig(
        projectFile,
        (t) => setServerEntry(t, "added", REMOTE),
        ["added"],
      );
      assert.ok(written.trustError instanceof Error, String(written.trustError));
      assert.match(readFileSync(projectFile, "utf8"), /"added"/);
    } finally {
      tmp.cleanup();
    }
  });
});
