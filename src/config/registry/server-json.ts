/**
 * A server as the MCP registry describes it (`server.json`: its packages on npm, PyPI or a container registry, and its
 * remote endpoints), read defensively (the registry's moderation is permissive: any field may be missing or of the
 * wrong type), and the ways this bridge can run it turned into config entries. A value the server needs from the user
 * (an API key, a directory) is never written into the entry: a secret or a variable becomes `${NAME}` to set in the
 * environment, and a required argument without a value is a question for the user. Pure.
 */
import { isObject, type JsonObject } from "../../common/values.ts";

/** A value the server takes: fixed (`value`, where `{name}` refers to its `variables`), or the user's to give. */
interface RegistryInput {
  description?: string;
  isRequired?: boolean;
  isSecret?: boolean;
  value?: string;
  default?: string;
  choices?: string[];
  variables?: Record<string, RegistryInput>;
}

interface RegistryArgument extends RegistryInput {
  type: "positional" | "named";
  /** A named argument's flag, with its dashes. */
  name?: string;
  valueHint?: string;
}

/** An environment variable or an HTTP header. */
interface RegistryKeyValue extends RegistryInput {
  name: string;
}

interface RegistryPackage {
  registryType: string;
  identifier: string;
  version?: string;
  transport: string;
  runtimeArguments: RegistryArgument[];
  packageArguments: RegistryArgument[];
  environmentVariables: RegistryKeyValue[];
}

interface RegistryRemote {
  type: string;
  url: string;
  headers: RegistryKeyValue[];
  variables?: RegistryInput["variables"];
}

export interface RegistryServer {
  name: string;
  title?: string;
  description?: string;
  version?: string;
  packages: RegistryPackage[];
  remotes: RegistryRemote[];
}

const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);
const list = (value: unknown): JsonObject[] => (Array.isArray(value) ? value.filter(isObject) : []);

function readInput(raw: JsonObject): RegistryInput {
  const variables = isObject(raw.variables)
    ? Object.fromEntries(
        Object.entries(raw.variables).flatMap(([key, value]) => (isObject(value) ? [[key, readInput(value)]] : [])),
      )
    : undefined;
  return {
    description: text(raw.description),
    isRequired: raw.isRequired === true,
    isSecret: raw.isSecret === true,
    value: text(raw.value),
    default: text(raw.default),
    choices: Array.isArray(raw.choices) ? raw.choices.filter((c): c is string => typeof c === "string") : undefined,
    variables,
  };
}

function readArguments(value: unknown): RegistryArgument[] {
  return list(value).flatMap((raw) => {
    const type = raw.type === "named" ? "named" : raw.type === "positional" ? "positional" : undefined;
    if (!type || (type === "named" && !text(raw.name))) return [];
    return [{ ...readInput(raw), type, name: text(raw.name), valueHint: text(raw.valueHint) }];
  });
}

function readKeyValues(value: unknown): RegistryKeyValue[] {
  return list(value).flatMap((raw) => (text(raw.name) ? [{ ...readInput(raw), name: text(raw.name)! }] : []));
}

/** One server of a registry's answer (`{ server, _meta }`, or the server itself); undefined if it names none. */
export function readRegistryServer(value: unknown): RegistryServer | undefined {
  const raw = isObject(value) && isObject(value.server) ? value.server : value;
  if (!isObject(raw) || !text(raw.name)) return undefined;
  const packages = list(raw.packages).flatMap((p) =>
    text(p.registryType) && text(p.identifier)
      ? [
          {
            registryType: text(p.registryType)!,
            identifier: text(p.identifier)!,
            version: text(p.version),
            transport: isObject(p.transport) ? (text(p.transport.type) ?? "stdio") : "stdio",
            runtimeArguments: readArguments(p.runtimeArguments),
            packageArguments: readArguments(p.packageArguments),
            environmentVariables: readKeyValues(p.environmentVariables),
          },
        ]
      : [],
  );
  const remotes = list(raw.remotes).flatMap((r) => {
    const [type, url] = [text(r.type), text(r.url)];
    return type && url ? [{ type, url, headers: readKeyValues(r.headers), variables: readInput(r).variables }] : [];
  });
  return {
    name: text(raw.name)!,
    title: text(raw.title),
    description: text(raw.description),
    version: text(raw.version),
    packages,
    remotes,
  };
}

/** A way to run or reach a server: one of its packages, or one of its remote endpoints. */
export type RegistryWay =
  { kind: "package"; label: string; pkg: RegistryPackage } | { kind: "remote"; label: string; remote: RegistryRemote };

/** How each kind of package is run: the command, and the package as its argument. */
const RUNNERS: Record<string, { command: string; spec: (pkg: RegistryPackage) => string }> = {
  npm: { command: "npx", spec: (p) => (p.version ? `${p.identifier}@${p.version}` : p.identifier) },
  pypi: { command: "uvx", spec: (p) => (p.version ? `${p.identifier}==${p.version}` : p.identifier) },
  oci: {
    command: "docker",
    // An image named with its tag or digest already keeps it.
    spec: (p) => (p.version && !/[:@][^/]*$/.test(p.identifier) ? `${p.identifier}:${p.version}` : p.identifier),
  },
};

