import { missingFromList, objectPathIn, openWorkflowsQuery } from '../../activities/informers/gone-sweep';

describe('the sweep of open workflows against a first list', () => {
  const open = [
    { workflowId: 'replicaset/a/web', namespace: 'a', name: 'web', uid: 'u1' },
    { workflowId: 'replicaset/b/web', namespace: 'b', name: 'web', uid: 'u2' },
    { workflowId: 'replicaset/a/api', namespace: 'a', name: 'api' },
  ];

  test('keeps the workflows whose object the list lacks, by namespace and name', () => {
    const listed = new Set(['a/web']);
    expect(missingFromList(open, (ns, name) => listed.has(`${ns}/${name}`)).map((w) => w.workflowId)).toEqual(['replicaset/b/web', 'replicaset/a/api']);
  });

  test('a list that has every object leaves nothing to tell', () => {
    expect(missingFromList(open, () => true)).toEqual([]);
  });

  test('asks for one controller\'s running workflows of one kind on one deployment\'s task queues', () => {
    expect(openWorkflowsQuery('job', 'Job', 'kcm')).toBe(
      'KcmController = "job" AND KcmKind = "Job" AND ExecutionStatus = "Running" AND (TaskQueue = "kcm" OR TaskQueue STARTS_WITH "kcm/")');
  });

  test('reads an object at its path in the store\'s collection, namespaced or not', () => {
    expect(objectPathIn('/apis/apps/v1/replicasets', 'a', 'web')).toBe('/apis/apps/v1/namespaces/a/replicasets/web');
    expect(objectPathIn('/api/v1/nodes', '', 'n1')).toBe('/api/v1/nodes/n1');
    expect(objectPathIn('/api/v1/services?labelSelector=x', 'b', 'svc')).toBe('/api/v1/namespaces/b/services/svc');
  });
});
