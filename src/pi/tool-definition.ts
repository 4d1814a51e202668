/**
 * One MCP tool as a pi tool: its label and description, parameters pi validates before a call, and an `execute` that
 * calls the tool through its server's connection (looked up at call time, so a reconnect is picked up), streams its
 * progress, and turns the result into pi content — text over pi's limits cut the way pi's own tools cut it, with the
 * whole text saved to a file the model is told about.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  formatSize,
  type ToolDefinition,
  truncateHead,
} from "@mariozechner/pi-coding-agent";
import type { Progress, Tool } from "@modelcontextprotocol/client";
import type { TSchema } from "typebox";
import { Compile } from "typebox/compile";
import type { ServerConnection } from "../connection/server-connection.ts";
import { offersResources } from "../connection/server-resources.ts";
import { lazy } from "../common/lazy.ts";
import type { SchemaCheck } from "../translate/schema-check.ts";
import { normalizeToolResult, type PiContent } from "../translate/output.ts";
import { scriptResult, scriptResultSchema } from "../translate/script-result.ts";
import { type McpProvenance, mcpProvenance } from "../translate/provenance.ts";
import {
  checkedAsGiven,
  inModelNames,
  type NormalizedSchema,
  normalizeInputSchema,
  OPEN_OBJECT_SCHEMA,
  requiredDefaults,
  serverArguments,
  withoutRefusedNulls,
} from "../translate/schema.ts";
import { withToolHints } from "./pi-line.ts";
import { serverNamespace } from "./tool-namespace.ts";
import { inToolSpan } from "../telemetry/tool-span.ts";

export interface ToolDetails {
  server: string;
  tool: string;
  provenance: McpProvenance;
  structuredContent?: unknown;
  /** How `structuredContent` misses the tool's `outputSchema` (or that it is absent), where it does. */
  outputSchemaMismatch?: string;
  truncated?: { fullOutputPath: string; totalBytes: number };
  progress?: Progress;
}

export type McpToolDefinition = ToolDefinition<TSchema, ToolDetails>;

/** The tool ran and answered with an error (`isError`): pi gives the model its text; other callers tell it apart. */
export class ToolReportedError extends Error {}

export interface ToolSource {
  /** The name the model sees. */
  name: string;
  server: string;
  tool: Tool;
  description: string;
  /** The server's connection as it is when the tool is called. */
  connectionFor(server: string): ServerConnection | undefined;
  /** Tells the user about a schema that had to be changed or could not be used. */
  note(text: string): void;
  /** The rule keywords of the tool's schema the model's copy leaves out (`not`, `if`, …), if any. */
  uncarried?(keywords: string[]): void;
  /**
   * Whether this pi hands scripts a tool's structured result (pi 1.x's `codemode`): the tool then declares the shape of
   * the server's `CallToolResult` as its output schema, returns that result as `structuredContent`, and an `isError`
   * result as an error result that keeps it; it is in its server's namespace (./tool-namespace.ts). pi 0.73 has no
   * such fields and takes an error only thrown.
   */
  scriptResults?: boolean;
}

function progressText(progress: Progress): string {
  const amount = progress.total !== undefined ? `${progress.progress}/${progress.total}` : `${progress.progress}`;
  return progress.message ? `progress ${amount}: ${progress.message}` : `progress ${amount}`;
}

/**
 * Whether `text` is surely under both caps without counting: at most 3 UTF-8 bytes per UTF-16 unit, and no more
 * lines than characters. Most tool results are, and are passed on without the line count.
 */
function surelyUncapped(text: string): boolean {
  return text.length * 3 <= DEFAULT_MAX_BYTES && text.length < DEFAULT_MAX_LINES;
}

