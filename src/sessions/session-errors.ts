import { SkillsmithError } from '../errors/skillsmith-error.ts';

/** Errors of agent specs, sessions and skill.load. Each has a stable `name` callers branch on. */

export class AgentSpecNotFound extends SkillsmithError {
  static override readonly code = 'AgentSpecNotFound';
  static override readonly httpStatus = 404;
  constructor(
    readonly agentId: string,
    version?: number,
  ) {
    super(
      version === undefined
        ? `agent ${JSON.stringify(agentId)} has no agent spec; write one with \`skillsmith agents set\``
        : `agent ${JSON.stringify(agentId)} has no agent spec version ${version}`,
    );
  }
}

/** One or more skill refs did not resolve; every failing ref is quoted. */
export class SkillRefsUnresolved extends SkillsmithError {
  static override readonly code = 'SkillRefsUnresolved';
  static override readonly httpStatus = 422;
  constructor(readonly refs: { ref: string; reason: string }[]) {
    super(`unknown skill refs: ${refs.map((entry) => `${JSON.stringify(entry.ref)} (${entry.reason})`).join(', ')}`);
  }
}

export class DuplicateSkillName extends SkillsmithError {
  static override readonly code = 'DuplicateSkillName';
  static override readonly httpStatus = 422;
  constructor(
    readonly skillName: string,
    where: string,
  ) {
    super(`skill name ${JSON.stringify(skillName)} appears more than once in ${where}`);
  }
}

export class SessionNotFound extends SkillsmithError {
  static override readonly code = 'SessionNotFound';
  static override readonly httpStatus = 404;
  constructor(readonly sessionId: string) {
    super(`session ${JSON.stringify(sessionId)} not found`);
  }
}

/** skill.load named something the session's pinned catalog does not hold; lists the catalog. */
export class SkillNotInCatalog extends SkillsmithError {
  static override readonly code = 'SkillNotInCatalog';
  // The documented status of an unknown skill: the session has no such skill to load.
  static override readonly httpStatus = 404;
  constructor(
    readonly skillName: string,
    readonly catalog: string[],
  ) {
    super(
      `skill ${JSON.stringify(skillName)} is not in this session's catalog; the catalog holds: ${
        catalog.length === 0 ? '(nothing)' : catalog.join(', ')
      }`,
    );
  }
}

/** A third body: the load fails and names the two loaded (it never evicts). */
export class SkillBodyCapReached extends SkillsmithError {
  static override readonly code = 'SkillBodyCapReached';
  static override readonly httpStatus = 409;
  constructor(
    readonly loaded: string[],
    limit: number,
  ) {
    super(`at most ${limit} skill bodies may be loaded; already loaded: ${loaded.join(', ')}; unload one first`);
  }
}

export class SkillBodyBudgetExceeded extends SkillsmithError {
  static override readonly code = 'SkillBodyBudgetExceeded';
  static override readonly httpStatus = 409;
  constructor(
    readonly requestedTokens: number,
    readonly loadedTokens: number,
    readonly limit: number,
  ) {
    super(`loading ${requestedTokens} tokens on top of ${loadedTokens} loaded would exceed the ${limit}-token skill body allowance`);
  }
}

export class SkillMemberNotText extends SkillsmithError {
  static override readonly code = 'SkillMemberNotText';
  static override readonly httpStatus = 422;
  constructor(readonly path: string) {
    super(`package member ${JSON.stringify(path)} is not UTF-8 text`);
  }
}

/** MCP prompts are session-scoped text with no package: a path load on one is refused. */
export class McpSkillHasNoPackage extends SkillsmithError {
  static override readonly code = 'McpSkillHasNoPackage';
  static override readonly httpStatus = 422;
  constructor(skillName: string) {
    super(`skill ${JSON.stringify(skillName)} is an MCP prompt and has no package members`);
  }
}

/** Replay found an MCP prompt whose text no longer hashes to the pin. */
export class McpPromptChanged extends SkillsmithError {
  static override readonly code = 'McpPromptChanged';
  static override readonly httpStatus = 409;
  constructor(
    readonly pin: { name: string; revision: number; contentSha256: string },
    readonly actualSha256: string | null,
  ) {
    super(
      actualSha256 === null
        ? `MCP skill pin ${pin.name}@0 was not supplied to the replay`
        : `MCP skill pin ${pin.name}@0 expects content_sha256 ${pin.contentSha256}, the prompt now hashes to ${actualSha256}`,
    );
  }
}

/** The catalog rendered from the pins differs from the one recorded at open. */
export class CatalogDrift extends SkillsmithError {
  static override readonly code = 'CatalogDrift';
  static override readonly httpStatus = 409;
  constructor(expectedSha256: string, actualSha256: string) {
    super(`the catalog re-rendered from the pins hashes to ${actualSha256}, the session recorded ${expectedSha256}`);
  }
}
