/**
 * Project trust for one session: the user's answers for this project, read once at startup and kept current as the
 * user answers. Says whether a server may run; the bridge asks it before it starts, connects or lists anything.
 */
import type { ServerConfig } from "../config/types.ts";
import {
  needsTrust,
  type TrustAnswer,
  trustAfterWrite,
  type TrustState,
  trustState,
  withAnswer,
} from "./trust-rules.ts";
import type { TrustStore } from "./trust-store.ts";

/**
 * The host's answer on trusting the whole project: `true` or `false` for every project server the user has not
 * answered about in the bridge, `undefined` to leave those to the bridge (which then asks). pi 1.x has project trust
 * of its own, so there its answer decides and the user is not asked twice.
 */
export type TrustDecider = (projectRoot: string) => boolean | undefined;

export class ProjectTrust {
  private answers: ReadonlyMap<string, TrustAnswer> = new Map();

  constructor(
    readonly projectRoot: string,
    private readonly store: TrustStore,
    private readonly decider?: TrustDecider,
  ) {}

  /** Reads the answers given for this project in earlier sessions. */
  async load(): Promise<void> {
    this.answers = await this.store.read(this.projectRoot);
  }

  /** Where `config` stands; `undefined` for a server that needs no trust. */
  stateOf(config: ServerConfig): TrustState | undefined {
    if (!needsTrust(config)) return undefined;
    // What the user told the bridge about this very definition (/mcp trust, /mcp untrust) stands; the host's answer
    // on the whole project decides the rest.
    const own = trustState(config, this.answers);
    if (own === "trusted" || own === "declined") return own;
    const decided = this.decider?.(this.projectRoot);
    if (decided !== undefined) return decided ? "trusted" : "declined";
    return own;
  }

  /** Whether the user answered that this server may run only in a sandbox. */
  sandboxed(config: ServerConfig): boolean {
    // Kept after the definition changes too: where the host's answer on the whole project then lets it run, it runs
    // sandboxed still, until the user trusts it fully.
    return needsTrust(config) && this.answers.get(config.name)?.sandboxed === true;
  }

  allows(config: ServerConfig): boolean {
    const state = this.stateOf(config);
    return state === undefined || state === "trusted";
  }

  /** Whether the bridge may ask the user itself (not when the host decides). */
  get asks(): boolean {
    return this.decider?.(this.projectRoot) === undefined;
  }

  /**
   * Records the user's answer for these servers' current definitions (`sandboxed`: trusted to run in a sandbox only).
   * It holds for this session at once; the error of saving it for later sessions is thrown after that.
   */
  async answer(configs: readonly ServerConfig[], trusted: boolean, sandboxed = false): Promise<void> {
    const project = configs.filter(needsTrust);
    if (project.length === 0) return;
    this.answers = withAnswer(this.answers, project, trusted, sandboxed);
    await this.store.save(this.projectRoot, withAnswer(new Map(), project, trusted, sandboxed));
  }

  /**
   * Keeps trust in step with a change the bridge wrote to the project's file with the user's word (`trustAfterWrite`):
   * `before` and `after` are the servers the file defined just before the write and as written. Judged by the answers
   * on disk — the user's own, never the host's answer on the whole project, which covers the new definition as it
   * covered the old one, and which a recorded answer would outlive — and saved for later sessions only: this session
   * goes on running the definitions it loaded, under the answers it has.
   */
  async written(
    before: readonly ServerConfig[],
    after: readonly ServerConfig[],
    authored: ReadonlySet<string>,
  ): Promise<void> {
    await this.store.update(this.projectRoot, (record) => trustAfterWrite(before, after, record, authored));
  }
}
