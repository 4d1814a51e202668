/**
 * Variables in an imported entry: each client's syntax (`${input:…}`, `${workspaceFolder}`, opencode's `{env:…}`)
 * becomes mcp-bridge's `${VAR}`, and a reference that cannot be carried over is noted. Pure.
 */
import * as path from "node:path";
import { isObject, type JsonObject } from "../../common/values.ts";
import { inputVarName, isVarReference } from "../substitute.ts";
import type { Notes } from "./convert.ts";
import type { ClientId, ImportLocations, VsCodeInput } from "./import-types.ts";

export interface RewriteContext {
  loc: ImportLocations;
  inputs: Map<string, VsCodeInput>;
  notes: Notes;
  /** The client's name, for notes. */
  label: string;
}

/** Rewrites, in place, every string of the entry a variable may appear in, naming its field in notes. */
export function rewriteVariables(client: ClientId, entry: JsonObject, ctx: RewriteContext): void {
  const fn = (text: string, field: string) => rewriteText(client, text, field, ctx);
  if (typeof entry.command === "string") entry.command = fn(entry.command, "command");
  if (Array.isArray(entry.args))
    entry.args = entry.args.map((a, i) => (typeof a === "string" ? fn(a, `args[${i}]`) : a));
  if (typeof entry.cwd === "string") entry.cwd = fn(entry.cwd, "cwd");
  if (typeof entry.url === "string") entry.url = fn(entry.url, "url");
  for (const field of ["env", "headers"]) {
    const map = entry[field];
    if (!isObject(map)) continue;
    for (const [k, v] of Object.entries(map)) if (typeof v === "string") map[k] = fn(v, `${field}.${k}`);
  }
  if (isObject(entry.auth))
    for (const [k, v] of Object.entries(entry.auth)) if (typeof v === "string") entry.auth[k] = fn(v, `auth.${k}`);
}

/** Turns a client's variable syntax into mcp-bridge's, and notes any reference that cannot be carried over. */
function rewriteText(client: ClientId, text: string, field: string, ctx: RewriteContext): string {
  let out = text;
  if (client === "vscode" || client === "cursor") out = rewriteEditorVariables(client, out, ctx);
  if (client === "opencode") {
    // opencode's `{env:VAR}` (no dollar sign) is our `${VAR}`.
    out = out.replace(/(?<!\$)\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => `\${${name}}`);
    for (const match of out.matchAll(/(?<!\$)\{file:[^}]*\}/g))
      ctx.notes.add(
        `\`${match[0]}\` in \`${field}\` (opencode reads a file there) is not supported and is passed on as written`,
      );
  }
  // A default may hold one reference of its own: `${A:-${B}}`.
  for (const match of out.matchAll(/\$\{((?:[^$}]|\$(?!\{)|\$\{[^}]*\})*)\}/g)) {
    // mcp-bridge resolves `${VAR}`, `${VAR:-default}`, `${env:VAR}` (and `${PROJECT_ROOT}`) itself.
    if (!isVarReference(match[1]!))
      ctx.notes.add(
        `\`${match[0]}\` in \`${field}\` is a ${ctx.label} variable mcp-bridge cannot resolve; it is passed on as written`,
      );
  }
  return out;
}

/** VS Code and Cursor share predefined variables; VS Code adds `${input:…}` prompts. */
function rewriteEditorVariables(client: ClientId, text: string, ctx: RewriteContext): string {
  const p = ctx.loc.platform === "win32" ? path.win32 : path.posix;
  return text.replace(/\$\{([^}]*)\}/g, (match, inner: string) => {
    switch (inner) {
      case "workspaceFolder":
        ctx.notes.add("`${workspaceFolder}` became `${PROJECT_ROOT}`, the directory pi starts in");
        return "${PROJECT_ROOT}";
      case "userHome":
        return ctx.loc.home;
      case "workspaceFolderBasename":
        ctx.notes.add("`${workspaceFolderBasename}` became this project's folder name");
        return p.basename(ctx.loc.projectRoot);
      case "pathSeparator":
      case "/":
        return p.sep;
    }
    if (client !== "vscode" || !inner.startsWith("input:")) return match;
    const id = inner.slice("input:".length);
    const input = ctx.inputs.get(id);
    const name = inputVarName(id);
    const about = input?.description ? ` (${input.description})` : "";
    ctx.notes.add(`VS Code input "${id}"${about} became \${${name}}: set ${name} in the environment pi starts from`);
    // A visible default can stay as the fallback; a password prompt's default is not copied anywhere.
    const fallback =
      input && !input.password && input.default !== undefined && !input.default.includes("}")
        ? `:-${input.default}`
        : "";
    return `\${${name}${fallback}}`;
  });
}
