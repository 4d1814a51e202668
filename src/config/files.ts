/**
 * Finds and reads the config layers: `--mcp-config` file, project `.pi/mcp.json`, user `<agent dir>/mcp.json`, the
 * manifests of installed pi packages, and the `mcp.json` bundled with the extension.
 */
import { readlink } from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { errorMessage } from "../common/errors.ts";
import { readUtf8File, UnreadableTextError } from "../common/utf8-file.ts";
import { layerConfigs } from "./layers.ts";
import { type PackageDir, readPackageLayer } from "./package-servers.ts";
import { expandHome } from "./substitute.ts";
import type { ConfigFileInput, ConfigProblem, ConfigSource, LayeredConfig } from "./types.ts";

export interface ConfigLocations {
  projectRoot: string;
  agentDir: string;
  bundledPath: string;
  /** From `--mcp-config`; relative paths are taken from the project root. */
  extraPath?: string;
  /** The installed pi packages, asked at each load (a package installed since a reload is found). */
  packages?: () => Promise<readonly PackageDir[]>;
}

export const PROJECT_CONFIG_PATH = path.join(".pi", "mcp.json");
export const USER_CONFIG_NAME = "mcp.json";

export function configSources(locations: ConfigLocations): ConfigSource[] {
  const { projectRoot, extraPath } = locations;
  // `--mcp-config=~/x.json`: no shell expands a `~` after `=`.
  const file = extraPath && path.resolve(projectRoot, expandHome(extraPath, os.homedir()));
  const flag: ConfigSource[] = file ? [{ scope: "flag", path: file }] : [];
  return [
    ...flag,
    { scope: "project", path: path.join(projectRoot, PROJECT_CONFIG_PATH) },
    { scope: "user", path: path.join(locations.agentDir, USER_CONFIG_NAME) },
    { scope: "bundled", path: locations.bundledPath },
  ];
}

/** What a failed read says, by its error code (other errors say themselves). */
const READ_ERRORS = new Map([
  ["ENOENT", "file not found"],
  ["EISDIR", "is a directory"],
  ["EACCES", "permission denied"],
]);

async function readSource(source: ConfigSource): Promise<{ input: ConfigFileInput; problem?: ConfigProblem }> {
  try {
    return { input: { source, text: await readUtf8File(source.path) } };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A link whose file is gone (a dotfiles checkout moved) is not a file never written: its servers are missing.
    const link = code === "ENOENT" ? await readlink(source.path).catch(() => undefined) : undefined;
    if (code === "ENOENT" && source.scope !== "flag" && link === undefined)
      return { input: { source, text: undefined } };
    const dangling = link && `it links to ${path.resolve(path.dirname(source.path), link)}, which does not exist`;
    const reason =
      error instanceof UnreadableTextError
        ? error.message
        : ((dangling || READ_ERRORS.get(code ?? "")) ?? String(error));
    const problem: ConfigProblem = { level: "error", source, message: `cannot read the file: ${reason}` };
    return { input: { source, text: undefined }, problem };
  }
}

/** Reads every layer (in parallel) and merges them. */
export async function loadLayeredConfig(
  locations: ConfigLocations,
): Promise<LayeredConfig & { sources: ConfigSource[] }> {
  const files = configSources(locations);
  let packages: readonly PackageDir[] = [];
  let packageProblem: ConfigProblem | undefined;
  try {
    packages = (await locations.packages?.()) ?? [];
  } catch (error) {
    // The user's and the project's servers load all the same; only the packages' are missing, and this says why.
    const source: ConfigSource = { scope: "package", path: path.join(locations.agentDir, "settings.json") };
    packageProblem = { level: "warning", source, message: `cannot list pi's packages: ${errorMessage(error)}` };
  }
  const reads = await Promise.all([...files.map(readSource), ...packages.map(readPackageLayer)]);
  const sources = reads.map((r) => r.input.source);
  const layered = layerConfigs(reads.map((r) => r.input));
  const readProblems = reads.flatMap((r) => (r.problem ? [r.problem] : []));
  if (packageProblem) readProblems.push(packageProblem);
  return { ...layered, problems: [...readProblems, ...layered.problems], sources };
}
