/**
 * A command registered at once, under its name and description, whose code loads on its first use (a completion or
 * a run): pi's start does not pay for the modules behind a command that most sessions never run.
 */
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

type CommandOptions = Parameters<ExtensionAPI["registerCommand"]>[1];

/**
 * Registers `/name`; `load` imports the command's module and has it register the command on the `pi` it is given,
 * which hands that registration here (anything else it registers goes to pi).
 */
export function registerLazyCommand(
  pi: ExtensionAPI,
  name: string,
  description: string,
  load: (pi: ExtensionAPI) => Promise<void>,
): void {
  let loaded: Promise<CommandOptions> | undefined;
  const command = () => {
    if (loaded) return loaded;
    const loading = new Promise<CommandOptions>((resolve, reject) => {
      const registerCommand = (registered: string, options: CommandOptions) =>
        registered === name ? resolve(options) : pi.registerCommand(registered, options);
      load(Object.create(pi, { registerCommand: { value: registerCommand } }) as ExtensionAPI).then(
        () => reject(new Error(`The module behind /${name} did not register it`)),
        reject,
      );
    });
    // A load that failed is not kept: the next use tries again (its files may be back, after an update).
    loading.catch(() => loaded === loading && (loaded = undefined));
    return (loaded = loading);
  };
  pi.registerCommand(name, {
    description,
    getArgumentCompletions: async (prefix) => (await command()).getArgumentCompletions?.(prefix) ?? null,
    handler: async (args, ctx) => {
      try {
        await (await command()).handler(args, ctx);
      } catch (error) {
        // A run that outlived its session (a /reload or /new meanwhile): pi 1.x refuses the ended session's context,
        // and that refusal would only show up in the next session as an error of the command.
        if (!ended(ctx)) throw error;
      }
    },
  });
}

/** Whether the session this context belongs to has ended (pi 1.x then refuses it). */
function ended(ctx: { hasUI: boolean }): boolean {
  try {
    void ctx.hasUI;
    return false;
  } catch {
    return true;
  }
}
