import { MARK_SETTLE_MS, disruptionRoutes } from '../../activities/disruption/routes';
import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES } from '../../activities/kube/resources';
import type { PdbEvent } from '../../workflows/disruption/types';
import { disruptionWorkflow, staleDisruptionTargetWorkflow } from '../../workflows/disruption/workflow';
import { routeHarness, type Sent } from '../support/routes';

const harness = () => routeHarness<PdbEvent>(disruptionRoutes, { controllers: ['disruption'], tuning: { resyncMs: 7 } });

const pdb = (name: string, selector: object | null, rv = '1'): KubeObject =>
  ({ metadata: { namespace: 'ns', name, uid: `u-${name}`, resourceVersion: rv, generation: 1 }, spec: { selector, minAvailable: 1 }, status: {} } as unknown as KubeObject);

const pod = (name: string, labels: Record<string, string>, o: { ready?: boolean; rv?: string; mark?: string; deleting?: boolean } = {}): KubeObject =>
  ({
    metadata: { namespace: 'ns', name, uid: `u-${name}`, resourceVersion: o.rv ?? '1', labels, ...(o.deleting ? { deletionTimestamp: '2026-11-24T10:00:00Z' } : {}) },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'Ready', status: o.ready === false ? 'False' : 'True' },
        ...(o.mark ? [{ type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', lastTransitionTime: o.mark }] : []),
      ],
    },
  } as unknown as KubeObject);

const brief = (s: Sent<PdbEvent>) => ({ id: s.target.workflowId, event: s.event });

