/**
 * npm's own settings for a server that runs through npx, read as npm reads them: from the server's `env` (of pi's own
 * environment, a server gets only the safe few such as HOME, so an `npm_config_*` counts only when configured there),
 * then from the user's npmrc (`npm config set …` writes there). A project's `.npmrc` and npm's global one are not read.
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";

export type NpmEnv = Readonly<Record<string, string>>;

/** The value of one of npm's settings by name (`cache`, `logs-dir`, `registry`), undefined if unset. */
export type NpmSetting = (name: string) => string | undefined;

/** The home directory npm of a server with `env` uses. */
export function npmHome(env: NpmEnv): string {
  return env.HOME ?? process.env.HOME ?? homedir();
}

/**
 * npm's settings for a server with `env`: the value of a setting by name (`cache`, `logs-dir`, `registry`), undefined
 * if unset. The npmrc is read once, when this is called; as in npm, a key written twice has its last value.
 */
export function npmSettings(env: NpmEnv): NpmSetting {
  const home = npmHome(env);
  const rc = new Map<string, string>();
  try {
    const text = readFileSync(fromEnv(env, "userconfig") ?? path.join(home, ".npmrc"), "utf8");
    for (const [, key = "", value = ""] of text.matchAll(/^[ \t]*([\w-]+)[ \t]*=[ \t]*(.*?)[ \t]*$/gm))
      if (value) rc.set(key, value.replace(/^~(?=$|[\\/])/, home));
  } catch {
    // No npmrc: npm's defaults.
  }
  return (name) => fromEnv(env, name) ?? rc.get(name);
}

/** npm takes `npm_config_logs_dir` and `NPM_CONFIG_LOGS-DIR` alike. */
function fromEnv(env: NpmEnv, name: string): string | undefined {
  const wanted = `npm_config_${name}`.replace(/-/g, "_");
  return Object.entries(env).find(([key, value]) => key.toLowerCase().replace(/-/g, "_") === wanted && value)?.[1];
}