/** The ways this bridge can use: npm, PyPI and container packages that speak stdio, and remote endpoints. */
export function registryWays(server: RegistryServer): RegistryWay[] {
  const packages = server.packages
    .filter((pkg) => Object.hasOwn(RUNNERS, pkg.registryType) && pkg.transport === "stdio")
    .map((pkg): RegistryWay => ({
      kind: "package",
      label: `run it here: ${RUNNERS[pkg.registryType]!.command} ${RUNNERS[pkg.registryType]!.spec(pkg)}`,
      pkg,
    }));
  const remotes = server.remotes
    .filter((remote) => remote.type === "streamable-http" || remote.type === "sse")
    .map((remote): RegistryWay => ({ kind: "remote", label: `connect to it: ${remote.url}`, remote }));
  return [...packages, ...remotes];
}

/** A value the user is asked for: a required argument that has none. `key` identifies it in the answers. */
export interface RegistryQuestion {
  key: string;
  prompt: string;
  default?: string;
  choices?: string[];
}

/** `SOME_NAME` for `some-name`: the environment variable a `{some-name}` placeholder is read from. */
function variableName(name: string): string {
  return (
    name
      .replace(/[^A-Za-z0-9]+/g, "_")
      .replace(/^_+|_+$/g, "")
      .toUpperCase() || "VALUE"
  );
}

/** A fixed value with its `{placeholders}` read from the environment (`Bearer {token}` → `Bearer ${TOKEN}`), each
 * with its variable's fixed value or default. */
function filled(value: string, variables: RegistryInput["variables"] = {}): string {
  return value.replace(/\{([A-Za-z_][\w-]*)\}/g, (_, name: string) => {
    const known = Object.hasOwn(variables, name) ? variables[name] : undefined;
    return known?.value ?? keyValue({ ...known, name, isRequired: true })!;
  });
}

/** An environment variable's or a header's value in the entry, if it gets one. */
function keyValue(input: RegistryKeyValue): string | undefined {
  if (input.value !== undefined) return filled(input.value, input.variables);
  const name = variableName(input.name);
  if (input.isSecret || (input.isRequired && input.default === undefined)) return `\${${name}}`;
  return input.default !== undefined ? `\${${name}:-${input.default}}` : undefined;
}

/**
 * The config entry for `way`, with `answers` to its questions; `questions` lists those still unanswered (the entry is
 * then not to be used). Asked once with no answers, once more with them.
 */
export function registryEntry(
  way: RegistryWay,
  answers: Readonly<Record<string, string>> = {},
): { entry: JsonObject; questions: RegistryQuestion[] } {
  const questions: RegistryQuestion[] = [];
  const words = (args: readonly RegistryArgument[], where: string): string[] =>
    args.flatMap((arg, i) => {
      const key = `${where}.${i}`;
      let value = arg.value !== undefined ? filled(arg.value, arg.variables) : answers[key];
      // A secret is read from the environment when the server starts, never asked for and written into the file.
      if (value === undefined && arg.isRequired && arg.isSecret)
        value = `\${${variableName(arg.name ?? arg.valueHint ?? `${where}_${i}`)}}`;
      if (value === undefined && arg.isRequired) {
        const what = arg.description ?? arg.valueHint ?? arg.name ?? "a value";
        questions.push({
          key,
          prompt: `${what}${arg.name ? ` (${arg.name})` : ""}`,
          default: arg.default,
          choices: arg.choices,
        });
        value = "";
      }
      if (value === undefined) return [];
      return arg.type === "named" ? [arg.name!, value] : [value];
    });
  if (way.kind === "remote") {
    const headers = Object.fromEntries(
      way.remote.headers.map((header) => [header.name, keyValue(header)]).filter(([, value]) => value !== undefined),
    );
    const entry: JsonObject = { url: filled(way.remote.url, way.remote.variables) };
    if (way.remote.type === "sse") entry.type = "sse";
    if (Object.keys(headers).length) entry.headers = headers;
    return { entry, questions };
  }
  const { pkg } = way;
  const runner = RUNNERS[pkg.registryType]!;
  const env = Object.fromEntries(
    pkg.environmentVariables.map((v) => [v.name, keyValue(v)]).filter(([, value]) => value !== undefined),
  );
  const runtime = words(pkg.runtimeArguments, "runtimeArguments");
  const own = words(pkg.packageArguments, "packageArguments");
  const start =
    pkg.registryType === "oci"
      ? ["run", "-i", "--rm", ...runtime, ...Object.keys(env).flatMap((name) => ["-e", name])]
      : pkg.registryType === "npm"
        ? ["-y", ...runtime]
        : runtime;
  const entry: JsonObject = { command: runner.command, args: [...start, runner.spec(pkg), ...own] };
  if (Object.keys(env).length) entry.env = env;
  return { entry, questions };
}
