/** Types of ./node22.mjs, for the TypeScript tests and benchmarks that look for pi 1.x's Node 22. */
export declare const PI1X_DIR: string;
export declare function run(
  command: string,
  args: string[],
  options?: import("node:child_process").SpawnSyncOptions,
): number;
export declare function ensureInstalled(dir: string, what: string): void;
export declare function node22(): string | undefined;