/** Caps text the way pi's own tools do; the whole text goes to a temp file the model is told about. */
export async function capText(
  text: string,
  server: string,
  tool: string,
): Promise<{ text: string; truncated?: ToolDetails["truncated"] }> {
  const result = truncateHead(text, { maxBytes: DEFAULT_MAX_BYTES, maxLines: DEFAULT_MAX_LINES });
  if (!result.truncated) return { text };
  const dir = await mkdtemp(path.join(tmpdir(), "pi-mcp-"));
  const file = path.join(dir, `${`${server}-${tool}`.replace(/[^A-Za-z0-9_.-]/g, "_")}.txt`);
  await writeFile(file, text, { mode: 0o600 });
  // A first line over the cap (minified JSON) would leave the model nothing: its head is kept, cut at a character.
  const cut = result.firstLineExceedsLimit;
  const shown = cut ? Buffer.from(text.slice(0, DEFAULT_MAX_BYTES)).toString("utf8", 0, DEFAULT_MAX_BYTES) : "";
  const head = cut ? shown.replace(/\uFFFD$/, "") : result.content;
  const note =
    `\n\n[Output truncated: ${cut ? "part of line 1" : result.outputLines} of ${result.totalLines} lines ` +
    `(${formatSize(Buffer.byteLength(head))} of ${formatSize(result.totalBytes)}). Full output saved to: ${file}]`;
  return { text: head + note, truncated: { fullOutputPath: file, totalBytes: result.totalBytes } };
}

/** The tool's input schema as pi will validate it; one pi could not compile becomes an open object, with a note. */
function parameters(source: ToolSource, { schema, warnings, uncarried }: NormalizedSchema): TSchema {
  const { server, tool, note } = source;
  for (const warning of warnings) note(`MCP server '${server}', tool '${tool.name}': ${warning}`);
  if (uncarried.length) source.uncarried?.(uncarried);
  try {
    // pi validates arguments with TypeBox before execute; a schema it cannot compile would fail every call.
    Compile(schema as TSchema);
    return checkedAsGiven(schema) as TSchema;
  } catch (error) {
    note(
      `MCP server '${server}', tool '${tool.name}': input schema cannot be used (${String(error)}); arguments are passed through unchecked`,
    );
    return checkedAsGiven({ ...OPEN_OBJECT_SCHEMA, properties: {} }) as TSchema;
  }
}

const checker = lazy(() => import("../translate/schema-check.ts"));

/**
 * One of the server's schemas as a check, built at the first call (the checker, the SDK's JSON Schema validator, loads
 * then too, not with pi's start). The input schema checks the arguments: the model's copy may be wider (see
 * ../translate/portable-schema.ts), and a mistake caught here gets the model a clear message without a round trip.
 */
function lazyCheck(schema: unknown, cannotCompile: (error: string) => void): () => Promise<SchemaCheck | undefined> {
  let built: Promise<SchemaCheck | undefined> | undefined;
  const build = async () => {
    const { schemaCheck } = await checker();
    const { check, error } = schemaCheck(schema);
    if (error) cannotCompile(error);
    return check;
  };
  return () => (built ??= build());
}

/**
 * How a result misses the tool's output schema, if it does. The result is the model's all the same: the tool ran (what
 * it did is done), and its text says what it did; a server's schema that is out of date with its own results (common)
 * must not turn that into a failure the model would try again.
 */
function outputSchemaCheck(source: ToolSource): (structured: unknown) => Promise<string | undefined> {
  const { server, tool, note } = source;
  const check = lazyCheck(tool.outputSchema, (error) =>
    note(
      `MCP server '${server}', tool '${tool.name}': its output schema cannot be compiled (${error}); its results are not checked against it`,
    ),
  );
  return async (structured) => (structured === undefined ? "no structured content" : (await check())?.(structured));
}

