/**
 * A pi UI for in-process tests: select/input/confirm answer from a script, and everything asked, notified, put in the
 * footer or drawn by a custom component (the dashboard) is recorded.
 */
import type { ExtensionUIContext } from "@mariozechner/pi-coding-agent";

/** A UI that answers from a script and records what it was asked and shown. */
export class RecordingUI {
  answers: unknown[] = [];
  asked: string[] = [];
  /** The options of each select, in order. */
  offered: string[][] = [];
  notices: string[] = [];
  /** The placeholder of each input, in order. */
  placeholders: Array<string | undefined> = [];
  statuses = new Map<string, string | undefined>();
  screens: string[][] = [];
  /** Keys the dashboard gets, in order, once it is open. */
  keys: string[] = [];
  /** The width custom components are drawn at. */
  width = 200;
  /** Behave as pi's RPC mode does: custom components are not supported (resolve at once, build nothing). */
  noCustom = false;
  /** Who listens to raw terminal input now (`onTerminalInput`), in the order they began to. */
  readonly inputListeners = new Set<Parameters<ExtensionUIContext["onTerminalInput"]>[0]>();

  /**
   * Sends raw terminal input (`"\x1b"`: Escape) to the listeners, as pi's TUI does before its editor sees it; whether
   * one of them consumed it (else the editor would get it).
   */
  press(data: string): boolean {
    for (const listener of this.inputListeners) if (listener(data)?.consume) return true;
    return false;
  }

  private next(kind: string, title: string): unknown {
    this.asked.push(`${kind}: ${title}`);
    if (this.answers.length === 0) throw new Error(`unscripted ${kind}: ${title}`);
    return this.answers.shift();
  }

  context(): ExtensionUIContext {
    const ui: Partial<ExtensionUIContext> = {
      select: async (title, options) => {
        this.offered.push(options);
        const answer = this.next("select", title);
        if (typeof answer === "number") return options[answer];
        if (answer === undefined) return undefined;
        const found = options.find((o) => o.startsWith(String(answer)));
        if (!found) throw new Error(`no option '${String(answer)}' in ${JSON.stringify(options)}`);
        return found;
      },
      input: async (title, placeholder) => {
        this.placeholders.push(placeholder);
        return this.next("input", title) as string | undefined;
      },
      editor: async (title) => this.next("editor", title) as string | undefined,
      // The message is recorded too: it is where a confirmation says what it is about.
      confirm: async (title, message) => this.next("confirm", `${title}\n${message}`) as boolean,
      notify: (message) => void this.notices.push(message),
      setStatus: (key, text) => void this.statuses.set(key, text),
      onTerminalInput: (listener) => {
        this.inputListeners.add(listener);
        return () => void this.inputListeners.delete(listener);
      },
      theme: { fg: (_color: string, text: string) => `[warn]${text}` } as unknown as ExtensionUIContext["theme"],
      custom: (async (factory: Parameters<ExtensionUIContext["custom"]>[0]) => {
        if (this.noCustom) return undefined;
        let result: unknown;
        let closed = false;
        const tui = { requestRender: () => undefined };
        const component = await factory(tui as never, undefined as never, undefined as never, (value: unknown) => {
          closed = true;
          result = value;
        });
        this.screens.push(component.render(this.width));
        for (const key of this.keys.splice(0)) {
          component.handleInput?.(key);
          if (closed) break;
          this.screens.push(component.render(this.width));
        }
        component.dispose?.();
        return result;
      }) as ExtensionUIContext["custom"],
    };
    return new Proxy(ui as ExtensionUIContext, {
      get: (target, key) => (key in target ? target[key as keyof ExtensionUIContext] : () => undefined),
    });
  }
}
