/**
 * How a user reaches the authorization page: the browser where one can be shown, else the URL and a pasted redirect
 * address handed to a real loopback callback server.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CallbackServer } from "../src/oauth/callback-server.ts";
import { browserCommand, canOpenBrowser, interactiveSignIn } from "../src/oauth/sign-in.ts";

describe("sign-in handlers", { timeout: 60_000 }, () => {
  test("a browser is used on macOS, Windows and a Linux desktop, not over plain SSH or when turned off", () => {
    assert.equal(canOpenBrowser({}, "darwin"), true);
    assert.equal(canOpenBrowser({}, "win32"), true);
    assert.equal(canOpenBrowser({ DISPLAY: ":0" }, "linux"), true);
    assert.equal(canOpenBrowser({ WAYLAND_DISPLAY: "wayland-0" }, "linux"), true);
    assert.equal(canOpenBrowser({ SSH_CONNECTION: "x" }, "linux"), false);
    assert.equal(canOpenBrowser({ DISPLAY: ":0", PI_MCP_NO_BROWSER: "1" }, "linux"), false);
    assert.deepEqual(browserCommand("https://a/b?x=1&y=2", "linux"), {
      command: "xdg-open",
      args: ["https://a/b?x=1&y=2"],
    });
    assert.deepEqual(
      browserCommand("https://a/b?x=1&y=2", "win32").args.at(-1),
      "https://a/b?x=1^&y=2",
      "cmd would split at &",
    );
    // A server's page (URL elicitation) naming a variable, or piping into a program: cmd must take neither.
    assert.equal(
      browserCommand("https://evil.example/?k=%ANTHROPIC_API_KEY%|calc>x", "win32").args.at(-1),
      "https://evil.example/?k=^%ANTHROPIC_API_KEY^%^|calc^>x",
    );
  });

  test("with a browser: it is opened and the URL is shown as well", async () => {
    const callback = await CallbackServer.start({ port: 0, timeoutMs: 5000 });
    try {
      const opened: string[] = [];
      const notices: string[] = [];
      const url = new URL("https://as.example/authorize?client_id=c&state=s1");
      await interactiveSignIn({ notify: (t) => notices.push(t) }, (u) => opened.push(u), { DISPLAY: ":0" })({
        server: "gh",
        url,
        callback,
      });
      assert.deepEqual(opened, [url.href]);
      assert.match(
        notices[0]!,
        /Signing in to MCP server 'gh': your browser should open\. If it does not, open this URL:\nhttps:\/\/as\.example\/authorize/,
      );
    } finally {
      await callback.close();
    }
  });

  test("without a browser: the URL is shown, and the pasted redirect address completes the sign-in", async () => {
    const callback = await CallbackServer.start({ port: 0, timeoutMs: 5000 });
    const grant = callback.waitForGrant("s1");
    const notices: string[] = [];
    const prompts: string[] = [];
    const pasted = `${callback.redirectUrl}?code=the-code&state=s1`;
    await interactiveSignIn(
      {
        notify: (t) => notices.push(t),
        input: async (prompt) => {
          prompts.push(prompt);
          return `  ${pasted}  `;
        },
      },
      () => assert.fail("no browser on this machine"),
      {},
    )({ server: "gh", url: new URL("https://as.example/authorize?state=s1"), callback });
    assert.deepEqual(await grant, { code: "the-code" });
    assert.match(notices[0]!, /Sign in to MCP server 'gh' by opening this URL in a browser/);
    assert.match(notices[0]!, new RegExp(`starts with ${callback.redirectUrl.replace(/[.]/g, "\\.")}`));
    assert.match(prompts[0]!, /Paste the address your browser ended on/);
    await callback.close();
  });

  test("without a browser: a sign-in that ends otherwise (the browser came back here after all) dismisses the paste prompt", async () => {
    const callback = await CallbackServer.start({ port: 0, timeoutMs: 5000 });
    const grant = callback.waitForGrant("s1");
    let prompt: AbortSignal | undefined;
    await interactiveSignIn(
      {
        notify: () => undefined,
        // As pi's dialog does: an aborted signal dismisses it.
        input: (_text, signal) => {
          prompt = signal;
          return new Promise((resolve) => signal?.addEventListener("abort", () => resolve(undefined)));
        },
      },
      () => undefined,
      {},
    )({ server: "gh", url: new URL("https://as.example/authorize"), callback });
    await (await fetch(`${callback.redirectUrl}?code=c&state=s1`)).text();
    assert.deepEqual(await grant, { code: "c" });
    await callback.close();
    assert.equal(prompt?.aborted, true, "the prompt is dismissed once the sign-in is over");
  });

  test("without a browser: Escape on the paste prompt ends the sign-in at once, not at its timeout", async () => {
    const callback = await CallbackServer.start({ port: 0, timeoutMs: 20_000 });
    const grant = callback.waitForGrant("s1");
    await interactiveSignIn(
      { notify: () => undefined, input: async () => undefined },
      () => undefined,
      {},
    )({
      server: "gh",
      url: new URL("https://as.example/authorize"),
      callback,
    });
    await assert.rejects(grant, { reason: "cancelled" });
    await callback.close();
  });

  test("without a browser: Enter on an empty paste prompt asks again, rather than leaving the sign-in with no prompt", async () => {
    const callback = await CallbackServer.start({ port: 0, timeoutMs: 5000 });
    const grant = callback.waitForGrant("s1");
    const answers = ["  ", `${callback.redirectUrl}?code=real&state=s1`];
    await interactiveSignIn(
      { notify: () => undefined, input: async () => answers.shift() },
      () => undefined,
      {},
    )({
      server: "gh",
      url: new URL("https://as.example/authorize"),
      callback,
    });
    assert.deepEqual(await grant, { code: "real" });
    await callback.close();
  });

  test("without a browser: after a pasted address that does not complete the sign-in, the address is asked for again", async () => {
    const callback = await CallbackServer.start({ port: 0, timeoutMs: 3000 });
    const grant = callback.waitForGrant("s1");
    const answers = [`${callback.redirectUrl}?code=old&state=stale`, `${callback.redirectUrl}?code=real&state=s1`];
    const notices: string[] = [];
    await interactiveSignIn(
      { notify: (t) => notices.push(t), input: async () => answers.shift() },
      () => undefined,
      {},
    )({
      server: "gh",
      url: new URL("https://as.example/authorize"),
      callback,
    });
    assert.deepEqual(await grant, { code: "real" });
    assert.match(notices[1]!, /does not complete the sign-in to 'gh'/);
    await callback.close();
  });

  test("without a browser and with no one to ask (print mode): not told to paste the address anywhere", async () => {
    const callback = await CallbackServer.start({ port: 0, timeoutMs: 5000 });
    const notices: string[] = [];
    await interactiveSignIn(
      { notify: (t) => notices.push(t) },
      () => undefined,
      {},
    )({
      server: "gh",
      url: new URL("https://as.example/authorize"),
      callback,
    });
    assert.match(
      notices[0]!,
      /Sign in to MCP server 'gh' by opening this URL in a browser:\nhttps:\/\/as\.example\/authorize/,
    );
    assert.doesNotMatch(notices[0]!, /paste/i, "there is nothing to paste it into");
    assert.match(notices[0]!, new RegExp(`must then reach ${callback.redirectUrl.replace(/[.]/g, "\\.")}`));
    await callback.close();
  });

  test("a pasted address with the wrong state is refused with a notice, and the sign-in keeps waiting", async () => {
    const callback = await CallbackServer.start({ port: 0, timeoutMs: 5000 });
    const grant = callback.waitForGrant("s1");
    const notices: string[] = [];
    let answered!: () => void;
    const done = new Promise<void>((resolve) => (answered = resolve));
    await interactiveSignIn(
      {
        notify: (t) => {
          notices.push(t);
          if (notices.length === 2) answered();
        },
        input: async () => `${callback.redirectUrl}?code=forged&state=other`,
      },
      () => undefined,
      {},
    )({ server: "gh", url: new URL("https://as.example/authorize"), callback });
    await done;
    assert.match(notices[1]!, /does not complete the sign-in to 'gh'/);
    callback.submitRedirectUrl(`${callback.redirectUrl}?code=real&state=s1`);
    assert.deepEqual(await grant, { code: "real" });
    await callback.close();
  });
});
