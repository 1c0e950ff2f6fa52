import { z } from 'zod';
import { SkillsmithError } from '../errors/skillsmith-error.ts';

/**
 * A reference to a skill, as configuration holds it:
 *   <name>             floats to the newest ACTIVE revision
 *   <name>@<revision>  pins exactly that revision, ACTIVE or not
 */
export interface SkillRef {
  name: string;
  /** null floats to the newest ACTIVE revision. */
  revision: number | null;
}

/** What a run records: the revision a ref resolved to and the archive's digest. */
export const skillPinSchema = z.object({
  name: z.string().min(1),
  revision: z.number().int().nonnegative(),
  contentSha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type SkillPin = z.infer<typeof skillPinSchema>;

export class SkillRefInvalid extends SkillsmithError {
  static override readonly code = 'SkillRefInvalid';
  static override readonly httpStatus = 400;
  constructor(readonly ref: string) {
    super(`skill reference ${JSON.stringify(ref)} is not <name> or <name>@<revision>`);
  }
}

const REF_PATTERN = /^([a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?)(?:@([1-9][0-9]{0,8}))?$/;

export function parseSkillRef(text: string): SkillRef {
  const match = REF_PATTERN.exec(text);
  if (!match || match[1] === undefined) throw new SkillRefInvalid(text);
  return { name: match[1], revision: match[2] === undefined ? null : Number(match[2]) };
}

export function formatSkillRef(ref: SkillRef): string {
  return ref.revision === null ? ref.name : `${ref.name}@${ref.revision}`;
}
