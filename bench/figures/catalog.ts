/**
 * Catalog: what the system prompt's list of deferred tools (src/exposure/tool-catalog.ts) costs in every request, for
 * 24, 264 and 2,640 tools, in both forms: `names` (each server's tool names) and `brief` (the first words of each
 * description too), unbounded; and how many tools the default budget lists. The tools are the saved `tools/list`
 * answers of 16 public servers (test/fixtures/public-tools): 24 are filesystem, memory and sequential-thinking; 264 are
 * all of them; 2,640 are ten copies under other server names, as a large work hub would have.
 *
 * Tokens are characters / 4 (`estimatedTokens`). Computed, not timed: every run gives the same numbers.
 */
import { DEFAULT_TOOL_CATALOG } from "../../src/config/tool-catalog-setting.ts";
import type { ToolCatalogSetting } from "../../src/config/types.ts";
import { estimatedTokens } from "../../src/exposure/definition-cost.ts";
import { type CatalogGroup, catalogPrompt } from "../../src/exposure/tool-catalog.ts";
import { publicServers } from "../../test/fixtures/public-tools.ts";
import type { Figure, FigureSection } from "./figure.ts";

const FEW = ["filesystem", "memory", "sequential-thinking"];

function groups(copies: number, only?: string[]): CatalogGroup[] {
  const servers = publicServers().filter(({ server }) => !only || only.includes(server));
  const out: CatalogGroup[] = [];
  for (let copy = 1; copy <= copies; copy++) {
    for (const { server, tools } of servers) {
      out.push({
        server: copies === 1 ? server : `${server}-${copy}`,
        tools: tools.map((tool) => ({ name: tool.name, description: tool.description ?? "" })),
      });
    }
  }
  return out;
}

/** The catalog's tokens, and how many tools it lists by name. */
function cost(catalog: CatalogGroup[], setting: ToolCatalogSetting): { tokens: number; listed: number } {
  const text = catalogPrompt(catalog, [], setting) ?? "";
  const listedServers = new Set(
    text
      .split("\n")
      .filter((line) => line.startsWith("- "))
      .map((line) => line.slice(2, line.indexOf(":"))),
  );
  const listed = catalog.filter((g) => listedServers.has(g.server)).reduce((sum, g) => sum + g.tools.length, 0);
  return { tokens: estimatedTokens(text.length), listed };
}

export const catalogSection: FigureSection = {
  title: "catalog",
  async measure(): Promise<Figure[]> {
    const sizes = [
      { key: "small", catalog: groups(1, FEW) },
      { key: "public", catalog: groups(1) },
      { key: "large", catalog: groups(10) },
    ];
    const figures: Figure[] = [];
    for (const { key, catalog } of sizes) {
      const tools = catalog.reduce((sum, g) => sum + g.tools.length, 0);
      const detail = { servers: catalog.length, tools };
      for (const form of ["names", "brief"] as const) {
        const { tokens } = cost(catalog, { form, maxTokens: Number.MAX_SAFE_INTEGER });
        figures.push({
          id: `catalog.${key}.${form}.tokens`,
          label: `${tools} tools: ${form}, all listed`,
          value: tokens,
          unit: "tokens",
          detail: { ...detail, perTool: Math.round((tokens / tools) * 10) / 10 },
        });
      }
      const budgeted = cost(catalog, DEFAULT_TOOL_CATALOG);
      figures.push({
        id: `catalog.${key}.default.tokens`,
        label: `${tools} tools: the default (${DEFAULT_TOOL_CATALOG.form} up to ${DEFAULT_TOOL_CATALOG.maxTokens} tokens)`,
        value: budgeted.tokens,
        unit: "tokens",
        target: { op: "<=", value: DEFAULT_TOOL_CATALOG.maxTokens },
        detail: { ...detail, listed: budgeted.listed },
      });
    }
    return figures;
  },
};
