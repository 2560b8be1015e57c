import type { KubeRest } from '../../activities/kube/rest';
import { RECONCILE_ERROR_REASON, createFailureReporter } from '../../activities/kube/failure-reports';
import { createLogger } from '../../workers/logger';

/** The reports the object loop asks for land on the object its search attributes name, as a Warning Event. */
describe('createFailureReporter', () => {
  const recorded: unknown[][] = [];
  const reporter = createFailureReporter('statefulset-controller', {
    rest: {} as KubeRest,
    logger: createLogger('silent'),
    recordEvent: (...args) => { recorded.push(args); },
  });
  beforeEach(() => { recorded.length = 0; });

  test('a throw folding an event in: Warning ReconcileError on the object, its apiVersion from its kind', async () => {
    await reporter.reportThrown({
      reason: 'r', controller: 'statefulset', stage: 'event', message: "Cannot read properties of undefined (reading 'map')",
      object: { kind: 'StatefulSet', namespace: 'ns', name: 'web', uid: 'u-1' },
    });
    expect(recorded).toEqual([['statefulset-controller', { apiVersion: 'apps/v1', kind: 'StatefulSet', namespace: 'ns', name: 'web', uid: 'u-1' }, 'Warning', RECONCILE_ERROR_REASON,
      "the statefulset controller threw folding an event of it in and retries with backoff: Cannot read properties of undefined (reading 'map')"]]);
  });

  test('a throw reconciling a cluster-scoped object; a refusal keeps the authorizer\'s words', async () => {
    await reporter.reportThrown({ reason: 'r', controller: 'nodelifecycle', stage: 'reconcile', message: 'boom', object: { kind: 'Node', namespace: '', name: 'n1', uid: 'u-n' } });
    await reporter.reportForbidden({ reason: 'r', controller: 'nodelifecycle', message: 'nodes is forbidden: no', object: { kind: 'Node', namespace: '', name: 'n1', uid: 'u-n' } });
    expect(recorded.map((r) => [(r[1] as { apiVersion: string }).apiVersion, r[3], r[4]])).toEqual([
      ['v1', 'ReconcileError', 'the nodelifecycle controller threw reconciling it and retries with backoff: boom'],
      ['v1', 'Forbidden', 'nodes is forbidden: no'],
    ]);
  });
});
