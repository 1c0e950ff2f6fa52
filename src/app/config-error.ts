import { SkillsmithError } from '../errors/skillsmith-error.ts';

/** A setting that failed validation; the message names the variable and the expected form. */
export class ConfigError extends SkillsmithError {
  static override readonly code = 'ConfigError';
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
  }
}
