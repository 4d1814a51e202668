import { Compile } from "typebox/compile";
import { normalizeInputSchema } from "../src/tools/schema.ts";
for (const depth of [50, 100, 200, 300, 400]) {
  let s: any = { type: "string" };
  for (let i = 0; i < depth; i++) s = { type: "object", properties: { a: s } };
  const input = { type: "object", properties: { x: s } };
  const len = JSON.stringify(input).length;
  let r = `depth ${depth} bytes ${len}:`;
  try { normalizeInputSchema(input); r += " normalize ok"; } catch (e) { r += " normalize " + e; }
  try { Compile(input as any); r += " compile ok"; } catch (e) { r += " compile " + String(e).slice(0, 60); }
  console.log(r);
}
let big: any = { type: "object", properties: {} };
for (let i = 0; i < 20000; i++) big.properties["p" + i] = { type: "string", description: "x".repeat(80) };
const t = Date.now();
try { Compile(big); console.log("2MB compile ok", JSON.stringify(big).length, Date.now() - t); } catch (e) { console.log("2MB", String(e).slice(0, 80)); }
