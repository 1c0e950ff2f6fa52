import { SkillsmithError } from '../errors/skillsmith-error.ts';

/**
 * Temporal is needed (the CLI's workflow commands, the API's run intake) and none is configured
 * or it does not answer. One error for both, so a caller branches on one code.
 */
export class TemporalUnavailable extends SkillsmithError {
  static override readonly code = 'TemporalUnavailable';
  static override readonly httpStatus = 503;
  static override readonly retryAfterSeconds = 5;
}
