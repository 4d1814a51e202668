/**
 * The files other servers' secrets come from, so a sandboxed server cannot read them: their config files, a path a
 * `!command` names (`!cat ~/.config/tokens/gh`), a variable whose value is a path (`${GOOGLE_APPLICATION_CREDENTIALS}`),
 * and the key, assertion and ID-token files of OAuth machine grants. Pure.
 */
import * as path from "node:path";
import { commandText, isCommandValue } from "../config/command-value.ts";
import { configVarRefs, substituteVars } from "../config/substitute.ts";
import type { ServerConfig } from "../config/types.ts";

/** A word that names a file: absolute, or under the home directory; a quoted one, or one with `\ `, with its spaces. */
const PATH_WORD = /"((?:~\/|\/)[^"`$]+)"|'((?:~\/|\/)[^']+)'|(?:^|[\s"'=<])((?:~\/|\/)(?:\\.|[^\s"'|;&<>()`$\\])+)/g;

/** The paths `command` names, its variables (`$HOME/x`, `${TOKEN_FILE}`) read as the shell reads them, from `env`. */
function pathsIn(command: string, env: Readonly<Record<string, string | undefined>>, projectRoot?: string): string[] {
  // A variable quoted alone (`"$HOME"/.tokens/gh`) is one word with the path that goes on after its quotes.
  const read = command.replace(/"\$\{?(\w+)\}?"|\$(\w+)|\$\{(\w+)\}/g, (word, a, b, c) =>
    (a ?? b ?? c) === "HOME" ? "~" : (env[a ?? b ?? c] ?? word),
  );
  const paths = [...read.matchAll(PATH_WORD)].map((m) => m[1] ?? m[2] ?? m[3]!.replace(/\\(.)/g, "$1"));
  // A relative word is in the project root, where the command runs (`!cat .secrets/gh`); only a file is denied.
  const words = projectRoot ? read.split(/\s+/).filter((w) => /^[\w.][^"'|;&<>()`$\\:]*$/.test(w)) : [];
  return [...paths.filter((p) => !p.startsWith("/dev/")), ...words.map((w) => path.join(projectRoot!, w))];
}

/** The secret files of every server in `servers` but `self`; `env` and `projectRoot` give the variables' values. */
export function otherServersSecrets(
  servers: readonly ServerConfig[],
  self: string,
  env: Readonly<Record<string, string | undefined>>,
  projectRoot?: string,
): string[] {
  const files = new Set<string>();
  for (const config of servers) {
    if (config.name === self) continue;
    // Its config file holds its keys and headers as written (a package's manifest and the bundled file hold none).
    if (!config.source.package && config.source.scope !== "bundled") files.add(config.source.path);
    const values = [...Object.values(config.env), ...Object.values(config.headers)];
    const secret = config.oauth?.clientSecret;
    if (secret !== undefined) values.push(secret);
    for (const value of values)
      if (isCommandValue(value)) for (const p of pathsIn(commandText(value), env, projectRoot)) files.add(p);
    for (const name of configVarRefs(config)) {
      const value = env[name];
      if (value !== undefined && /^(~\/|\/)/.test(value) && !value.includes("\n")) files.add(value);
    }
    const { privateKeyFile, assertionFile, idTokenFile } = config.oauth ?? {};
    // As the bridge reads them: `${KEY_DIR}/sa.pem` is no file, and KEY_DIR's value alone is a directory.
    for (const file of [privateKeyFile, assertionFile, idTokenFile])
      if (file !== undefined) files.add(substituteVars(file, env, projectRoot).value);
  }
  return [...files];
}
