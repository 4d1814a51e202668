/**
 * pi 1.x groups tools in namespaces: a `codemode` script finds one server's tools with `searchTools(query, { namespace
 * })` and reads what the server is for with `describeNamespace(name)`, as it does for the tools of pi's built-in MCP.
 * Each MCP tool carries its server's namespace: named as the server's tool names begin (`mcp_github`), found by the
 * server's own name too, with the config's `description` and the server's `instructions` as they are when pi asks
 * (a reconnect may bring new ones), made safe for the model. pi 0.73 has no namespaces.
 */
import { shown, SHOWN } from "../common/terminal-text.ts";
import { toolNameStem } from "../translate/naming.ts";

/** pi 1.x's `ToolNamespace`. */
export interface ToolNamespace {
  name: string;
  aliases: string[];
  readonly description?: string;
  readonly instructions?: string;
}

/** What the namespace reads of its server, when pi asks. */
interface NamespaceSource {
  config: { prefix?: string; description?: string };
  /** The server's instructions, redacted. */
  instructions?: string;
  redact(text: string): string;
}

/** The namespace of `server`'s tools; `source` is its connection as it is when read. */
export function serverNamespace(server: string, source: () => NamespaceSource | undefined): ToolNamespace {
  const prefix = source()?.config.prefix;
  // Tools with bare names (an empty prefix) share no name stem: their namespace is named as the default stem is.
  const stem = (toolNameStem(server, prefix) || toolNameStem(server)).replace(/_+$/, "");
  return {
    name: stem,
    // Also as pi's built-in MCP names it (`mcp__github`): a script or skill written for that one finds it.
    aliases: [...new Set([server, `mcp__${server}`])].filter((alias) => alias !== stem),
    get description() {
      const connection = source();
      const description = connection?.config.description;
      return (description && shown(connection.redact(description), SHOWN.line, "prompt")) || undefined;
    },
    get instructions() {
      return shown(source()?.instructions ?? "", SHOWN.description) || undefined;
    },
  };
}
