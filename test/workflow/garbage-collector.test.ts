import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { GcApplyBatch, GcApplyResult, GcObservation, GcObserveRequest } from '../../activities/gc/activities';
import { garbageCollectorWorkflow, gcWorkflowId, type GcEvent } from '../../workflows/gc/workflow';
import type { GcAction, ObjectMetaView, ObjectRef, OwnerLookup } from '../../workflows/gc/types';
import type { ThrownReport } from '../../workflows/runtime/api-rejections';
import { SA_KIND, SA_LAST_ERROR, SA_NAME, SA_NAMESPACE } from '../../workflows/search-attributes';
import { temporal } from '@temporalio/proto';
import { OBJECT_EVENT_SIGNAL } from '../../workflows/runtime/object-loop';
import { controllerTaskQueue } from '../../workflows/runtime/task-queues';
import { eventually, workflowEnvPerSuite } from '../support/workflow-env';

/*
 * The collector's workflow on a real Temporal dev server with scripted activities: a dependent it
 * deletes in the foreground enters the foreground a moment later, and the graph's signal saying so
 * reaches the same workflow ID while the run is finishing. The run must take it up and remove the
 * finalizer once no dependent blocks, not end with the signal unread (chaos, hostile corpus,
 * restarts: owner-cycle-b kept for ever by its foregroundDeletion finalizer).
 */

const EventType = temporal.api.enums.v1.EventType;
const ns = `gc-${randomUUID().slice(0, 8)}`;
const cm = (name: string, o: Partial<ObjectMetaView> = {}): ObjectMetaView => ({
  apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name, uid: `u-${name}`, resourceVersion: '10', finalizers: [], ownerReferences: [], ...o,
});
const refOf = (o: ObjectMetaView): ObjectRef => ({ apiVersion: o.apiVersion, kind: o.kind, namespace: o.namespace, name: o.name, uid: o.uid });
const ownerRef = (o: ObjectMetaView, blockOwnerDeletion: boolean) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.name, uid: o.uid, blockOwnerDeletion });

// a cycle: a, deleted in foreground, owns b; b owns a, both references blocking
const deletingA = cm('a', { deletionTimestamp: '2026-12-02T18:47:38Z', finalizers: ['foregroundDeletion'] });
const b = cm('b', { ownerReferences: [ownerRef(deletingA, false)] });
const aOwnedByB = { ...deletingA, ownerReferences: [ownerRef(b, true)] };
const deletingB = { ...b, resourceVersion: '11', deletionTimestamp: '2026-12-02T18:47:39Z', finalizers: ['foregroundDeletion'] };

let observations: GcObservation[] = [];
const applied: GcAction[][] = [];
let onDelete: (() => Promise<void>) | undefined;
/** answers every observation from the request, in place of the scripted queue */
let observeBy: ((req: GcObserveRequest) => GcObservation) | undefined;
const thrownReports: ThrownReport[] = [];
const activities = {
  async reportThrown(r: ThrownReport): Promise<void> {
    thrownReports.push(r);
  },
  async gcObserve(req: GcObserveRequest): Promise<GcObservation> {
    if (observeBy) return observeBy(req);
    const next = observations.shift();
    if (!next) throw new Error('no scripted observation left');
    return next;
  },
  async gcApplyAll(batch: GcApplyBatch): Promise<GcApplyResult> {
    applied.push(batch.actions);
    // the foreground deletion lands, and the graph sees b enter the foreground (a is gone by then)
    // before this activity's completion reaches the run
    if (batch.actions.some((a) => a.type === 'deleteObject')) await onDelete?.();
    return { ok: true };
  },
};

const base = `gc-${randomUUID()}`;
const taskQueue = controllerTaskQueue(base, 'garbagecollector');
const env = workflowEnvPerSuite({ taskQueue, workflowsPath: require.resolve('../../workflows'), activities });

test('a dependent deleted in the foreground, whose entering the foreground is signalled as its run finishes: the run removes the finalizer', async () => {
  observations = [
    // b's owner a waits on its dependents, and b has a blocking dependent of its own (a): delete b in the foreground
    { object: b, lookups: [{ ref: ownerRef(deletingA, false), state: 'exists', namespaced: true, owner: aOwnedByB }], dependents: [aOwnedByB] },
    // b in the foreground, a gone: nothing blocks b
    { object: deletingB, lookups: [], dependents: [] },
    // the finalizer's removal let the apiserver delete b
    { lookups: [], dependents: [] },
  ];
  const workflowId = gcWorkflowId(b);
  const start = (e: GcEvent) => env().client.workflow.signalWithStart(garbageCollectorWorkflow, {
    workflowId, taskQueue, args: [{ ref: refOf(b) }], signal: OBJECT_EVENT_SIGNAL, signalArgs: [e],
  });
  onDelete = async () => {
    await env().client.workflow.getHandle(workflowId).signal<[GcEvent]>(OBJECT_EVENT_SIGNAL, { dependents: [] });
  };
  const h = await start({ dependents: [refOf(aOwnedByB)] });
  await eventually('the foreground finalizer removed', () => applied.some((as) => as.some((a) => a.type === 'removeFinalizer')), 20_000);
  expect(applied.map((as) => as.map((a) => a.type))).toEqual([['deleteObject'], ['removeFinalizer']]);
  expect(applied[1][0]).toMatchObject({ type: 'removeFinalizer', target: refOf(b), finalizer: 'foregroundDeletion' });
  // waiting for b to go: the graph's next signal (b removed) ends the run
  expect((await h.describe()).status.name).toBe('RUNNING');
  await h.signal<[GcEvent]>(OBJECT_EVENT_SIGNAL, { dependents: [] });
  await eventually('the run ended', async () => (await h.describe()).status.name === 'COMPLETED', 20_000);
  expect(observations).toEqual([]);
  // the drain was this run's new branch: its patch is recorded
  const history = await h.fetchHistory();
  const markers = (history.events ?? []).filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
    .map((e) => Buffer.from(e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data ?? []).toString('utf8'));
  expect(markers.some((m) => m.includes('gc-drains-before-finish'))).toBe(true);
}, 60_000);

