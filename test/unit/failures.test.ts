import { ApplicationFailure } from '@temporalio/common';
import { asActivityFailure } from '../../activities/kube/failures';
import { ApiError } from '../../activities/kube/rest';

describe('API errors leaving an activity', () => {
  test('429 is retried after the Retry-After the server sent', () => {
    const f = asActivityFailure(new ApiError(429, 'TooManyRequests', 'slow down', 7)) as ApplicationFailure;
    expect(f).toBeInstanceOf(ApplicationFailure);
    expect(f.nonRetryable).toBe(false);
    expect(f.nextRetryDelay).toBe('7s');
  });

  test('5xx and no answer at all are retried on the policy backoff', () => {
    for (const status of [500, 503, 0]) {
      const f = asActivityFailure(new ApiError(status, 'x', 'm')) as ApplicationFailure;
      expect(f.nonRetryable).toBe(false);
      expect(f.nextRetryDelay).toBeUndefined();
    }
  });

  test('a rejection (4xx) is final: retrying the same request cannot succeed', () => {
    for (const status of [400, 403, 404, 409, 422]) {
      const f = asActivityFailure(new ApiError(status, 'Invalid', 'bad')) as ApplicationFailure;
      expect(f.nonRetryable).toBe(true);
      expect(f.type).toBe('ApiRejected');
    }
  });
});