export function toolDefinition(source: ToolSource): McpToolDefinition {
  const { server, tool } = source;
  const originalName = tool.name;
  const title = tool.title || tool.annotations?.title || originalName;
  const provenance = mcpProvenance(server, originalName);
  const checkFor = lazyCheck(tool.inputSchema, (error) =>
    source.note(
      `MCP server '${server}', tool '${originalName}': its input schema cannot be compiled (${error}); only the server checks the arguments`,
    ),
  );
  const checkOutput = tool.outputSchema && outputSchemaCheck(source);
  // As the server wrote them: the tool as listed has its secrets hidden, and a default that is one must reach it as is.
  const listed = source.connectionFor(server)?.toolList.definition(originalName);
  const defaults = requiredDefaults((listed ?? tool).inputSchema);
  const normalized = normalizeInputSchema(tool.inputSchema);
  const { renamed } = normalized;
  const checked = parameters(source, normalized);
  // Permission extensions on pi 1.x read the server's hints (read-only, destructive…) from pi's tool list.
  return withToolHints<McpToolDefinition>(
    {
      name: source.name,
      label: `${title} (${server})`,
      description: source.description,
      parameters: checked,
      prepareArguments: (args) => withoutRefusedNulls(args, checked) as Record<string, unknown>,
      ...(source.scriptResults && {
        outputSchema: scriptResultSchema(tool.outputSchema),
        namespace: serverNamespace(server, () => source.connectionFor(server)),
      }),
      execute: async (_toolCallId, params, signal, onUpdate) => {
        const connection = source.connectionFor(server);
        if (!connection)
          throw new Error(`MCP server '${server}' is no longer configured; its tool '${originalName}' cannot run`);
        const given = (params ?? {}) as Record<string, unknown>;
        const args = defaults || renamed ? serverArguments(given, defaults, renamed) : given;
        const mismatch = (await checkFor())?.(args);
        if (mismatch)
          throw new Error(
            `The arguments do not match the input schema of tool '${originalName}' (MCP server '${server}'): ${renamed ? inModelNames(mismatch, renamed) : mismatch}. Fix the arguments and call the tool again.`,
          );
        const result = await inToolSpan(server, originalName, () =>
          connection.callTool(originalName, args, {
            signal,
            onProgress: (progress) => {
              const note = typeof progress === "string";
              onUpdate?.({
                content: [{ type: "text", text: note ? progress : progressText(progress) }],
                details: { server, tool: originalName, provenance, ...(!note && { progress }) },
              });
            },
          }),
        );
        // A resource link names its server for read_mcp_resource only where that tool reaches the server.
        const normalized = normalizeToolResult(result, offersResources(connection) ? server : undefined);
        const details: ToolDetails = { server, tool: originalName, provenance };
        const forScripts = source.scriptResults ? { structuredContent: scriptResult(result) } : {};
        if (normalized.isError) {
          const text =
            normalized.text || `MCP tool '${originalName}' on server '${server}' reported an error without a message`;
          const advice = connection.toolErrorAdvice(text);
          const shown = surelyUncapped(text) ? text : (await capText(text, server, originalName)).text;
          const message = advice ? `${shown}\n\n${advice}` : shown;
          if (!source.scriptResults) throw new ToolReportedError(message);
          return { content: [{ type: "text", text: message }], details, ...forScripts, isError: true };
        }
        if (result.structuredContent !== undefined) details.structuredContent = result.structuredContent;
        const unfit = checkOutput && (await checkOutput(result.structuredContent));
        if (unfit) {
          details.outputSchemaMismatch = unfit;
          const passed = "results are passed on as the server sent them";
          connection.resultFinding(originalName, `a result does not match its output schema (${unfit}); ${passed}`);
        }
        const content: PiContent[] = [];
        for (const part of normalized.content) {
          if (part.type !== "text") {
            content.push(part);
            continue;
          }
          const capped = surelyUncapped(part.text)
            ? { text: part.text }
            : await capText(part.text, server, originalName);
          if (capped.truncated) details.truncated = capped.truncated;
          content.push({ type: "text", text: capped.text });
        }
        return { content, details, ...forScripts };
      },
    },
    tool.annotations,
  );
}

/**
 * A name pi keeps (it cannot unregister one) for a tool that is gone from it: the same definition, its description
 * saying why, and an `execute` that explains instead of calling anything.
 */
export function unavailableDefinition(
  definition: McpToolDefinition,
  name: string,
  why: string,
  message: string,
): McpToolDefinition {
  return {
    ...definition,
    name,
    description: `(No longer available: ${why}.) ${definition.description}`,
    execute: async () => {
      throw new Error(message);
    },
  };
}