test('an observation its planning code throws on: the item backs off with one ReconcileError report, then heals; no workflow task fails', async () => {
  const owner = cm('owner');
  const dependent = cm('dependent', { ownerReferences: [ownerRef(owner, false)] });
  const exists: OwnerLookup = { ref: ownerRef(owner, false), state: 'exists', namespaced: true, owner };
  observations = [
    // no lookups at all, a shape planDependent was never written for: it throws on them
    { object: dependent, lookups: undefined as unknown as OwnerLookup[], dependents: [] },
    { object: dependent, lookups: undefined as unknown as OwnerLookup[], dependents: [] },
    // the owner lives: nothing to do, the item is done
    { object: dependent, lookups: [exists], dependents: [] },
  ];
  const h = await env().client.workflow.signalWithStart(garbageCollectorWorkflow, {
    workflowId: gcWorkflowId(dependent),
    taskQueue,
    args: [{ ref: refOf(dependent), tuning: { backoffBaseMs: 100, backoffMaxMs: 200 } }],
    signal: OBJECT_EVENT_SIGNAL,
    signalArgs: [{ dependents: [] }],
    // the object the run is about, as the informer names it when it starts a run
    typedSearchAttributes: [{ key: SA_KIND, value: 'ConfigMap' }, { key: SA_NAMESPACE, value: ns }, { key: SA_NAME, value: 'dependent' }],
  });
  await eventually('the run ended', async () => (await h.describe()).status.name === 'COMPLETED', 20_000);
  expect(observations).toEqual([]);
  // two throws alike, one report; the success after them clears KcmLastError
  expect(thrownReports).toHaveLength(1);
  expect(thrownReports[0]).toMatchObject({ controller: 'garbagecollector', stage: 'reconcile', object: { kind: 'ConfigMap', namespace: ns, name: 'dependent' } });
  expect(thrownReports[0].message).toMatch(/TypeError|undefined/);
  expect((await h.describe()).typedSearchAttributes.get(SA_LAST_ERROR)).toBeUndefined();
  const events = (await h.fetchHistory()).events ?? [];
  expect(events.filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED)).toHaveLength(0);
  const kcmUpserts = events.filter((e) => e.eventType === EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES)
    .flatMap((e) => Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {}));
  // set at the first throw, cleared at the success
  expect(kcmUpserts.filter((k) => k === 'KcmLastError')).toHaveLength(2);
}, 60_000);

test('a foreground owner waiting on a dependent that keeps a finalizer: a run that continues as new keeps its dependents, and the owner keeps its finalizer', async () => {
  const owner = cm('waiting-owner', { deletionTimestamp: '2026-12-03T13:00:00Z', finalizers: ['foregroundDeletion'] });
  // asked to go, but held by a finalizer nobody removes yet
  const held = cm('held', { ownerReferences: [ownerRef(owner, true)], deletionTimestamp: '2026-12-03T13:00:01Z', finalizers: ['example.com/hold'] });
  const runsSeen = new Map<string, number>();
  // the API as the collector's read sees it: the object, and those of the dependents it is told of that exist
  observeBy = (req) => {
    const run = Context.current().info.workflowExecution?.runId ?? '';
    runsSeen.set(run, req.dependents.length);
    return { object: owner, lookups: [], dependents: req.dependents.some((d) => d.uid === held.uid) ? [held] : [] };
  };
  applied.length = 0;
  try {
    const h = await env().client.workflow.signalWithStart(garbageCollectorWorkflow, {
      workflowId: gcWorkflowId(owner), taskQueue, signal: OBJECT_EVENT_SIGNAL, signalArgs: [{ dependents: [refOf(held)] }],
      // a resync every 200 ms and a short history: the run continues as new within seconds, waiting
      args: [{ ref: refOf(owner), tuning: { resyncMs: 200, maxHistoryEvents: 20 } }],
    });
    await eventually('two runs after the first', () => runsSeen.size >= 3, 30_000);
    // every run was told of the dependent, and nothing was written: the finalizer stays while it blocks
    expect([...runsSeen.values()]).toEqual([...runsSeen.keys()].map(() => 1));
    expect(applied.flat().filter((a) => a.type === 'removeFinalizer')).toEqual([]);
    await h.terminate('test over');
  } finally {
    observeBy = undefined;
  }
}, 60_000);
