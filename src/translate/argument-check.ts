/**
 * Checks a call's arguments against the server's own input schema, the one the model's copy was made portable from
 * (./portable-schema.ts widens where a provider cannot express a rule; this is where that rule still holds). Uses the
 * SDK's JSON Schema validator.
 */
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/client/validators/ajv";
import { isObject } from "../common/values.ts";
import { shown } from "../common/terminal-text.ts";

export type ArgumentCheck = (args: Record<string, unknown>) => string | undefined;

const validator = new AjvJsonSchemaValidator();

/**
 * A check for `schema`, or an error message when the validator cannot compile it (then only the server checks).
 * `$schema` and `$id` are left out: the validator knows one draft's keywords either way, and an `$id` would be shared
 * by every schema that names it (one server's could stand in for another's).
 */
export function argumentCheck(schema: unknown): { check?: ArgumentCheck; error?: string } {
  if (!isObject(schema)) return {};
  const { $schema: _draft, $id: _id, ...rest } = schema;
  try {
    const validate = validator.getValidator(rest);
    return {
      check: (args) => {
        const result = validate(args);
        return result.valid ? undefined : shown(result.errorMessage ?? "the arguments do not match", 2000);
      },
    };
  } catch (error) {
    return { error: shown(error instanceof Error ? error.message : String(error), 300, "line") };
  }
}
