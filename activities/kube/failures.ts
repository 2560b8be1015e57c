import { ApplicationFailure } from '@temporalio/activity';
import { ACTIVITY_CODE_THREW } from '../../workflows/runtime/api-rejections';
import { ApiError } from './rest';

/**
 * How an API error leaves an activity: throttling and server trouble are retried by Temporal
 * (after the server's Retry-After when it sent one); anything else the API rejected is final,
 * because the same request would be rejected again.
 */
export function asActivityFailure(err: unknown): Error {
  if (err instanceof ApiError) {
    if (err.transient) {
      return ApplicationFailure.create({
        message: err.message,
        type: 'ApiTransient',
        nonRetryable: false,
        nextRetryDelay: err.retryAfterSeconds !== undefined ? `${Math.max(1, err.retryAfterSeconds)}s` : undefined,
        details: [{ status: err.status, reason: err.reason }],
      });
    }
    return ApplicationFailure.create({ message: err.message, type: 'ApiRejected', nonRetryable: true, details: [{ status: err.status, reason: err.reason }] });
  }
  return err instanceof Error ? err : new Error(String(err));
}

export async function apiCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw asActivityFailure(e);
  }
}

export function isStatus(err: unknown, ...codes: number[]): err is ApiError {
  return err instanceof ApiError && codes.includes(err.status);
}

/**
 * An activity's own code throwing (a TypeError on a field an object lacks, a RangeError, a name
 * that is not defined), as a final failure of type ACTIVITY_CODE_THREW: retrying the attempt runs
 * the same code on the same input, so the object loop's backoff and its Warning Event take over at
 * once. Anything else (the API's answers, a lost lease, a cancellation) leaves as it was.
 */
export function asCodeFailure(err: unknown): ApplicationFailure | undefined {
  if (!(err instanceof TypeError || err instanceof RangeError || err instanceof ReferenceError)) return undefined;
  const failure = ApplicationFailure.create({ message: `${err.name}: ${err.message}`, type: ACTIVITY_CODE_THREW, nonRetryable: true });
  // where the code threw, for the Web UI's failure view (not where it was wrapped)
  if (err.stack) failure.stack = err.stack;
  return failure;
}
