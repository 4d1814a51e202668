/**
 * A server run in a container (`docker run -i --rm -e GITHUB_PERSONAL_ACCESS_TOKEN ghcr.io/github/github-mcp-server`)
 * talks over the stdin and stdout of the container engine's command line, and gets only what that passes in. Flags
 * that look harmless in a terminal break it here, silently: without `-i` the container's stdin stays closed (the server
 * sees no message and exits, or waits); `-t` asks for a terminal pi's pipe is not; `-d` returns at once; and `-e NAME`
 * passes NAME from the engine's own environment, which holds only what the entry's `env` names, so a token exported in
 * the user's shell never reaches the server, which starts and fails on every call instead. Pure.
 */
import { programName } from "../../common/text.ts";

const ENGINES = new Set(["docker", "podman", "nerdctl"]);
/** The short flags of `run` that take no value (`-it`, `-d`); any other short flag takes one (`-e`, `-v`, `-p`). */
const SHORT_SWITCHES = new Set(["i", "t", "d", "P", "q"]);
/** The long flags of `run` that take no value; any other takes one, after `=` or as the next argument. */
const LONG_SWITCHES = new Set(
  "--interactive --tty --detach --rm --init --privileged --read-only --publish-all --quiet --sig-proxy --no-healthcheck --oom-kill-disable".split(
    " ",
  ),
);

interface RunFlag {
  name: string;
  value?: string;
}

/** The flags `run` reads before the image (where the image's own arguments begin), if `args` run a container. */
function runFlags(args: readonly string[]): RunFlag[] | undefined {
  const start = args[0] === "run" ? 1 : args[0] === "container" && args[1] === "run" ? 2 : -1;
  if (start < 0) return undefined;
  const flags: RunFlag[] = [];
  for (let i = start; i < args.length && args[i]!.startsWith("-"); i++) {
    const arg = args[i]!;
    if (arg.startsWith("--")) {
      const [name, value] = arg.includes("=")
        ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)]
        : [arg];
      flags.push({ name: name!, value: value ?? (LONG_SWITCHES.has(name!) ? undefined : args[++i]) });
    } else if ([...arg.slice(1)].every((letter) => SHORT_SWITCHES.has(letter)))
      for (const letter of arg.slice(1)) flags.push({ name: `-${letter}` });
    else flags.push({ name: arg.slice(0, 2), value: arg.length > 2 ? arg.slice(2) : args[++i] });
  }
  return flags;
}

/** What would keep a server in a container from working over stdio, as warnings on the entry. */
export function containerRunWarnings(
  command: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
): string[] {
  const engine = programName(command);
  const flags = ENGINES.has(engine) ? runFlags(args) : undefined;
  if (!flags) return [];
  const has = (...names: string[]) => flags.some(({ name, value }) => names.includes(name) && value !== "false");
  const warnings: string[] = [];
  if (!has("-i", "--interactive"))
    warnings.push(
      `\`${engine} run\` without \`-i\`: the container's stdin stays closed, so the server never gets pi's messages; add "-i" after "run" in \`args\``,
    );
  if (has("-t", "--tty"))
    warnings.push(
      `\`${engine} run\` with \`-t\`: it asks for a terminal, which pi's pipe is not ("the input device is not a TTY"); use "-i" without "-t"`,
    );
  if (has("-d", "--detach"))
    warnings.push(
      `\`${engine} run\` with \`-d\`: it returns at once, leaving the server in the background with no stdio; drop "-d"`,
    );
  if (!has("--rm"))
    warnings.push(`\`${engine} run\` without \`--rm\`: each start leaves a stopped container; add "--rm"`);
  const passed = flags
    .filter(({ name, value }) => (name === "-e" || name === "--env") && value && !value.includes("="))
    .map(({ value }) => value!)
    .filter((name) => !(name in env));
  for (const name of passed)
    warnings.push(
      `\`-e ${name}\` passes ${name} from the environment ${engine} runs in, which holds only what \`env\` of this entry names (not pi's whole environment): add "${name}": "\${${name}}" to \`env\`, or write the value there`,
    );
  return warnings;
}
