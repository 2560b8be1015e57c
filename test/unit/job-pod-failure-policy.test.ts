import { matchPodFailurePolicy } from '../../workflows/job/pod-failure-policy';
import type {
  ConditionLike,
  ContainerStatusLike,
  JobPodStatus,
  PodFailurePolicy,
  PodFailurePolicyRule,
} from '../../workflows/job/api';

const KEY = 'default/mypod';

function failed(
  containerStatuses: ContainerStatusLike[] = [],
  conditions: ConditionLike[] = [],
  initContainerStatuses: ContainerStatusLike[] = [],
): JobPodStatus {
  return { phase: 'Failed', conditions, containerStatuses, initContainerStatuses, annotations: {}, labels: {} };
}
const exited = (name: string, exitCode: number): ContainerStatusLike => ({ name, terminated: { exitCode } });
const disruption = (status: 'True' | 'False' | 'Unknown' = 'True'): ConditionLike => ({ type: 'DisruptionTarget', status });
const policy = (...rules: PodFailurePolicyRule[]): PodFailurePolicy => ({ rules });

describe('matchPodFailurePolicy', () => {
  it('no policy counts the failure and matches nothing', () => {
    expect(matchPodFailurePolicy(undefined, failed([exited('main', 2)]), KEY)).toEqual({ countFailed: true });
  });

  it('no rules', () => {
    expect(matchPodFailurePolicy(policy(), failed([exited('main', 2)]), KEY)).toEqual({ countFailed: true });
  });

  it('skips a rule with an unknown action (exit codes)', () => {
    const p = policy(
      { action: 'UnknownAction' as never, onExitCodes: { operator: 'In', values: [1, 2] } },
      { action: 'FailJob', onExitCodes: { operator: 'In', values: [2, 3] } },
    );
    expect(matchPodFailurePolicy(p, failed([exited('main-container', 2)]), KEY)).toEqual({
      message: 'Container main-container for pod default/mypod failed with exit code 2 matching FailJob rule at index 1',
      countFailed: true,
      action: 'FailJob',
    });
  });

  it('skips a rule with an unknown action (pod conditions)', () => {
    const p = policy(
      { action: 'UnknownAction' as never, onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
      { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
    );
    expect(matchPodFailurePolicy(p, failed([], [disruption()]), KEY)).toEqual({ countFailed: false, action: 'Ignore' });
  });

  it('a rule with an unknown operator never matches', () => {
    const p = policy(
      { action: 'Ignore', onExitCodes: { operator: 'UnknownOperator' as never, values: [1, 2] } },
      { action: 'FailJob', onExitCodes: { operator: 'In', values: [2, 3] } },
    );
    expect(matchPodFailurePolicy(p, failed([exited('main-container', 2)]), KEY).message).toBe(
      'Container main-container for pod default/mypod failed with exit code 2 matching FailJob rule at index 1',
    );
  });

  it('Ignore on exit codes', () => {
    const p = policy({ action: 'Ignore', onExitCodes: { operator: 'In', values: [1, 2, 3] } });
    expect(matchPodFailurePolicy(p, failed([exited('main', 2)]), KEY)).toEqual({ countFailed: false, action: 'Ignore' });
  });

  it('Ignore on negative (Windows) exit codes', () => {
    const p = policy({ action: 'Ignore', onExitCodes: { operator: 'In', values: [-1073741676, -1073741510] } });
    expect(matchPodFailurePolicy(p, failed([exited('main', -1073741510)]), KEY)).toEqual({ countFailed: false, action: 'Ignore' });
  });

  it('FailJob on exit codes, with the upstream message', () => {
    const p = policy({ action: 'FailJob', onExitCodes: { operator: 'In', values: [1, 2, 3] } });
    expect(matchPodFailurePolicy(p, failed([exited('main-container', 2)]), KEY)).toEqual({
      message: 'Container main-container for pod default/mypod failed with exit code 2 matching FailJob rule at index 0',
      countFailed: true,
      action: 'FailJob',
    });
  });

  it('successful containers are never matched, NotIn included', () => {
    const p = policy({ action: 'FailJob', onExitCodes: { operator: 'NotIn', values: [111] } });
    const pod = failed([exited('main-container', 111), exited('support-container', 0)], [], [exited('init-container', 0)]);
    expect(matchPodFailurePolicy(p, pod, KEY)).toEqual({ countFailed: true });
  });

  it('FailIndex on exit codes', () => {
    const p = policy({ action: 'FailIndex', onExitCodes: { operator: 'In', values: [1, 2, 3] } });
    expect(matchPodFailurePolicy(p, failed([exited('main', 2)]), KEY)).toEqual({ countFailed: true, action: 'FailIndex' });
  });

  it('NotIn [0] matches the failed container and skips the succeeded one', () => {
    const p = policy({ action: 'FailJob', onExitCodes: { operator: 'NotIn', values: [0] } });
    const pod = failed([exited('main-container', 1), exited('support-container', 0)]);
    expect(matchPodFailurePolicy(p, pod, KEY).message).toBe(
      'Container main-container for pod default/mypod failed with exit code 1 matching FailJob rule at index 0',
    );
  });

  it('the second rule can be the FailJob one', () => {
    const p = policy(
      { action: 'Count', onExitCodes: { operator: 'In', values: [1, 2, 3] } },
      { action: 'FailJob', onExitCodes: { operator: 'In', values: [4, 5, 6] } },
    );
    expect(matchPodFailurePolicy(p, failed([exited('main-container', 6)]), KEY)).toEqual({
      message: 'Container main-container for pod default/mypod failed with exit code 6 matching FailJob rule at index 1',
      countFailed: true,
      action: 'FailJob',
    });
  });

  it('Count on exit codes skips containers still running', () => {
    const p = policy({ action: 'Count', onExitCodes: { operator: 'In', values: [1, 2, 3] } });
    const pod = failed([{ name: 'foo' }, exited('bar', 2)]);
    expect(matchPodFailurePolicy(p, pod, KEY)).toEqual({ countFailed: true, action: 'Count' });
  });

  it('containerName restricts the match', () => {
    const p = policy({ action: 'FailJob', onExitCodes: { containerName: 'other', operator: 'In', values: [2] } });
    expect(matchPodFailurePolicy(p, failed([exited('main', 2)]), KEY)).toEqual({ countFailed: true });
    const named = policy({ action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'In', values: [2] } });
    expect(matchPodFailurePolicy(named, failed([exited('main', 2)]), KEY).action).toBe('FailJob');
  });

  it('init containers are checked after regular containers', () => {
    const p = policy({ action: 'FailJob', onExitCodes: { operator: 'In', values: [5, 7] } });
    const onlyInit = failed([], [], [exited('setup', 7)]);
    expect(matchPodFailurePolicy(p, onlyInit, KEY).message).toBe(
      'Container setup for pod default/mypod failed with exit code 7 matching FailJob rule at index 0',
    );
    const both = failed([exited('main', 5)], [], [exited('setup', 7)]);
    expect(matchPodFailurePolicy(p, both, KEY).message).toBe(
      'Container main for pod default/mypod failed with exit code 5 matching FailJob rule at index 0',
    );
  });

  it('FailIndex on pod conditions', () => {
    const p = policy({ action: 'FailIndex', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] });
    expect(matchPodFailurePolicy(p, failed([], [disruption()]), KEY)).toEqual({ countFailed: true, action: 'FailIndex' });
  });

  it.each<['True' | 'False' | 'Unknown']>([['True'], ['False'], ['Unknown']])('Ignore matches status=%s exactly', (status) => {
    const p = policy({ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status }] });
    expect(matchPodFailurePolicy(p, failed([], [disruption(status)]), KEY)).toEqual({ countFailed: false, action: 'Ignore' });
  });

  it('pattern False does not match an actual True', () => {
    const p = policy({ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'False' }] });
    expect(matchPodFailurePolicy(p, failed([], [disruption('True')]), KEY)).toEqual({ countFailed: true });
  });

  it('pattern True does not match an actual False', () => {
    const p = policy({ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] });
    expect(matchPodFailurePolicy(p, failed([], [disruption('False')]), KEY)).toEqual({ countFailed: true });
  });

  it('an unset pattern status means True', () => {
    const p = policy({ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] });
    expect(matchPodFailurePolicy(p, failed([], [disruption('False')]), KEY)).toEqual({ countFailed: true });
    expect(matchPodFailurePolicy(p, failed([], [disruption('True')]), KEY)).toEqual({ countFailed: false, action: 'Ignore' });
  });

  it('FailJob on pod conditions, with the upstream message', () => {
    const p = policy({ action: 'FailJob', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] });
    expect(matchPodFailurePolicy(p, failed([], [disruption()]), KEY)).toEqual({
      message: 'Pod default/mypod has condition DisruptionTarget matching FailJob rule at index 0',
      countFailed: true,
      action: 'FailJob',
    });
  });

  it('Count on pod conditions', () => {
    const p = policy({ action: 'Count', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] });
    expect(matchPodFailurePolicy(p, failed([], [disruption()]), KEY)).toEqual({ countFailed: true, action: 'Count' });
  });

  it('the first matching rule of many decides', () => {
    const p = policy(
      { action: 'Count', onExitCodes: { operator: 'NotIn', values: [8] } },
      { action: 'Ignore', onExitCodes: { operator: 'In', values: [1, 2, 3] } },
      { action: 'FailJob', onExitCodes: { operator: 'NotIn', values: [5, 6, 7] } },
      { action: 'Count', onPodConditions: [{ type: 'ResourceLimitExceeded', status: 'True' }] },
      { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
    );
    expect(matchPodFailurePolicy(p, failed([exited('main', 32)]), KEY)).toEqual({ countFailed: true, action: 'Count' });
  });

  it('a rule matching nothing lets a later one decide', () => {
    const p = policy(
      { action: 'FailJob', onExitCodes: { operator: 'In', values: [42] } },
      { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] },
    );
    expect(matchPodFailurePolicy(p, failed([exited('main', 1)], [disruption()]), KEY)).toEqual({ countFailed: false, action: 'Ignore' });
  });
});
