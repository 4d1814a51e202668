/**
 * Why a local server's launcher failed for good, read from its exit code, its stderr and what npm left behind: a
 * restart of such a start fails the same way, so the connection gives up at once and says what to change.
 */
import { programName, quoteValue } from "../../common/text.ts";
import { type NpxFailure, npxCopyIn } from "./npx-failure.ts";

/** Why a local server's launcher failed for good, and the fix where it is not in the entry (`command`, `args`). */
export type LaunchFailure = { reason: string; fix?: string };

/** How npx gets a package a registry gives only to those signed in. */
const SIGN_IN =
  'sign in to that registry (`npm login --registry=<its URL>`); where an npmrc reads its token from a variable (`${NPM_TOKEN}`), add that variable to `env` ("NPM_TOKEN": "${NPM_TOKEN}"): a local server gets only the variables its `env` names. Then reconnect (`/mcp reconnect`)';

/** "Your Node version 20.20.2 is too old. Convex requires at least Node v22.0", "requires Node.js 22 or later". */
const NODE_TOO_OLD =
  /^.*(?:\bNode(?:\.js)?\b.*\b(?:is too old|is not supported|is unsupported)|\b[Rr]equires? (?:at least )?Node(?:\.js)? (?:v|version )?\d+).*$/m;

/** A native module built for another Node.js (npx's copy from before a Node upgrade), or not built for this one. */
const NATIVE_MODULE =
  /was compiled against a different Node\.js version|No native build was found for|Could not locate the bindings file|Failed to load [\w@/.-]+ native addon/;

/** npm's codes for a certificate it does not trust: signed by a CA Node does not know (a TLS-inspecting proxy's), or none. */
const UNTRUSTED_REGISTRY =
  /\bnpm (?:error|ERR!) code (SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|UNABLE_TO_GET_ISSUER_CERT(?:_LOCALLY)?|UNABLE_TO_VERIFY_LEAF_SIGNATURE)\b/;

/** How to let bubblewrap make its namespaces where the system restricts them. */
export const ALLOW_USERNS =
  "allow them (Ubuntu: `sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0`, or an AppArmor profile for bwrap; Debian: `sudo sysctl kernel.unprivileged_userns_clone=1`)";

/** docker 28's `docker: unknown command: docker mcp`, older docker's `docker: 'mcp' is not a docker command.` */
const DOCKER_UNKNOWN = /\bdocker: (?:unknown command: docker ([\w-]+)|'([\w-]+)' is not a docker command)/;

/**
 * Why a local server's launcher failed in a way no restart can fix, judged from its exit code, its stderr and what npm
 * left behind (./npx-failure.ts): the package does not exist (npm E404), npm does not trust the registry's certificate,
 * no version matches (ETARGET), an install script failed (each restart would install again and fail again), npx's copy
 * of the package is incomplete, lacks a module its code imports or an optional dependency its output names, docker may
 * not use its daemon or has no such command (`docker mcp` without Docker's MCP Toolkit), it needs a newer Node.js, a
 * native module of it was built for another Node.js (or not at all), or a shell could not find or run the command
 * (exit codes 127 and 126). Undefined when nothing says so.
 */
