import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { Worker } from '@temporalio/worker';
import { createDaemonSetActivities } from '../../activities/daemonset/activities';
import { daemonSetView } from '../../activities/daemonset/projections';
import type { KubeObject } from '../../activities/kube/projections';
import { DATA_CONVERTER } from '../../workers/payload-codec';
import { daemonSetWorkflow, daemonSetWorkflowId } from '../../workflows/daemonset/workflow';
import type { DaemonSetEvent } from '../../workflows/daemonset/types';
import { OBJECT_EVENT_SIGNAL } from '../../workflows/runtime/object-loop';
import { controllerTaskQueue } from '../../workflows/runtime/task-queues';
import { projectWorkflowBundle } from '../support/shared-workflow-bundle';
import { SILENT_SINKS, eventually, recordingStubs, workflowEnvPerSuite } from '../support/workflow-env';

/*
 * A DaemonSet event too large for a payload goes out as a look again (shrinkDaemonSetEvent), and
 * the workflow must then read the DaemonSet and everything it decides on from the API, even when
 * it already held a full view. On the dev server: a run told everything (a full event) acts on
 * it without a read; one told everything and then to look again reads (observeDaemonSet) first.
 */

const ds = daemonSetView({
  metadata: { namespace: 'a', name: 'agent', uid: 'u-agent', resourceVersion: '5', generation: 1 },
  spec: { selector: { matchLabels: { app: 'agent' } }, template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
  status: {},
} as KubeObject);
const full: DaemonSetEvent = { ds, full: true, verdicts: {}, pods: [], revisions: [] };

/** Activity calls by workflow ID (see recordingStubs) */
const calls = new Map<string, string[]>();
const names = Object.keys(createDaemonSetActivities({ rest: {}, reader: {}, logger: pino({ level: 'silent' }), recordEvent: {}, local: {} } as never));
const activities = recordingStubs([...names, 'reportThrown'], calls);

const env = workflowEnvPerSuite({ taskQueue: `idle-${randomUUID()}`, workflowsPath: require.resolve('../../workflows'), activities: {} });

test('a look again after a full event makes the run read the DaemonSet before it acts; a full event alone does not', async () => {
  const client = env().client;
  const taskQueue = controllerTaskQueue(`ds-look-${randomUUID()}`, 'daemonset');
  const start = async (events: DaemonSetEvent[]) => {
    const workflowId = `${daemonSetWorkflowId(ds.namespace, ds.name)}/${randomUUID()}`;
    const h = await client.workflow.start(daemonSetWorkflow, { taskQueue, workflowId, args: [{ namespace: ds.namespace, name: ds.name, uid: ds.uid }] });
    // sent before a worker polls the queue: the run's first task folds them all
    for (const e of events) await h.signal(OBJECT_EVENT_SIGNAL, e);
    return h;
  };
  const told = await start([full]);
  const lookAgain = await start([full, { lookAgain: true }]);
  const worker = await Worker.create({
    connection: env().nativeConnection, namespace: env().namespace ?? 'default', taskQueue,
    workflowBundle: await projectWorkflowBundle(), activities, sinks: SILENT_SINKS, dataConverter: DATA_CONVERTER, shutdownGraceTime: '100ms',
  });
  await worker.runUntil(async () => {
    await eventually('both runs call an activity', () => (calls.get(told.workflowId)?.length && calls.get(lookAgain.workflowId)?.length ? true : undefined));
    for (const h of [told, lookAgain]) await h.terminate('test done').catch(() => undefined);
  });
  expect(calls.get(lookAgain.workflowId)![0]).toBe('observeDaemonSet');
  expect(calls.get(told.workflowId)).not.toContain('observeDaemonSet');
});
