/**
 * The top-level `"toolCatalog"` key of a config file: how the system prompt lists the tools that wait behind
 * `tool_search`. `"names"` (the default) lists each deferred server's tool names, `"brief"` adds the first words of
 * each description, `"off"` names the servers only; `{"form": "brief", "maxTokens": 4000}` sets the budget too. The
 * highest-priority file that sets it wins. Pure.
 */
import { quoteValue } from "../common/text.ts";
import { isObject } from "../common/values.ts";
import type { ConfigProblem, ConfigSource, ToolCatalogSetting } from "./types.ts";

export const TOOL_CATALOG_KEY = "toolCatalog";

/**
 * The catalog's default budget, in estimated tokens (characters / 4). Names cost about 5 tokens a tool, so this lists
 * every tool of a few hundred (264 public-server tools: about 1,100 tokens, where declaring them would cost about
 * 74,000) and names the servers beyond it (bench/figures/catalog.ts measures 24, 240 and 2,400 tools).
 */
const DEFAULT_CATALOG_TOKENS = 2_000;
export const DEFAULT_TOOL_CATALOG: ToolCatalogSetting = { form: "names", maxTokens: DEFAULT_CATALOG_TOKENS };

const FORMS: readonly string[] = ["names", "brief", "off"];

function readCatalog(value: unknown): ToolCatalogSetting | undefined {
  if (typeof value === "string")
    return FORMS.includes(value) ? { ...DEFAULT_TOOL_CATALOG, form: value as ToolCatalogSetting["form"] } : undefined;
  if (!isObject(value) || Object.keys(value).some((key) => key !== "form" && key !== "maxTokens")) return undefined;
  const { form = DEFAULT_TOOL_CATALOG.form, maxTokens = DEFAULT_CATALOG_TOKENS } = value;
  if (typeof form !== "string" || !FORMS.includes(form)) return undefined;
  if (typeof maxTokens !== "number" || !Number.isSafeInteger(maxTokens) || maxTokens < 0) return undefined;
  return { form: form as ToolCatalogSetting["form"], maxTokens };
}

/** The catalog a parsed file sets, if it sets one; a value that cannot be read is reported and the default used. */
export function toolCatalogSetting(
  doc: unknown,
  source: ConfigSource,
): { catalog?: ToolCatalogSetting; problem?: ConfigProblem } {
  if (!isObject(doc) || doc[TOOL_CATALOG_KEY] === undefined || doc[TOOL_CATALOG_KEY] === null) return {};
  const catalog = readCatalog(doc[TOOL_CATALOG_KEY]);
  if (catalog) return { catalog };
  const message =
    `\`${TOOL_CATALOG_KEY}\` must be "names", "brief" or "off", or {"form": "names", "maxTokens": ${DEFAULT_CATALOG_TOKENS}} ` +
    `(got ${quoteValue(doc[TOOL_CATALOG_KEY])}); the default, "names" up to ${DEFAULT_CATALOG_TOKENS} tokens, is used`;
  return { problem: { level: "warning", source, message } };
}
