/**
 * The error every config-file edit throws when it refuses: text that does not parse, a top level that is not an
 * object, a file that cannot be read or written, or a server the file does not have.
 */

export type ConfigWriteErrorReason = "unparsable" | "not-object" | "io" | "missing";

export class ConfigWriteError extends Error {
  constructor(
    readonly reason: ConfigWriteErrorReason,
    message: string,
  ) {
    super(message);
    this.name = "ConfigWriteError";
  }
}