export function permanentLaunchFailure(
  exitCode: number | null | undefined,
  stderr: string,
  npx?: NpxFailure,
  sandboxed?: boolean,
): LaunchFailure | undefined {
  if (/\bnpm (?:error|ERR!) (?:code E404|404\b)/.test(stderr))
    return {
      reason: "the package it runs does not exist in the npm registry (npm E404)",
      fix: `check the package's name (its README gives it) in \`args\`; if it is private, ${SIGN_IN}`,
    };
  const untrusted = UNTRUSTED_REGISTRY.exec(stderr)?.[1];
  if (untrusted)
    return {
      reason: `npx could not download its package: npm does not trust the registry's certificate (npm ${untrusted}), as where a company proxy or gateway inspects TLS`,
      fix: "start pi with NODE_EXTRA_CA_CERTS set to that CA's PEM file (the bridge passes it on to the server), or set npm's `cafile` to it (`npm config set cafile <file>`, which npm then trusts alone), and reconnect (`/mcp reconnect`)",
    };
  const unreadable = /\bnpm (?:error|ERR!) code (EINVALIDTAGNAME|EINVALIDPACKAGENAME)\b/.exec(stderr)?.[1];
  if (unreadable) return { reason: `npm cannot read the package it runs as a name and version (npm ${unreadable})` };
  // A spec with a space in it (`"pkg --port 3000"`) or a path is a folder to npm.
  const folder = /\benoent Could not read package\.json: .* open '(.+)[\\/]package\.json'/.exec(stderr)?.[1];
  if (folder)
    return {
      reason: `npx took its package for a folder, '${folder}', which has no package.json`,
      fix: "write the package's name alone as a string of `args`, each of its flags a string after it (or a folder's path that has a package.json)",
    };
  if (/\bnpx canceled due to missing packages and no YES option\b/.test(stderr))
    return {
      reason: "npx would install its package only once asked, and without a terminal it cannot ask (no `-y`)",
      fix: 'add "-y" to `args`, before the package',
    };
  const chown = /\bcache folder contains root-owned files\b[\s\S]*?(sudo chown -R \S+ ".+")$/m.exec(stderr)?.[1];
  if (chown)
    return {
      reason: "npx could not install its package: npm's cache folder holds files owned by root (npm EACCES)",
      fix: `run \`${chown}\` in a terminal, as npm says, then reconnect (\`/mcp reconnect\`)`,
    };
  const refused = /\bnpm (?:error|ERR!) code (E401|E403)\b/.exec(stderr)?.[1];
  if (refused)
    return {
      reason: `the npm registry refused npx its package (npm ${refused}: not signed in to it, or not allowed)`,
      fix: SIGN_IN,
    };
  if (/\bnpm (?:error|ERR!) code ETARGET\b/.test(stderr))
    return { reason: "no version of the package it runs matches the one asked for (npm ETARGET)" };
  // A package with no program (`bin`), or several none of which is named like it: a library, or the wrong name.
  if (/\bnpm (?:error|ERR!) could not determine executable to run\b/.test(stderr))
    return {
      reason: "npx found no program to run in its package (the package has none, or several and none named like it)",
      fix: "check the package's name in the server's README, or name the program with `--package=<package>` and the program after it in `args`",
    };
  if (/\bpermission denied while trying to connect to the Docker (?:daemon socket|API)\b/i.test(stderr))
    return sandboxed
      ? // The sandbox blocks Unix sockets: the docker group would not help.
        {
          reason: "the sandbox keeps docker from the Docker daemon's socket",
          fix: 'set "sandbox": false for it to run with your full rights',
        }
      : {
          reason: "docker may not use the Docker daemon's socket (permission denied)",
          fix: "add your user to the docker group (`sudo usermod -aG docker $USER`, then log in again) and reconnect",
        };
  // Bubblewrap could not make the sandbox's namespaces: the server never ran, nor will (Ubuntu 24.04's AppArmor).
  const bwrap = sandboxed ? /^\s*(bwrap: .*(?:namespace|uid map|gid map|RTM_NEWADDR).*)/m.exec(stderr)?.[1] : undefined;
  if (bwrap)
    return {
      reason: `bubblewrap could not set up the sandbox (it said ${quoteValue(bwrap)}): unprivileged user namespaces are restricted here`,
      fix: `${ALLOW_USERNS} and reconnect, or set "sandbox": false for it to run with your full rights`,
    };
  const unknown = DOCKER_UNKNOWN.exec(stderr);
  if (unknown) {
    const command = unknown[1] ?? unknown[2];
    // `docker mcp gateway run`, from Docker's own instructions: the command comes with its MCP Toolkit.
    return command === "mcp"
      ? {
          reason: "this docker has no `mcp` command: Docker's MCP Toolkit (its docker-mcp plugin) is not installed",
          fix: "turn on the MCP Toolkit in Docker Desktop, or install the docker-mcp plugin (github.com/docker/mcp-gateway) into ~/.docker/cli-plugins, then reconnect (`/mcp reconnect`)",
        }
      : {
          reason: `this docker has no \`${command}\` command (a plugin that is not installed, or a misspelt \`args\`)`,
        };
  }
  const oldNode = NODE_TOO_OLD.exec(stderr)?.[0].trim();
  if (oldNode)
    return {
      reason: `it needs a newer Node.js than the one it ran on: it said ${quoteValue(oldNode)}`,
      fix: "install that version and have the server run on it (its path in `command`, or for `npx` its folder first on a `PATH` set in `env`)",
    };
  const native = NATIVE_MODULE.exec(stderr)?.[0];
  if (native) {
    const copy = npxCopyIn(stderr);
    const fix = copy
      ? `delete npx's copy of the package (${copy}) and reconnect (\`/mcp reconnect\`): npx installs it again, built for this Node.js (which may need the network)`
      : "rebuild the server's packages with the Node.js that runs it (`npm rebuild` in its folder), then reconnect";
    // keytar (passwords in the system's keyring) swallows the loader's words; on Linux it is most often the library.
    if (/keytar native addon/.test(native) && /prebuilds\/linux/.test(stderr))
      return {
        reason: `a native module of its package cannot be loaded (${native}): keytar loads on Linux only where the libsecret library is installed, or else was built for another Node.js`,
        fix: `install libsecret (\`libsecret-1-0\` on Debian and Ubuntu, \`libsecret\` on Fedora and Arch) and reconnect; where it is installed, ${fix}`,
      };
    return {
      reason: `a native module of its package cannot be loaded by the Node.js that runs it (${native}): built for another Node.js, or not built at all`,
      fix,
    };
  }
  if (npx?.kind === "script")
    return {
      reason:
        `npx could not install its package: the \`${npx.event}\` script of ${npx.pkg} ` +
        `(\`${npx.command}\`) ${npx.ending} (npm's log: ${npx.log})`,
      fix:
        `run \`${npx.rerun}\` in a terminal to see what the script printed (such scripts often download a ` +
        `program, and need the network for it), then reconnect (\`/mcp reconnect\`)`,
    };
  if (npx?.kind === "optionalMissing") {
    const { script } = npx;
    const failed = script
      ? `, whose \`${script.event}\` script (\`${script.command}\`) ${script.ending} when npx installed it (npm's log: ${script.log})`
      : "";
    const see = npx.rerun ? `, run \`${npx.rerun}\` in a terminal to see why '${npx.module}' does not install` : "";
    return {
      reason:
        `its output names '${npx.module}', an optional dependency of its package that npx's copy of it in ${npx.folder} ` +
        `does not have${failed}: npm leaves out an optional dependency whose install fails, and npx does not try again`,
      fix:
        `delete that folder${see} (such a script often downloads a prebuilt program, which needs the network, or ` +
        `builds one, which needs a compiler), then reconnect (\`/mcp reconnect\`)`,
    };
  }
  if (npx?.kind === "incomplete")
    return {
      reason: `npx's copy of its package in ${npx.folder} is missing a module (an install stopped partway leaves that folder incomplete, and npx does not repair it)`,
      fix: `delete that folder, then reconnect (\`/mcp reconnect\`): npx installs the package again`,
    };
  if (npx?.kind === "missingModule")
    return {
      reason:
        `its package's code needs ${npx.module ? `'${npx.module}'` : "a module"}, which npx's complete copy of it in ` +
        `${npx.folder} does not have: a fault of the package or of its dependencies' versions, which reinstalling repeats`,
      fix: "check for a newer version of the package (or pin one that worked), and tell its authors",
    };
  // cmd's 9009 on Windows, where a command runs through `cmd /c` (./platform-command.ts): `'uvx' is not recognized …`.
  if (exitCode === 127 || exitCode === 9009) {
    // The shell names what it could not find: for `npx`, the program of the package (`sh: 1: create-mcp-route: not found`);
    // env, that of a script's `#!/usr/bin/env node` line (`/usr/bin/env: 'node': No such file or directory`).
    const named =
      /\b(?:ba|da|z)?sh: (?:\d+: )?(?:line \d+: )?([^\s:]+): (?:command )?not found|^'([^']+)' is not recognized|\benv: '?([^\s':]+)'?: No such file/m;
    const found = named.exec(stderr);
    const name = found?.slice(1).find(Boolean);
    return {
      reason: `${name ? `the program '${name}' it runs` : "its command"} was not found (exit code ${exitCode})`,
      ...(found?.[3] && {
        fix: `its script's \`#!\` line looks for it on the PATH the server gets: install it, or check \`PATH\` in \`env\``,
      }),
    };
  }
  if (exitCode === 126) return { reason: "its command could not be run (exit code 126)" };
  return undefined;
}

