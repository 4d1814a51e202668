/**
 * What the bridge reads from pi's command line itself: the `--mcp-config <file>` flag, `--no-mcp`, and whether pi was
 * started only to print information.
 */

export const CONFIG_FLAG = "mcp-config";
/** pi 1.x's own flag for a run without MCP; the bridge reads it on both pi lines. */
export const NO_MCP_FLAG = "no-mcp";

/**
 * The `--mcp-config <file>` value from a command line. pi hands flag values to extensions only after their factories
 * have run, and the bridge needs the file inside its factory, so it reads the command line itself.
 */
export function configFlagFromArgv(argv: readonly string[]): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") break;
    if (arg === `--${CONFIG_FLAG}`) {
      const next = argv[i + 1];
      if (next !== undefined && !next.startsWith("-")) value = argv[++i];
    } else if (arg.startsWith(`--${CONFIG_FLAG}=`)) value = arg.slice(CONFIG_FLAG.length + 3);
  }
  return value;
}

/** pi invocations that load extensions only to list things (`--help`, `--list-models`) and then exit. */
const INFO_ONLY_FLAGS = new Set(["--help", "-h", "--list-models"]);

/** pi's own arguments: those after node and its script, up to a `--`. */
function piArguments(argv: readonly string[]): readonly string[] {
  const args = argv.slice(2);
  return args.includes("--") ? args.slice(0, args.indexOf("--")) : args;
}

/** True when pi was started only to print information, so connecting to servers would only slow it down. */
export function isInfoOnlyInvocation(argv: readonly string[]): boolean {
  return piArguments(argv).some((arg) => INFO_ONLY_FLAGS.has(arg));
}

/**
 * True when pi was started with `--no-mcp`: pi 1.x parses it itself and only keeps its own built-in MCP from loading,
 * so the bridge reads it from the command line, as it must decide before any server starts.
 */
export function noMcpInArgv(argv: readonly string[]): boolean {
  return piArguments(argv).includes(`--${NO_MCP_FLAG}`);
}
