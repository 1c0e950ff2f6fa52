import { ApplicationFailure } from '@temporalio/activity';

type ErrorClass = abstract new (...args: never[]) => Error;

/**
 * Runs an activity body and turns the domain errors that must not be retried into
 * non-retryable ApplicationFailures whose type is the error's stable `name`; workflows branch
 * on that type, never on message text. Everything else is thrown as is (and retried).
 */
export async function failFastOn<T>(nonRetryable: readonly ErrorClass[], body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    if (nonRetryable.some((errorClass) => error instanceof errorClass)) {
      const failure = error as Error;
      throw ApplicationFailure.create({ message: failure.message, type: failure.name, nonRetryable: true, cause: failure });
    }
    throw error;
  }
}
