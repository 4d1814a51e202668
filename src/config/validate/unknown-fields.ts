/**
 * Misspelt fields of a server entry. Other clients' fields are ignored, but one a letter or two from a field the bridge
 * reads (`timout`, `headrs`) is surely that field: ignored silently, it leaves a server run as if it were not set.
 */
import { shown } from "../../common/terminal-text.ts";
import { closestMatch } from "../../common/text.ts";
import { isObject, type JsonObject } from "../../common/values.ts";

/** Every field of a server entry the bridge reads (docs/configuration.md lists them; a test keeps the two equal). */
export const SERVER_FIELDS: readonly string[] = `command args env environment cwd sandbox url headers headersTtl type
  timeout initTimeout requestTimeout enabled disabled prefix description shared lazy reconnect restartOnCrash maxRestarts
  maxTools maxSchemaBytes maxMessageBytes healthCheckInterval pingTimeout autoApprove autoApproveReadOnly resendAfterDrop
  sampling roots exposure toolExposure protocolVersion auth oauth transport transportType serverUrl httpUrl dev`.split(
  /\s+/,
);

/** Near one of ours but not meant as it: VS Code's `envFile` (warned about on its own), a `comment`. */
const NOT_MISSPELT = new Set(["envFile", "comment"]);
/** Plain in meaning but far from our name for it. */
const MEANT: Readonly<Record<string, string>> = { cmd: "command" };
/** The bridge's own objects inside an entry, whose every field is known. */
const NESTED = { reconnect: ["maxAttempts", "initialDelay", "maxDelay"], shared: ["idleSeconds"] };

/** A warning for each field that looks like a misspelt field of ours, and for each unknown field of our objects. */
export function misspeltFieldWarnings(entry: JsonObject): string[] {
  const unknown = (field: string, hint: string) => `unknown field \`${shown(field, 60, "line")}\` is ignored; ${hint}`;
  const warnings: string[] = [];
  for (const key of Object.keys(entry)) {
    if (SERVER_FIELDS.includes(key) || NOT_MISSPELT.has(key)) continue;
    const guess = Object.hasOwn(MEANT, key) ? MEANT[key] : closestMatch(key, SERVER_FIELDS);
    if (guess) warnings.push(unknown(key, `did you mean \`${guess}\`?`));
  }
  for (const [field, fields] of Object.entries(NESTED)) {
    const value = entry[field];
    for (const key of isObject(value) ? Object.keys(value).filter((k) => !fields.includes(k)) : []) {
      const guess = closestMatch(key, fields);
      const hint = guess ? `did you mean \`${field}.${guess}\`?` : `its fields are \`${fields.join("`, `")}\``;
      warnings.push(unknown(`${field}.${key}`, hint));
    }
  }
  return warnings;
}
