import { z } from 'zod';
import { storableString, unstorableTextReason } from '../input/storable-text.ts';
import { SKILL_MANIFEST_PATH, type SkillPackage } from '../skills/skill-package.ts';
import { SkillTextUnstorable } from '../skills/validation-errors.ts';
import { tenantIdSchema } from '../input/tenant-id.ts';
import { canonicalArgumentSha256, skillManageIdempotencyKey } from './argument-hash.ts';
import { SkillManageRequestInvalid } from './authoring-errors.ts';

/**
 * What skill_manage accepts and answers: the request and context schemas, the outcome a
 * caller (and a retried invocation) sees, and the event kind each applied operation records.
 */
const skillNameSchema = storableString().min(1).max(64);
const revisionSchema = z.number().int().min(1);
const base64Pattern = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A package member: UTF-8 text as a string, or `{ base64 }` for any bytes. */
export const packageFileSchema = z.union([
  z.string(),
  z.object({ base64: z.string().regex(base64Pattern, 'standard base64 with padding') }).strict(),
]);

export const skillManagePackageSchema = z.object({ files: z.record(z.string().min(1), packageFileSchema) }).strict();

export const skillManageRequestSchema = z.discriminatedUnion('operation', [
  z.object({ operation: z.literal('create'), name: skillNameSchema, package: skillManagePackageSchema }).strict(),
  z
    .object({
      operation: z.literal('edit'),
      name: skillNameSchema,
      expectedRevision: revisionSchema,
      package: skillManagePackageSchema,
    })
    .strict(),
  z
    .object({
      operation: z.literal('patch'),
      name: skillNameSchema,
      expectedRevision: revisionSchema,
      /** The new SKILL.md text; every other member of the current revision is carried forward. */
      skillMd: z.string().min(1),
    })
    .strict(),
  z.object({ operation: z.literal('archive'), name: skillNameSchema, expectedRevision: revisionSchema }).strict(),
]);
export type SkillManageRequest = z.infer<typeof skillManageRequestSchema>;
export type SkillManageOperation = SkillManageRequest['operation'];

export const originTrustSchema = z.enum(['operator', 'user', 'untrusted']);
export type OriginTrust = z.infer<typeof originTrustSchema>;

export const skillManageContextSchema = z.object({
  tenantId: tenantIdSchema,
  principalId: storableString().min(1),
  scopes: z.array(z.string()),
  originTrust: originTrustSchema,
  /** What made the turn untrusted (e.g. "read a web page"), recorded on an origin_trust denial. */
  taint: storableString().optional(),
  runId: storableString().min(1),
  invocationId: storableString().min(1),
  sessionId: storableString().min(1).optional(),
  /** Set for a background review run: the skills it loaded, at the revision it loaded. */
  reviewRun: z.object({ loaded: z.map(z.string(), z.number().int()) }).optional(),
});
export type SkillManageContext = z.input<typeof skillManageContextSchema>;
/** The context once parsed (defaults applied): what every step of skill_manage reads. */
export type ParsedSkillManageContext = z.output<typeof skillManageContextSchema>;

export const skillManageOutcomeSchema = z.discriminatedUnion('status', [
  z.object({
    status: z.literal('installed'),
    operation: z.enum(['create', 'edit', 'patch']),
    name: z.string(),
    revision: z.number().int(),
    contentSha256: z.string(),
  }),
  z.object({ status: z.literal('archived'), operation: z.literal('archive'), name: z.string(), revision: z.number().int() }),
  z.object({
    status: z.literal('pending_approval'),
    operation: z.enum(['create', 'edit', 'patch']),
    name: z.string(),
    approvalId: z.string(),
    currentRevision: z.number().int(),
    proposedRevision: z.number().int(),
  }),
  /** The approval this invocation raised was closed without installing anything. */
  z.object({
    status: z.enum(['rejected', 'expired', 'conflicted']),
    operation: z.enum(['create', 'edit', 'patch']),
    name: z.string(),
    approvalId: z.string(),
  }),
]);
export type SkillManageOutcome = z.infer<typeof skillManageOutcomeSchema>;
/** `replayed`: this invocation had already taken effect and its recorded outcome is returned. */
export type SkillManageResult = SkillManageOutcome & { replayed: boolean };

export type ApprovalProfile = 'none' | 'skill_authoring';

export type InstallOperation = Exclude<SkillManageOperation, 'archive'>;

const APPLIED_EVENT_KIND: Record<SkillManageOperation, string> = {
  create: 'authoring.created',
  edit: 'authoring.edited',
  patch: 'authoring.patched',
  archive: 'authoring.archived',
};

/** The `skill_events` kind recorded when an operation takes effect (directly or on approval). */
export function appliedEventKind(operation: SkillManageOperation): string {
  return APPLIED_EVENT_KIND[operation];
}

/** One parsed skill_manage call and its idempotency identity (invocation id + canonical argument sha256). */
export interface ManageInvocation {
  context: ParsedSkillManageContext;
  request: SkillManageRequest;
  argumentSha256: string;
  idempotencyKey: string;
}

/** Parse a call at the boundary: SkillManageRequestInvalid names the first offending path. */
export function parseManageInvocation(rawContext: unknown, rawRequest: unknown): ManageInvocation {
  const parsedContext = skillManageContextSchema.safeParse(rawContext);
  if (!parsedContext.success) {
    const issue = parsedContext.error.issues[0];
    throw new SkillManageRequestInvalid(`context.${issue?.path.join('.') ?? ''}`, issue?.message ?? 'invalid context');
  }
  const parsedRequest = skillManageRequestSchema.safeParse(rawRequest);
  if (!parsedRequest.success) {
    const issue = parsedRequest.error.issues[0];
    throw new SkillManageRequestInvalid(issue?.path.join('.') ?? '', issue?.message ?? 'invalid request');
  }
  const argumentSha256 = canonicalArgumentSha256(parsedRequest.data);
  return {
    context: parsedContext.data,
    request: parsedRequest.data,
    argumentSha256,
    idempotencyKey: skillManageIdempotencyKey(parsedContext.data.invocationId, argumentSha256),
  };
}

/**
 * The text a create, edit or patch carries (member paths, text members, `skillMd`) must be
 * storable Unicode: a lone surrogate would silently become U+FFFD when encoded, and a NUL cannot
 * be stored. Checked after the policy stage, so a denied turn's event is recorded whatever it sent.
 */
export function checkRequestText(request: SkillManageRequest): void {
  if (request.operation === 'archive') return;
  if (request.operation === 'patch') {
    const reason = unstorableTextReason(request.skillMd);
    if (reason !== null) throw new SkillTextUnstorable(SKILL_MANIFEST_PATH, reason);
    return;
  }
  for (const [path, content] of Object.entries(request.package.files)) {
    const reason = unstorableTextReason(path) ?? (typeof content === 'string' ? unstorableTextReason(content) : null);
    if (reason !== null) throw new SkillTextUnstorable(path, reason);
  }
}

const encoder = new TextEncoder();

/** The package a create/edit request carries, with the skill name as its directory name. */
export function decodeRequestPackage(name: string, files: z.infer<typeof skillManagePackageSchema>['files']): SkillPackage {
  const decoded = new Map<string, Uint8Array>();
  for (const [path, content] of Object.entries(files)) {
    decoded.set(path, typeof content === 'string' ? encoder.encode(content) : new Uint8Array(Buffer.from(content.base64, 'base64')));
  }
  return { directoryName: name, files: decoded };
}
