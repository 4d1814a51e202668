/**
 * Trusting a project's server "sandboxed": real pi in-process (faux model) with a project `.pi/mcp.json` that defines
 * the probe server (a real process), HOME a temp dir with a planted `~/.ssh/id_test`. Trusted sandboxed — by the
 * question at startup or by `/mcp trust probe --sandboxed` without a UI — the probe's read of the key and its write
 * outside its working directory fail; trusted fully, the same probe succeeds (so the test can fail). The answer is
 * remembered, and a project that widens its server's sandbox rules afterwards is asked about again.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { CHOOSE_FULLY, TRUST_ALL, TRUST_CHOOSE, TRUST_SANDBOXED } from "../src/pi/command-trust.ts";
import { EXTENSION_DIR, trustFile, waitFor } from "./helpers.ts";
import { PLANTED_KEY, PROBE, sandboxBed } from "./sandbox-bed.ts";
import { type InProcessPi, startInProcessPi } from "./pi-harness.ts";
import { PI_LINE } from "./pi-line.ts";
import { RecordingUI } from "./recording-ui.ts";

const TOOL = "mcp_probe_probe";
/** pi 1.x decides project trust itself: the bridge asks nothing there, but `/mcp trust --sandboxed` works. */
const bridgeAsks = PI_LINE === "1.x" ? "pi 1.x decides project trust itself (the bridge does not ask)" : false;

