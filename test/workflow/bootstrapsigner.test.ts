import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import type { SignClusterInfoRequest, SignClusterInfoResult } from '../../activities/bootstrapsigner/activities';
import { OBJECT_EVENT_SIGNAL } from '../../workflows/runtime/object-loop';
import { controllerTaskQueue } from '../../workflows/runtime/task-queues';
import { bootstrapSignerWorkflow, type BootstrapSignerEvent } from '../../workflows/bootstrapsigner/workflow';
import { eventually, settledAfter, workflowEnvPerSuite } from '../support/workflow-env';

/*
 * The signer's workflow on a real Temporal dev server with a scripted signing activity: a burst of
 * events is one pass, the echo of its own write is none, a conflict reads again at once, and a
 * signing token's expiry wakes it.
 */

const calls: Array<SignClusterInfoRequest & { at: number }> = [];
let script: Array<Partial<SignClusterInfoResult>> = [];
const activities = {
  async signClusterInfo(req: SignClusterInfoRequest): Promise<SignClusterInfoResult> {
    calls.push({ ...req, at: Date.now() });
    const next = script.shift() ?? { outcome: 'unchanged' };
    return { outcome: 'unchanged', signed: [], added: [], changed: [], removed: [], skipped: [], ...next };
  },
};

const base = `bootstrapsigner-${randomUUID()}`;
const taskQueue = controllerTaskQueue(base, 'bootstrapsigner');
const env = workflowEnvPerSuite({ taskQueue, workflowsPath: require.resolve('../../workflows'), activities });


test('one pass per burst; its own write\'s echo costs none; a conflict reads again; an expiry wakes it', async () => {
  const signal = (h: WorkflowHandle, e: BootstrapSignerEvent) => h.signal<[BootstrapSignerEvent]>(OBJECT_EVENT_SIGNAL, e);

  // 1. started by a list: one pass, which writes version 6
  script = [{ outcome: 'updated', resourceVersion: '6', signed: ['aaaaaa'], added: ['aaaaaa'] }];
  const h = await env().client.workflow.signalWithStart(bootstrapSignerWorkflow, {
    workflowId: `bootstrapsigner/${base}`, taskQueue, args: [{}],
    signal: OBJECT_EVENT_SIGNAL, signalArgs: [{ configMapRv: '5', secrets: ['bootstrap-token-aaaaaa'], listed: true } satisfies BootstrapSignerEvent],
  });
  await settledAfter(h, 1);
  expect(calls).toHaveLength(1);
  expect(calls[0].reason).toContain('secret bootstrap-token-aaaaaa changed');

  // 2. the echo of that write: a reconcile, but no pass
  await signal(h, { configMapRv: '6' });
  await settledAfter(h, 2);
  expect(calls).toHaveLength(1);

  // 3. someone else's edit: a pass; it conflicts, so another follows at once
  script = [{ outcome: 'conflict', resourceVersion: '7' }, { outcome: 'updated', resourceVersion: '9', signed: ['aaaaaa'] }];
  await signal(h, { configMapRv: '7' });
  await settledAfter(h, 4);
  expect(calls).toHaveLength(3);
  expect(calls[1].reason).toBe('cluster-info changed');
  expect(calls[2].reason).toBe('cluster-info changed while signing');

  // 4. a token that expires in 2 s: the workflow looks again after it expires, unasked
  const expiresAt = Date.now() + 2000;
  script = [{ outcome: 'updated', resourceVersion: '10', signed: ['aaaaaa', 'bbbbbb'], nextExpiryAt: new Date(expiresAt).toISOString() }, { outcome: 'updated', resourceVersion: '11', signed: ['aaaaaa'], removed: ['bbbbbb'] }];
  await signal(h, { secrets: ['bootstrap-token-bbbbbb'] });
  await eventually('the expiry pass', () => calls.length >= 5, 15_000);
  expect(calls[4].at).toBeGreaterThanOrEqual(expiresAt);
  expect(calls[4].reason).toBe('a signing token expired');
  const s = await settledAfter(h, 6);
  expect(s.view).toMatchObject({ configMap: 'kube-public/cluster-info', resourceVersion: '11', signedBy: ['aaaaaa'], removed: ['bbbbbb'], passes: 5 });

  await h.terminate('test done');
}, 120_000);
