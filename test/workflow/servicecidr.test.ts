import { randomUUID } from 'node:crypto';
import type {
  ApplyServiceCidrConditionRequest, CheckServiceCidrDeletionRequest, CheckServiceCidrDeletionResult, ServiceCidrWriteResult,
} from '../../activities/servicecidr/activities';
import { OBJECT_EVENT_SIGNAL } from '../../workflows/runtime/object-loop';
import { controllerTaskQueue } from '../../workflows/runtime/task-queues';
import { READY_CONDITION, SERVICE_CIDR_FINALIZER, TERMINATING_CONDITION, type ServiceCidrView } from '../../workflows/servicecidr/logic';
import { serviceCidrWorkflow, type ServiceCidrEvent } from '../../workflows/servicecidr/workflow';
import { eventually, workflowEnvPerSuite } from '../support/workflow-env';

/*
 * The ServiceCIDR workflow on a real Temporal dev server with scripted activities: the finalizer
 * and Ready are written once, the watch's versions from before the run's own write start nothing,
 * a blocked deletion is marked Terminating once, and an unblocked one waits out the grace period.
 */

type Call = { name: string; at: number; req: unknown };
const calls: Call[] = [];
let rv = 10;
let checks: CheckServiceCidrDeletionResult[] = [];
const activities = {
  async addServiceCidrFinalizer(req: unknown): Promise<ServiceCidrWriteResult> {
    calls.push({ name: 'addServiceCidrFinalizer', at: Date.now(), req });
    return { outcome: 'written', resourceVersion: String(++rv) };
  },
  async removeServiceCidrFinalizer(req: unknown): Promise<ServiceCidrWriteResult> {
    calls.push({ name: 'removeServiceCidrFinalizer', at: Date.now(), req });
    return { outcome: 'written', resourceVersion: String(++rv) };
  },
  async applyServiceCidrCondition(req: ApplyServiceCidrConditionRequest): Promise<ServiceCidrWriteResult> {
    calls.push({ name: `apply ${req.condition.status}`, at: Date.now(), req });
    return { outcome: 'written', resourceVersion: String(++rv) };
  },
  async checkServiceCidrDeletion(req: CheckServiceCidrDeletionRequest): Promise<CheckServiceCidrDeletionResult> {
    calls.push({ name: 'checkServiceCidrDeletion', at: Date.now(), req });
    const next = checks.shift();
    if (!next) throw new Error('no scripted check left');
    return next;
  },
};

const base = `servicecidr-${randomUUID()}`;
const taskQueue = controllerTaskQueue(base, 'servicecidr');
const env = workflowEnvPerSuite({ taskQueue, workflowsPath: require.resolve('../../workflows'), activities });

const view = (name: string, o: Partial<ServiceCidrView>): ServiceCidrView => ({ name, uid: `u-${name}`, resourceVersion: '1', cidrs: ['10.97.0.0/24'], finalized: false, ...o });
const start = (name: string, e: ServiceCidrEvent) => env().client.workflow.signalWithStart(serviceCidrWorkflow, {
  workflowId: `servicecidr/${base}-${name}`, taskQueue, args: [{ name, uid: `u-${name}` }], signal: OBJECT_EVENT_SIGNAL, signalArgs: [e],
});
const done = (h: { describe(): Promise<{ status: { name: string } }> }) => eventually('the run ended', async () => (await h.describe()).status.name === 'COMPLETED', 20_000);
const callsFor = (name: string) => calls.filter((c) => (c.req as { name: string }).name === name).map((c) => c.name);

test('finalizer and Ready once; the versions from before its own write start nothing; the echo ends the run', async () => {
  const h = await start('live', { cidr: view('live', {}) });
  await eventually('two writes', () => callsFor('live').length >= 2);
  // the finalizer's own echo, older than the Ready write: ignored, the run keeps waiting
  await h.signal<[ServiceCidrEvent]>(OBJECT_EVENT_SIGNAL, { cidr: view('live', { resourceVersion: String(rv - 1), finalized: true }) });
  await new Promise((r) => setTimeout(r, 500));
  expect((await h.describe()).status.name).toBe('RUNNING');
  await h.signal<[ServiceCidrEvent]>(OBJECT_EVENT_SIGNAL, { cidr: view('live', { resourceVersion: String(rv), finalized: true, ready: READY_CONDITION }) });
  await done(h);
  expect(callsFor('live')).toEqual(['addServiceCidrFinalizer', 'apply True']);
}, 60_000);

test('a blocked deletion is marked Terminating once; an unblocked one waits out the grace period', async () => {
  const deletionTimestamp = new Date(Math.floor((Date.now() - 8000) / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  const going = view('going', { finalized: true, ready: READY_CONDITION, deletionTimestamp });
  checks = [{ gone: false, view: going, check: { canDelete: false, blockingIp: '10.97.0.10' }, ipAddresses: 1, from: 'informer' }];
  const h1 = await start('going', { cidr: going });
  await done(h1);
  expect(callsFor('going')).toEqual(['checkServiceCidrDeletion', 'apply False']);
  expect((calls.find((c) => c.name === 'apply False')!.req as ApplyServiceCidrConditionRequest).condition).toEqual(TERMINATING_CONDITION);

  // the address goes: the next run waits until 10 s after the deletion began, checks again, removes the finalizer
  const blocked = { ...going, ready: TERMINATING_CONDITION };
  checks = [
    { gone: false, view: blocked, check: { canDelete: true, why: 'no-orphans' }, ipAddresses: 0, from: 'informer' },
    { gone: false, view: blocked, check: { canDelete: true, why: 'no-orphans' }, ipAddresses: 0, from: 'api' },
  ];
  const h2 = await start('going', { cidr: blocked });
  await done(h2);
  const removed = calls.find((c) => c.name === 'removeServiceCidrFinalizer');
  expect(callsFor('going').slice(2)).toEqual(['checkServiceCidrDeletion', 'checkServiceCidrDeletion', 'removeServiceCidrFinalizer']);
  expect(removed!.at).toBeGreaterThanOrEqual(Date.parse(deletionTimestamp) + 10_000);
  expect((removed!.req as { reason: string }).reason).toContain('no allocated IPAddress lies in it alone');
  expect(SERVICE_CIDR_FINALIZER).toBe('networking.k8s.io/service-cidr-finalizer');
}, 60_000);
