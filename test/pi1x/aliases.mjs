/**
 * Runs the tests' own imports of pi 0.73 (`@mariozechner/*`) against pi 1.x (`@earendil-works/*`, installed in this
 * folder), the same mapping pi 1.x applies to an extension it loads. Registered with `--import` by ./run.mjs.
 */
import { register } from "node:module";

register("./alias-hooks.mjs", import.meta.url);