/** What installs the launchers servers' READMEs start them with, and where from: said when one is not there. */
const LAUNCHERS: Readonly<Record<string, readonly [tool: string, url: string, note?: string]>> = {
  uvx: ["uv", "https://docs.astral.sh/uv/", "which runs Python servers"],
  uv: ["uv", "https://docs.astral.sh/uv/", "which runs Python servers"],
  pipx: ["pipx", "https://pipx.pypa.io", "which runs Python servers"],
  bunx: ["Bun", "https://bun.sh"],
  bun: ["Bun", "https://bun.sh"],
  deno: ["Deno", "https://deno.com"],
  docker: ["Docker", "https://docs.docker.com/get-docker/"],
  podman: ["Podman", "https://podman.io"],
  npx: ["Node.js", "https://nodejs.org", "on which pi runs itself: its folder is missing from the `PATH` pi has"],
  go: ["Go", "https://go.dev/dl/"],
  java: ["a Java runtime", "https://adoptium.net"],
  dotnet: ["the .NET SDK", "https://dotnet.microsoft.com/download"],
};

/** Where a launcher that was not found comes from (`uvx`: uv), if it is one READMEs use. */
export function launcherSource(command: string): string | undefined {
  const name = programName(command).toLowerCase();
  if (!Object.hasOwn(LAUNCHERS, name)) return undefined;
  const [tool, url, note] = LAUNCHERS[name]!;
  const source = tool.toLowerCase() === name ? `install ${tool} (${url})` : `${name} comes with ${tool} (${url})`;
  return note ? `${source}, ${note}` : source;
}
