import { randomUUID } from 'node:crypto';
import type { ExpansionObservation, ReportExpansionRequest } from '../../activities/pv-expander/activities';
import { OBJECT_EVENT_SIGNAL } from '../../workflows/runtime/object-loop';
import { controllerTaskQueue } from '../../workflows/runtime/task-queues';
import type { ExpansionClaim } from '../../workflows/pv-expander/logic';
import { pvExpanderWorkflow, type ExpansionEvent } from '../../workflows/pv-expander/workflow';
import { eventually, workflowEnvPerSuite } from '../support/workflow-env';

/*
 * The expand controller's run on a real Temporal dev server with scripted activities: a claim
 * change is reported once, even when a new holder of the watch sends it (or an older one) again
 * after a takeover; a newer change is reported again.
 */

let claimNow: ExpansionClaim;
const reports: string[] = [];
const activities = {
  async observeExpansion(): Promise<ExpansionObservation> {
    return { claim: claimNow, volume: { name: 'pv-1', claimRef: { namespace: 'ns', uid: claimNow.uid }, annotations: {} } };
  },
  async reportExpansion(req: ReportExpansionRequest): Promise<void> {
    reports.push(`${req.claim.resourceVersion} ${req.claim.request}`);
  },
};

const base = `pv-expander-${randomUUID()}`;
const taskQueue = controllerTaskQueue(base, 'persistentvolume-expander');
const env = workflowEnvPerSuite({ taskQueue, workflowsPath: require.resolve('../../workflows'), activities });

const claim = (resourceVersion: string, request: string): ExpansionClaim =>
  ({ namespace: 'ns', name: 'data', uid: 'u-data', phase: 'Bound', volumeName: 'pv-1', request, capacity: '1Gi', annotations: {}, resourceVersion });

test('a change sent again by a new watch holder is not reported twice; a newer one is', async () => {
  claimNow = claim('100', '2Gi');
  const h = await env().client.workflow.signalWithStart(pvExpanderWorkflow, {
    workflowId: `persistentvolume-expander/${base}/data`, taskQueue, args: [{ namespace: 'ns', name: 'data', uid: 'u-data' }],
    signal: OBJECT_EVENT_SIGNAL, signalArgs: [{ claim: claimNow } satisfies ExpansionEvent],
  });
  await eventually('the first report', async () => reports.length === 1);
  // the takeover's resumed watch sends the reported change and an older one again
  await h.signal<[ExpansionEvent]>(OBJECT_EVENT_SIGNAL, { claim: claim('100', '2Gi') });
  await h.signal<[ExpansionEvent]>(OBJECT_EVENT_SIGNAL, { claim: claim('99', '2Gi') });
  await new Promise((r) => setTimeout(r, 1500));
  expect(reports).toEqual(['100 2Gi']);
  expect((await h.describe()).status.name).toBe('RUNNING');
  // the claim grows again: a sync and a report, as upstream's update handler queues it
  claimNow = claim('105', '3Gi');
  await h.signal<[ExpansionEvent]>(OBJECT_EVENT_SIGNAL, { claim: claimNow });
  await eventually('the second report', async () => reports.length === 2);
  expect(reports).toEqual(['100 2Gi', '105 3Gi']);
}, 60_000);
