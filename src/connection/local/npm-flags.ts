/** npm's own flags on an npx command line, before its package (after it, the words are the program's). Pure. */

/** npm's flags that take a value, which may follow as the next argument (then it is no package). */
export const NPM_VALUE_FLAG =
  /^(--(registry|cache|userconfig|globalconfig|prefix|loglevel|logs-dir|call|workspace)|-[cw])$/;

/** The value npx's arguments give to setting `name` before the package: `--name <value>` or `--name=<value>`. */
export function npmFlag(args: readonly string[], name: string): string | undefined {
  for (let i = args[0] === "exec" || args[0] === "x" ? 1 : 0; i < args.length && /^-./.test(args[i]!); i++) {
    if (args[i] === `--${name}`) return args[i + 1];
    if (args[i]!.startsWith(`--${name}=`)) return args[i]!.slice(name.length + 3);
    if (NPM_VALUE_FLAG.test(args[i]!)) i++;
  }
  return undefined;
}
