/**
 * Servers a pi package brings: the `pi.mcp` object of its package.json, read as a config file of the `package` layer.
 * Only its server maps are read: a package's top-level defaults (approval, exposure, sandbox) would change how the
 * user's other servers run. A local server runs in its package's folder unless it says otherwise, so the usual
 * `node ./server.js` of a package finds its file wherever the package is installed.
 */
import * as path from "node:path";
import { errorMessage } from "../common/errors.ts";
import { shown, SHOWN } from "../common/terminal-text.ts";
import { readUtf8File } from "../common/utf8-file.ts";
import { isObject } from "../common/values.ts";
import { parseConfigText, SERVER_MAP_KEYS } from "./parse.ts";
import type { ConfigFileInput, ConfigProblem, ConfigSource } from "./types.ts";

/** An installed pi package: its folder, and whether it is installed for the user or in the project. */
export interface PackageDir {
  dir: string;
  installed: "user" | "project";
}

type LayerRead = { input: ConfigFileInput; problem?: ConfigProblem };

/** No servers from this package, and why when something is wrong with its manifest. */
function skipped(source: ConfigSource, why?: string): LayerRead {
  const message = `${why}; the package's MCP servers are skipped`;
  return { input: { source, text: undefined }, ...(why ? { problem: { level: "error", source, message } } : {}) };
}

/** The package's servers as a config layer: `text` undefined when its manifest declares none. */
export async function readPackageLayer(pkg: PackageDir): Promise<LayerRead> {
  const manifest = path.join(pkg.dir, "package.json");
  const { installed } = pkg;
  let source: ConfigSource = { scope: "package", path: manifest, package: { name: path.basename(pkg.dir), installed } };
  let text: string;
  try {
    text = await readUtf8File(manifest);
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
    return skipped(source, missing ? undefined : `cannot read the package's manifest: ${errorMessage(error)}`);
  }
  const { value, error } = parseConfigText(text);
  if (error !== undefined) return skipped(source, error);
  const json = isObject(value) ? value : {};
  // The name is shown in `/mcp` and in messages: kept to one harmless line.
  if (typeof json.name === "string" && json.name !== "")
    source = { ...source, package: { name: shown(json.name, SHOWN.name, "line"), installed } };
  const mcp = isObject(json.pi) ? json.pi.mcp : undefined;
  if (mcp === undefined) return skipped(source);
  if (!isObject(mcp)) return skipped(source, "`pi.mcp` must be an object with an `mcpServers` object");
  const layer: Record<string, unknown> = {};
  for (const key of SERVER_MAP_KEYS) if (key in mcp) layer[key] = inPackageDir(mcp[key], pkg.dir);
  return { input: { source, text: JSON.stringify(layer) } };
}

/** A server map with each local server's `cwd` taken from the package folder (the folder itself when unset). */
function inPackageDir(map: unknown, dir: string): unknown {
  if (!isObject(map)) return map;
  const entries = Object.entries(map).map(([name, entry]) => {
    if (!isObject(entry) || (typeof entry.command !== "string" && !Array.isArray(entry.command))) return [name, entry];
    const cwd = entry.cwd;
    // `~/…` and `${VAR}` are expanded later, where every layer's are.
    if (cwd === undefined || cwd === null) return [name, { ...entry, cwd: dir }];
    if (typeof cwd === "string" && !/^(~|\$\{)/.test(cwd)) return [name, { ...entry, cwd: path.resolve(dir, cwd) }];
    return [name, entry];
  });
  return Object.fromEntries(entries);
}
