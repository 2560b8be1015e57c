import { CONTROLLERS } from '../../workers/registry';
import { earlierInformerWorkflowIds, informerWorkflowId, legacyInformerWorkflowId } from '../../workflows/informer';
import { informerSetKey, informerTaskQueue, joinedSetKey } from '../../workflows/runtime/task-queues';
import { boundedWorkflowId, idHash, MAX_WORKFLOW_ID_LENGTH } from '../../workflows/runtime/workflow-ids';

describe('workflow IDs that fit a SQL-persisted Temporal', () => {
  test('an ID that fits is kept as it is', () => {
    expect(boundedWorkflowId('replicaset/default/web-7d9f')).toBe('replicaset/default/web-7d9f');
    const edge = `replicaset/ns/${'a'.repeat(MAX_WORKFLOW_ID_LENGTH - 14)}`;
    expect(edge).toHaveLength(MAX_WORKFLOW_ID_LENGTH);
    expect(boundedWorkflowId(edge)).toBe(edge);
  });

  test('a longer one keeps its head, ends in a hash of the whole, and is exactly the limit long', () => {
    const ns = 'n'.repeat(63);
    const a = `endpointslicemirroring/${ns}/${'x'.repeat(252)}a`;
    const b = `endpointslicemirroring/${ns}/${'x'.repeat(252)}b`;
    const [ba, bb] = [boundedWorkflowId(a), boundedWorkflowId(b)];
    expect(ba).toHaveLength(MAX_WORKFLOW_ID_LENGTH);
    expect(ba.startsWith(`endpointslicemirroring/${ns}/xxx`)).toBe(true);
    expect(ba.endsWith(`~${idHash(a)}`)).toBe(true);
    // names that differ only past the cut still get their own workflows
    expect(ba).not.toBe(bb);
    // and the same name always the same one
    expect(boundedWorkflowId(a)).toBe(ba);
  });

  test('the hash is 16 hex digits and stable across builds', () => {
    expect(idHash('')).toBe('811c9dc5811c9dc5');
    expect(idHash('a')).toMatch(/^[0-9a-f]{16}$/);
    expect(idHash('a')).not.toBe(idHash('b'));
  });

  test('every default controller\'s informer has an ID and queue well under the limit, for the longest allowed --task-queue', () => {
    const all = CONTROLLERS.map((c) => c.short);
    expect(joinedSetKey(all).length).toBeGreaterThan(MAX_WORKFLOW_ID_LENGTH);
    expect(informerSetKey(all)).toMatch(new RegExp(`^${new Set(all).size}-controllers-[0-9a-f]{16}$`));
    expect(informerSetKey([...all].reverse())).toBe(informerSetKey(all));
    const queue = 'q'.repeat(128);
    expect(informerWorkflowId(queue, all).length).toBeLessThanOrEqual(MAX_WORKFLOW_ID_LENGTH);
    expect(informerTaskQueue(queue, all).length).toBeLessThanOrEqual(MAX_WORKFLOW_ID_LENGTH);
    // a short set keeps its readable key
    expect(informerSetKey(['replicaset', 'deployment'])).toBe('deployment+replicaset');
  });

  test('an earlier build\'s informer IDs of the same set are found, to be stopped', () => {
    const all = CONTROLLERS.map((c) => c.short);
    expect(earlierInformerWorkflowIds('kcm', all)).toEqual([legacyInformerWorkflowId('kcm'), `temporal-kcm/kcm/informers/${joinedSetKey(all)}`]);
    // a short set's ID never changed
    expect(earlierInformerWorkflowIds('kcm', ['deployment'])).toEqual([legacyInformerWorkflowId('kcm')]);
  });
});
