import { ApplicationFailure } from '@temporalio/common';
import { asActivityFailure, asCodeFailure } from '../../activities/kube/failures';
import { ACTIVITY_CODE_THREW } from '../../workflows/runtime/api-rejections';
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

describe("an activity's own code throwing", () => {
  test('a TypeError, RangeError or ReferenceError is final, with its name in the message and its own stack', () => {
    for (const err of [new TypeError('x is not iterable'), new RangeError('Invalid array length'), new ReferenceError('y is not defined')]) {
      const f = asCodeFailure(err)!;
      expect(f).toBeInstanceOf(ApplicationFailure);
      expect(f.type).toBe(ACTIVITY_CODE_THREW);
      expect(f.nonRetryable).toBe(true);
      expect(f.message).toBe(`${err.name}: ${err.message}`);
      expect(f.stack).toBe(err.stack);
    }
  });

  test("the API's answers, a lost lease and any other error are not the code's throw: they leave as they were", () => {
    expect(asCodeFailure(new ApiError(500, 'x', 'm'))).toBeUndefined();
    expect(asCodeFailure(asActivityFailure(new ApiError(422, 'Invalid', 'bad')))).toBeUndefined();
    expect(asCodeFailure(new Error('socket hang up'))).toBeUndefined();
    expect(asCodeFailure('a string')).toBeUndefined();
  });
});
