/**
 * Where something pi has came from: every tool (and later prompt command and resource tool) the bridge registers
 * carries this, so `/mcp tools`, the bus events and other extensions can tell an MCP server's tool from pi's own and
 * name the server and the name it has there. Pure.
 */
export interface McpProvenance {
  source: "mcp";
  /** The server's name in `mcp.json`. */
  serverId: string;
  /** The tool's (prompt's, resource's) name on that server, before pi's naming. */
  originalName: string;
}

export function mcpProvenance(serverId: string, originalName: string): McpProvenance {
  return { source: "mcp", serverId, originalName };
}

/** One line for people: `mcp:<server>/<original name>`. */
export function formatProvenance(provenance: McpProvenance): string {
  return `${provenance.source}:${provenance.serverId}/${provenance.originalName}`;
}
