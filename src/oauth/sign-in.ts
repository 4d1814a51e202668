/**
 * How a user gets to an authorization page: their browser where there is one (the URL is always shown too), or a
 * pasted redirect URL where there is none (SSH, no display); and, for tests and the conformance driver, no user at all.
 */
import { spawn } from "node:child_process";
import { shown, SHOWN } from "../common/terminal-text.ts";
import type { SignInHandler } from "./provider.ts";
import { errorMessage } from "../common/errors.ts";
import { endpointProblem } from "./endpoint-policy.ts";

export interface SignInUi {
  /** Shows a message (the URL included): a notice in the TUI, a line on stderr in print mode. */
  notify(message: string): void;
  /** Asks for a line of text (dismissed when `signal` aborts); undefined when there is no one to ask. */
  input?(prompt: string, signal?: AbortSignal): Promise<string | undefined>;
}

/** Whether this machine can show a browser: macOS and Windows can; Linux and the BSDs need a display, and SSH rarely has one. */
export function canOpenBrowser(env = process.env, platform = process.platform): boolean {
  if (env.PI_MCP_NO_BROWSER) return false;
  if (platform === "darwin" || platform === "win32") return true;
  return Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
}

/** The command that opens `url` in the default browser. */
export function browserCommand(url: string, platform = process.platform): { command: string; args: string[] } {
  if (platform === "darwin") return { command: "open", args: [url] };
  // `start` is a cmd built-in; its first quoted argument is a window title, hence the empty one. cmd's own characters
  // (`&`, `|`, `<`, `>`, a `%VAR%` it would fill in, its escape `^`) are escaped: a page a server names is opened as given.
  if (platform === "win32") return { command: "cmd", args: ["/c", "start", '""', url.replace(/[&|<>^%]/g, "^$&")] };
  return { command: "xdg-open", args: [url] };
}

/** Opens `url` in the default browser, if there is an opener; callers show the URL as well. */
export function openBrowser(url: string): void {
  const { command, args } = browserCommand(url);
  try {
    const child = spawn(command, args, { stdio: "ignore", detached: true, windowsHide: true });
    child.on("error", () => undefined);
    child.unref();
  } catch {
    // No opener: the URL is on screen anyway.
  }
}

/**
 * Sends the user to the page: opens the browser where one can be shown, and always shows the URL. Without a browser,
 * it asks for the URL the browser ended on (the redirect to 127.0.0.1 fails on another machine, but its address has
 * the code), and hands that to the callback.
 */
export function interactiveSignIn(ui: SignInUi, open = openBrowser, env = process.env): SignInHandler {
  return ({ server, url, callback }) => {
    const browser = canOpenBrowser(env);
    if (browser) open(url.href);
    // With no one to ask (print mode), only a redirect that reaches this machine completes it.
    const then = ui.input
      ? `Afterwards, paste the address the browser ended on (it starts with ${callback.redirectUrl}).`
      : `The browser must then reach ${callback.redirectUrl}, on this machine (from another one, forward that port: ssh -L).`;
    ui.notify(
      browser
        ? `Signing in to MCP server '${server}': your browser should open. If it does not, open this URL:\n${url.href}`
        : `Sign in to MCP server '${server}' by opening this URL in a browser:\n${url.href}\n${then}`,
    );
    if (!browser && ui.input) {
      // The prompt goes when the sign-in ends otherwise (a browser here after all, the timeout).
      const over = new AbortController();
      void callback.closed.then(() => over.abort());
      const prompt = `Paste the address your browser ended on after signing in to '${server}'`;
      // Asked again after an address that does not complete it: there is no other way to finish here.
      const ask = (): void =>
        void ui.input?.(prompt, over.signal).then((pasted) => {
          if (over.signal.aborted) return;
          // Escape: the user gave up; there is no other way to finish here, so the sign-in ends now, not at its timeout.
          if (pasted === undefined) return void callback.close();
          // Enter on an empty prompt would otherwise leave the sign-in waiting with nothing to paste into.
          if (!pasted.trim()) return ask();
          try {
            callback.submitRedirectUrl(pasted.trim());
          } catch (error) {
            ui.notify(
              `That address does not complete the sign-in to '${server}': ${shown(errorMessage(error), SHOWN.body)}`,
            );
            ask();
          }
        });
      ask();
    }
  };
}

/**
 * No user: fetches the authorization URL without following redirects and delivers the redirect it answers with to the
 * loopback server, as a browser would. For authorization servers that approve at once: test fixtures and the
 * conformance suite's.
 */
export function automaticSignIn(fetchFn: typeof fetch = fetch): SignInHandler {
  return async ({ url }) => {
    const response = await fetchFn(url, { redirect: "manual" });
    const location = response.headers.get("location");
    await response.body?.cancel();
    if (!location) throw new Error(`the authorization endpoint answered ${response.status} without a redirect`);
    const target = new URL(location, url);
    const problem = endpointProblem("redirect target", target);
    if (problem) throw new Error(problem);
    const redirected = await fetchFn(target, { redirect: "manual" });
    await redirected.body?.cancel();
  };
}
