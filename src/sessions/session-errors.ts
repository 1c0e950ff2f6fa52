/** Errors of agent specs, sessions and skill.load. Each has a stable `name` callers branch on. */

export class AgentSpecNotFound extends Error {
  override readonly name = 'AgentSpecNotFound';
  readonly agentId: string;
  constructor(agentId: string, version?: number) {
    super(
      version === undefined
        ? `agent ${JSON.stringify(agentId)} has no agent spec; write one with \`skillsmith agents set\``
        : `agent ${JSON.stringify(agentId)} has no agent spec version ${version}`,
    );
    this.agentId = agentId;
  }
}

/** One or more skill refs did not resolve; every failing ref is quoted. */
export class SkillRefsUnresolved extends Error {
  override readonly name = 'SkillRefsUnresolved';
  readonly refs: { ref: string; reason: string }[];
  constructor(refs: { ref: string; reason: string }[]) {
    super(`unknown skill refs: ${refs.map((entry) => `${JSON.stringify(entry.ref)} (${entry.reason})`).join(', ')}`);
    this.refs = refs;
  }
}

export class DuplicateSkillName extends Error {
  override readonly name = 'DuplicateSkillName';
  readonly skillName: string;
  constructor(skillName: string, where: string) {
    super(`skill name ${JSON.stringify(skillName)} appears more than once in ${where}`);
    this.skillName = skillName;
  }
}

export class SessionNotFound extends Error {
  override readonly name = 'SessionNotFound';
  readonly sessionId: string;
  constructor(sessionId: string) {
    super(`session ${JSON.stringify(sessionId)} not found`);
    this.sessionId = sessionId;
  }
}

/** skill.load named something the session's pinned catalog does not hold; lists the catalog. */
export class SkillNotInCatalog extends Error {
  override readonly name = 'SkillNotInCatalog';
  readonly skillName: string;
  readonly catalog: string[];
  constructor(skillName: string, catalog: string[]) {
    super(
      `skill ${JSON.stringify(skillName)} is not in this session's catalog; the catalog holds: ${
        catalog.length === 0 ? '(nothing)' : catalog.join(', ')
      }`,
    );
    this.skillName = skillName;
    this.catalog = catalog;
  }
}

/** A third body: the load fails and names the two loaded (it never evicts). */
export class SkillBodyCapReached extends Error {
  override readonly name = 'SkillBodyCapReached';
  readonly loaded: string[];
  constructor(loaded: string[], limit: number) {
    super(`at most ${limit} skill bodies may be loaded; already loaded: ${loaded.join(', ')}; unload one first`);
    this.loaded = loaded;
  }
}

export class SkillBodyBudgetExceeded extends Error {
  override readonly name = 'SkillBodyBudgetExceeded';
  readonly requestedTokens: number;
  readonly loadedTokens: number;
  readonly limit: number;
  constructor(requestedTokens: number, loadedTokens: number, limit: number) {
    super(
      `loading ${requestedTokens} tokens on top of ${loadedTokens} loaded would exceed the ${limit}-token skill body allowance`,
    );
    this.requestedTokens = requestedTokens;
    this.loadedTokens = loadedTokens;
    this.limit = limit;
  }
}

export class SkillMemberNotText extends Error {
  override readonly name = 'SkillMemberNotText';
  readonly path: string;
  constructor(memberPath: string) {
    super(`package member ${JSON.stringify(memberPath)} is not UTF-8 text`);
    this.path = memberPath;
  }
}

/** MCP prompts are session-scoped text with no package: a path load on one is refused. */
export class McpSkillHasNoPackage extends Error {
  override readonly name = 'McpSkillHasNoPackage';
  constructor(skillName: string) {
    super(`skill ${JSON.stringify(skillName)} is an MCP prompt and has no package members`);
  }
}

/** Replay found an MCP prompt whose text no longer hashes to the pin. */
export class McpPromptChanged extends Error {
  override readonly name = 'McpPromptChanged';
  readonly pin: { name: string; revision: number; contentSha256: string };
  readonly actualSha256: string | null;
  constructor(pin: { name: string; revision: number; contentSha256: string }, actualSha256: string | null) {
    super(
      actualSha256 === null
        ? `MCP skill pin ${pin.name}@0 was not supplied to the replay`
        : `MCP skill pin ${pin.name}@0 expects content_sha256 ${pin.contentSha256}, the prompt now hashes to ${actualSha256}`,
    );
    this.pin = pin;
    this.actualSha256 = actualSha256;
  }
}

/** The catalog rendered from the pins differs from the one recorded at open. */
export class CatalogDrift extends Error {
  override readonly name = 'CatalogDrift';
  constructor(expectedSha256: string, actualSha256: string) {
    super(`the catalog re-rendered from the pins hashes to ${actualSha256}, the session recorded ${expectedSha256}`);
  }
}
