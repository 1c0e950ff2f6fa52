import { ApplicationFailure } from '@temporalio/activity';
import { SkillsmithError } from '../src/errors/skillsmith-error.ts';
import { databaseFailure } from '../src/store/database-failure.ts';

/**
 * Runs an activity body and turns the errors whose class says they must not be retried
 * (`retryable === false`) into non-retryable ApplicationFailures typed with the error's stable
 * `code`; workflows branch on that type, never on message text. The database's own trouble (a
 * lost connection, a full disk) is thrown as `DatabaseUnavailable` / `StorageFull`, so a pass that
 * fails of it says so by type. Everything else is thrown as is (and retried).
 */
export async function failFast<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof SkillsmithError && !error.retryable) {
      throw ApplicationFailure.create({ message: error.message, type: error.code, nonRetryable: true, cause: error });
    }
    throw (error instanceof SkillsmithError ? undefined : databaseFailure(error)) ?? error;
  }
}

type Activity = (...args: never[]) => Promise<unknown>;

/** Every activity behind failFast: applied once, where the worker's activities are created. */
export function failingFast<T extends Record<string, Activity>>(activities: T): T {
  return Object.fromEntries(
    Object.entries(activities).map(([name, activity]) => [name, (...args: never[]) => failFast(() => activity(...args))]),
  ) as T;
}
