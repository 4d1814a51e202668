/**
 * Checks a value against one of a server's schemas with the SDK's JSON Schema validator: a call's arguments against the
 * tool's own input schema, the one the model's copy was made portable from (./portable-schema.ts widens where a
 * provider cannot express a rule; this is where that rule still holds), and a result's structured content against its
 * output schema.
 */
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/client/validators/ajv";
import { errorMessage } from "../common/errors.ts";
import { isObject } from "../common/values.ts";
import { shown } from "../common/terminal-text.ts";

/** What is wrong with a value, or undefined when it fits. */
export type SchemaCheck = (value: unknown) => string | undefined;

const validator = new AjvJsonSchemaValidator();

/**
 * A check for `schema`, or an error message when the validator cannot compile it (then only the server checks).
 * `$id` is left out: it would be shared by every schema that names it (one server's could stand in for another's).
 * `$schema` picks the draft where the validator knows it (draft-07's tuple `items` is no 2020-12 schema); a draft it
 * does not know is read as 2020-12.
 */
export function schemaCheck(schema: unknown): { check?: SchemaCheck; error?: string } {
  if (!isObject(schema)) return {};
  const { $schema: _draft, $id: _id, ...rest } = schema;
  try {
    const draft = typeof schema.$schema === "string" ? { $schema: schema.$schema } : {};
    let validate: ReturnType<typeof validator.getValidator>;
    // It tells the console of each format it does not know (pydantic's `path`), which it ignores: over pi's screen.
    const warn = console.warn;
    console.warn = () => {};
    try {
      validate = validator.getValidator({ ...rest, ...draft });
    } catch {
      validate = validator.getValidator(rest);
    } finally {
      console.warn = warn;
    }
    return {
      check: (value) => {
        const result = validate(value);
        return result.valid ? undefined : shown(result.errorMessage ?? "it does not match", 2000);
      },
    };
  } catch (error) {
    return { error: shown(errorMessage(error), 300, "line") };
  }
}
