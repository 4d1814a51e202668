/**
 * Which pi the in-process tests run against: pi 0.73 (`npm test`'s first pass, Node 20) or pi 1.x (its second pass,
 * through test/pi1x/run.mjs on Node 22, which maps the `@mariozechner/*` imports to pi 1.x's packages).
 */
export type PiLine = "0.73" | "1.x";

export const PI_LINE: PiLine = process.env.MCP_BRIDGE_TEST_PI === "1.x" ? "1.x" : "0.73";
