// One import-time sample for bench/figures/install.ts: loads one extension the way pi 0.73.1 does (its own loader:
// jiti, with pi's packages mapped to pi's copies, then the extension's factory) in a fresh process, after pi itself is
// loaded, and prints {"ms": <time to load it>}. The caller sets HOME, PI_CODING_AGENT_DIR and the working directory to
// empty temporary ones, so no other extension or server config is found.
//
//   node bench/import-child.mjs <extension path>
import { discoverAndLoadExtensions } from "@mariozechner/pi-coding-agent";

const extension = process.argv[2];
if (!extension) throw new Error("usage: import-child.mjs <extension path>");
const started = performance.now();
const loaded = await discoverAndLoadExtensions([extension], process.cwd(), process.env.PI_CODING_AGENT_DIR);
const ms = performance.now() - started;
if (loaded.errors.length) throw new Error(loaded.errors.map((e) => e.error).join("; "));
if (loaded.extensions.length !== 1) throw new Error(`expected one extension, loaded ${loaded.extensions.length}`);
console.log(JSON.stringify({ ms }));
// The bridge keeps its (empty) server set running until pi's session ends; this process only wanted the time.
process.exit(0);
