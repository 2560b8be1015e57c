import { ApplicationFailure } from '@temporalio/activity';
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