describe("project servers trusted sandboxed", { timeout: 240_000 }, () => {
  const bed = sandboxBed("trust-sandboxed");
  const { project, outside, agentDir, secret } = bed;
  let pi: InProcessPi | undefined;

  const writeProject = (probe: Record<string, unknown> = {}) =>
    writeFileSync(
      path.join(project, ".pi", "mcp.json"),
      JSON.stringify({
        mcpServers: { probe: { command: process.execPath, args: [PROBE], autoApprove: ["*"], ...probe } },
      }),
    );

  before(() => {
    bed.setUp();
    mkdirSync(path.join(project, ".pi"));
    writeFileSync(path.join(agentDir, "mcp.json"), JSON.stringify({ exposure: "direct", mcpServers: {} }));
  });

  after(async () => {
    await pi?.close();
    bed.tearDown();
  });

  /** A fresh pi (one at a time), bound with `ui` or, without one, as print mode has it; pi 1.x is told `projectTrusted`. */
  async function startPi(ui?: RecordingUI, projectTrusted?: boolean): Promise<InProcessPi> {
    return (await startPrinted(ui, projectTrusted)).pi;
  }

  /** `startPi`, with what pi printed while its session started. */
  async function startPrinted(
    ui?: RecordingUI,
    projectTrusted?: boolean,
  ): Promise<{ pi: InProcessPi; printed: string }> {
    await pi?.close();
    pi = undefined;
    const started = await startInProcessPi({
      cwd: project,
      agentDir,
      extensionPaths: [EXTENSION_DIR],
      projectTrusted: PI_LINE === "1.x" ? projectTrusted : undefined,
    });
    pi = started;
    const printed = await quiet(() => started.session.bindExtensions(ui ? { uiContext: ui.context() } : {}));
    return { pi: started, printed };
  }

  /** Runs `run` with what pi prints (print mode's notices) kept and returned instead of written out. */
  async function quiet(run: () => Promise<unknown>): Promise<string> {
    const printed: string[] = [];
    const originalLog = console.log;
    console.log = (...args: unknown[]) => printed.push(args.join(" "));
    try {
      await run();
    } finally {
      console.log = originalLog;
    }
    return printed.join("\n");
  }

  const offered = (current: InProcessPi) => current.session.getAllTools().some((t) => t.name === TOOL);

  /** The faux model calls the probe once: read the key, write outside and inside its working directory. */
  async function probe(current: InProcessPi, tag: string): Promise<string> {
    await waitFor(() => offered(current), "the probe's tool", 30_000);
    current.faux.setResponses([
      fauxAssistantMessage([fauxToolCall(TOOL, { read: secret, write: [outsideFile(tag), insideFile(tag)] })], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("done"),
    ]);
    await current.session.prompt(`call ${TOOL}`);
    const result = current.session.messages
      .filter((m) => (m as { role: string }).role === "toolResult")
      .at(-1) as unknown as { content: Array<{ text?: string }> } | undefined;
    return result?.content.map((c) => c.text ?? "").join("\n") ?? "";
  }

  const outsideFile = (tag: string) => path.join(outside, `${tag}.txt`);
  const insideFile = (tag: string) => path.join(project, `${tag}-inside.txt`);

  function assertSandboxed(text: string, tag: string): void {
    assert.match(text, /^read: failed/m, text);
    assert.doesNotMatch(text, new RegExp(PLANTED_KEY), "the key's content never reaches the model");
    assert.match(text, new RegExp(`^write ${outsideFile(tag)}: failed`, "m"), text);
    assert.equal(existsSync(outsideFile(tag)), false);
    assert.match(text, new RegExp(`^write ${insideFile(tag)}: ok`, "m"), text);
  }

  function assertUnsandboxed(text: string, tag: string): void {
    assert.match(text, new RegExp(`^read: ok ${PLANTED_KEY}`, "m"), text);
    assert.match(text, new RegExp(`^write ${outsideFile(tag)}: ok`, "m"), text);
  }

  const storedProbe = () =>
    Object.values(
      (JSON.parse(readFileSync(trustFile(agentDir), "utf8")) as { projects: Record<string, Record<string, unknown>> })
        .projects,
    ).map((servers) => servers.probe);

  const forget = () => rmSync(trustFile(agentDir), { force: true });

  test(
    'answering "Trust, sandboxed": the probe runs in a sandbox; the answer is saved and the next session runs it sandboxed without asking',
    { skip: bridgeAsks },
    async () => {
      forget();
      writeProject();
      const ui = new RecordingUI();
      ui.answers = [TRUST_SANDBOXED];
      assertSandboxed(await probe(await startPi(ui), "asked"), "asked");
      assert.equal(ui.offered[0]?.[0], TRUST_SANDBOXED, "the first answer offered");
      await waitFor(() => ui.notices.some((n) => /probe: trusted sandboxed/.test(n)), "the trust notice");
      assert.deepEqual(
        storedProbe().map((a) => ({ ...(a as object), hash: "…" })),
        [{ hash: "…", trusted: true, sandboxed: true }],
      );

      const again = new RecordingUI();
      assertSandboxed(await probe(await startPi(again), "again"), "again");
      assert.deepEqual(again.asked, [], "remembered: not asked again");
    },
  );

  test(
    '"Choose which to trust": the local server is offered sandboxed / fully / not, and "Trust, sandboxed" sandboxes it',
    { skip: bridgeAsks },
    async () => {
      forget();
      writeProject();
      const ui = new RecordingUI();
      ui.answers = [TRUST_CHOOSE, "Trust, sandboxed"];
      assertSandboxed(await probe(await startPi(ui), "chosen"), "chosen");
      assert.deepEqual(ui.offered[1], ["Trust, sandboxed", CHOOSE_FULLY, "Don't trust"]);
      assert.match(ui.asked[1] ?? "", /^select: Trust MCP server 'probe'\?\nruns: /);
    },
  );

  test(
    'answering "Trust all and start them": the same probe reads the key and writes outside (so the test above can fail)',
    { skip: bridgeAsks },
    async () => {
      forget();
      writeProject();
      const ui = new RecordingUI();
      ui.answers = [TRUST_ALL];
      assertUnsandboxed(await probe(await startPi(ui), "all"), "all");
      // The answer is saved while the servers start: its tool can answer first on a busy machine.
      await waitFor(() => existsSync(trustFile(agentDir)), "the answer saved");
      assert.equal((storedProbe()[0] as { sandboxed?: boolean }).sandboxed, undefined);
    },
  );

  test("without a UI, /mcp trust probe --sandboxed runs it sandboxed; plain /mcp trust probe then trusts it fully", async () => {
    forget();
    writeProject();
    const current = await startPi(undefined, false);
    assert.equal(offered(current), false, "not trusted: not started");
    const said = await quiet(() => current.session.prompt("/mcp trust probe --sandboxed"));
    assert.match(said, /probe: trusted sandboxed, connected/, said);
    assertSandboxed(await probe(current, "flag"), "flag");

    const plain = await quiet(() => current.session.prompt("/mcp trust probe"));
    assert.match(plain, /probe: trusted \(fully now: it no longer runs in a sandbox\)/, plain);
    assertUnsandboxed(await probe(current, "plain"), "plain");
    assert.equal((storedProbe()[0] as { sandboxed?: boolean }).sandboxed, undefined);
  });

  test(
    "on pi 1.x, a project pi trusts: /mcp trust probe --sandboxed restarts the running probe in a sandbox, and a changed definition runs sandboxed too",
    { skip: PI_LINE === "1.x" ? false : "pi 0.73 has no project trust of its own" },
    async () => {
      forget();
      writeProject();
      const current = await startPi(undefined, true);
      assertUnsandboxed(await probe(current, "host"), "host");
      const said = await quiet(() => current.session.prompt("/mcp trust probe --sandboxed"));
      assert.match(said, /probe: trusted sandboxed \(now only in a sandbox: it was trusted fully\)/, said);
      assertSandboxed(await probe(current, "host-boxed"), "host-boxed");
      // The project changes the server; pi's answer on the whole project lets it run, and it runs sandboxed still.
      writeProject({ env: { CHANGED: "1" } });
      const next = await startPi(undefined, true);
      assertSandboxed(await probe(next, "host-changed"), "host-changed");
    },
  );

  test(
    "a project that widens its server's sandbox after a sandboxed trust is asked about again; until then it does not run",
    { skip: bridgeAsks },
    async () => {
      forget();
      writeProject({ sandbox: true });
      const first = await startPi();
      await quiet(() => first.session.prompt("/mcp trust probe --sandboxed"));
      assertSandboxed(await probe(first, "narrow"), "narrow");

      writeProject({ sandbox: { filesystem: { allowWrite: [outside] } } });
      const { pi: unasked, printed } = await startPrinted();
      assert.equal(offered(unasked), false, "changed: not started");
      assert.match(printed, /not trusted, not started \(project config\): probe/, printed);

      const ui = new RecordingUI();
      ui.answers = [undefined];
      const current = await startPi(ui);
      await waitFor(() => ui.notices.some((n) => n.includes("not trusted")), "the startup notice", 30_000);
      assert.match(ui.asked[0] ?? "", /probe {2}\(changed since you last answered\)/, ui.asked.join("\n"));
      assert.match(ui.asked[0] ?? "", new RegExp(`runs sandboxed: writes also to: ${outside}`));
      assert.equal(offered(current), false, "dismissed: still not started");
    },
  );
});