describe('disruption routes', () => {
  test('once budgets and pods are listed, every budget gets every pod its selector matches, on its own workflow', () => {
    const { sent, h } = harness();
    h(RESOURCES.pods).relisted([pod('a', { app: 'web' }), pod('b', { app: 'db' })], '3');
    expect(sent).toEqual([]);
    h(RESOURCES.podDisruptionBudgets).relisted([pdb('web', { matchLabels: { app: 'web' } }), pdb('all', {}), pdb('none', null)], '4');
    const byId: Record<string, PdbEvent> = Object.fromEntries(sent.map((s) => [s.target.workflowId!, s.event]));
    expect(Object.keys(byId).sort()).toEqual(['disruption/ns/all', 'disruption/ns/none', 'disruption/ns/web']);
    expect(byId['disruption/ns/web'].pods!.map((p) => p.name)).toEqual(['a']);
    expect(byId['disruption/ns/all'].pods!.map((p) => p.name).sort()).toEqual(['a', 'b']);
    expect(byId['disruption/ns/none'].pods).toEqual([]);
    expect(byId['disruption/ns/web'].allPods).toBe(true);
    expect(sent[0].target).toMatchObject({ controller: 'disruption', workflow: disruptionWorkflow, kind: 'PodDisruptionBudget' });
  });

  test('a pod change reaches the budgets that select it before or after; unchanged readiness sends nothing', () => {
    const { sent, h } = harness();
    h(RESOURCES.pods).relisted([pod('a', { app: 'web' })], '3');
    h(RESOURCES.podDisruptionBudgets).relisted([pdb('web', { matchLabels: { app: 'web' } }), pdb('db', { matchLabels: { app: 'db' } })], '4');
    sent.length = 0;
    h(RESOURCES.pods).event('MODIFIED', pod('a', { app: 'web' }, { rv: '5' }));
    expect(sent).toEqual([]);
    h(RESOURCES.pods).event('MODIFIED', pod('a', { app: 'web' }, { rv: '6', ready: false }));
    expect(sent.map(brief)).toEqual([{ id: 'disruption/ns/web', event: { pods: [{ name: 'a', uid: 'u-a', deleting: false, ready: false }] } }]);
    expect(sent[0].urgent).toBe(true);
    sent.length = 0;
    h(RESOURCES.pods).event('MODIFIED', pod('a', { app: 'db' }, { rv: '7' }));
    expect(sent.map(brief)).toEqual([
      { id: 'disruption/ns/db', event: { pods: [{ name: 'a', uid: 'u-a', deleting: false, ready: true }] } },
      { id: 'disruption/ns/web', event: { podsGone: ['a'] } },
    ]);
    sent.length = 0;
    h(RESOURCES.pods).event('DELETED', pod('a', { app: 'db' }, { rv: '8' }));
    expect(sent.map(brief)).toEqual([{ id: 'disruption/ns/db', event: { podsGone: ['a'] } }]);
  });

  test('a pod two budgets select goes to both; the first by name carries the warning', () => {
    const { sent, h } = harness();
    h(RESOURCES.pods).relisted([], '3');
    h(RESOURCES.podDisruptionBudgets).relisted([pdb('z', {}), pdb('a', { matchLabels: { app: 'web' } })], '4');
    sent.length = 0;
    h(RESOURCES.pods).event('ADDED', pod('p', { app: 'web' }));
    expect(sent.map((s) => [s.target.workflowId, s.event.shared])).toEqual([
      ['disruption/ns/a', [{ name: 'p', uid: 'u-p' }]],
      ['disruption/ns/z', undefined],
    ]);
  });

  test('a budget edit sends the budget; a new selector sends its pods anew; a deletion ends the run', () => {
    const { sent, h } = harness();
    h(RESOURCES.pods).relisted([pod('a', { app: 'web' }), pod('b', { app: 'db' })], '3');
    h(RESOURCES.podDisruptionBudgets).relisted([pdb('b', { matchLabels: { app: 'web' } })], '4');
    sent.length = 0;
    h(RESOURCES.podDisruptionBudgets).event('MODIFIED', pdb('b', { matchLabels: { app: 'web' } }, '5'));
    expect(sent[0].event.pods).toBeUndefined();
    h(RESOURCES.podDisruptionBudgets).event('MODIFIED', pdb('b', { matchLabels: { app: 'db' } }, '6'));
    expect(sent[1].event.pods!.map((p) => p.name)).toEqual(['b']);
    h(RESOURCES.podDisruptionBudgets).event('DELETED', pdb('b', { matchLabels: { app: 'db' } }, '7'));
    expect(sent[2].event).toEqual({ pdbGone: true });
  });

  test('a pod still marked as a disruption target after a while gets a workflow of its own, any pod, budget or not', () => {
    const { sent, h, family } = harness();
    h(RESOURCES.podDisruptionBudgets).relisted([], '1');
    h(RESOURCES.pods).relisted([pod('m', { x: 'y' }, { mark: '2026-11-24T10:00:00Z' }), pod('d', {}, { mark: '2026-11-24T10:00:00Z', deleting: true })], '3');
    // held first: an eviction deletes the pod it marked a moment later
    expect(sent).toEqual([]);
    family!.periodic!.run(Date.now() + MARK_SETTLE_MS);
    expect(sent.map((s) => s.target.workflowId)).toEqual(['disruption/ns/pods/m']);
    expect(sent[0].target.workflow).toBe(staleDisruptionTargetWorkflow);
    expect(sent[0].event).toEqual({ pod: { namespace: 'ns', name: 'm', uid: 'u-m', since: Date.parse('2026-11-24T10:00:00Z') } });
    // its deletion ends the workflow early
    h(RESOURCES.pods).event('MODIFIED', pod('m', { x: 'y' }, { mark: '2026-11-24T10:00:00Z', deleting: true, rv: '4' }));
    expect(sent[1].event).toEqual({ resolved: true });
  });

  test('an eviction (mark, then deletion) starts no workflow', () => {
    const { sent, h, family } = harness();
    h(RESOURCES.podDisruptionBudgets).relisted([], '1');
    h(RESOURCES.pods).relisted([pod('e', {})], '3');
    h(RESOURCES.pods).event('MODIFIED', pod('e', {}, { mark: new Date().toISOString(), rv: '4' }));
    h(RESOURCES.pods).event('MODIFIED', pod('e', {}, { mark: new Date().toISOString(), rv: '5', deleting: true }));
    h(RESOURCES.pods).event('DELETED', pod('e', {}, { rv: '6', deleting: true }));
    family!.periodic!.run(Date.now() + MARK_SETTLE_MS);
    expect(sent).toEqual([]);
  });
});
