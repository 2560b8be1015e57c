import type { AuditEvent } from '../../bench/lib/audit';
import { preconditionViolations } from '../../chaos/checks';
import { indexesOf } from '../../chaos/scenarios/hostile/indexes';
import { notYetAuthorized } from '../../chaos/scenarios/hostile/item';

const SA = 'system:serviceaccount:kube-system:';
const ev = (o: Partial<AuditEvent> & { verb: string; who: string; resource: string; subresource?: string }): AuditEvent => ({
  level: 'Request', verb: o.verb, user: { username: o.who === 'kubernetes-admin' ? o.who : SA + o.who },
  objectRef: { resource: o.resource, subresource: o.subresource, namespace: 'ns', name: 'x' }, responseStatus: { code: 200 }, requestObject: o.requestObject,
});

describe('the write-precondition invariant', () => {
  it('passes the preconditions upstream sends', () => {
    expect(preconditionViolations([
      ev({ verb: 'update', who: 'replicaset-controller', resource: 'replicasets', subresource: 'status', requestObject: { metadata: { name: 'x', resourceVersion: '12' } } }),
      ev({ verb: 'patch', who: 'replicaset-controller', resource: 'pods', requestObject: { metadata: { ownerReferences: [{ uid: 'o' }], uid: 'p' } } }),
      ev({ verb: 'patch', who: 'generic-garbage-collector', resource: 'configmaps', requestObject: { metadata: { ownerReferences: [{ $patch: 'delete', uid: 'o' }], uid: 'c' } } }),
      ev({ verb: 'delete', who: 'generic-garbage-collector', resource: 'pods', requestObject: { kind: 'DeleteOptions', preconditions: { uid: 'p' }, propagationPolicy: 'Background' } }),
      // a ReplicaSet's surplus pod and a status patch are conditional on nothing upstream either
      ev({ verb: 'delete', who: 'replicaset-controller', resource: 'pods' }),
      ev({ verb: 'patch', who: 'job-controller', resource: 'pods', requestObject: { metadata: { finalizers: null } } }),
      // not a controller: the harness and kubectl users are not held to it
      ev({ verb: 'update', who: 'kubernetes-admin', resource: 'deployments', requestObject: { metadata: {} } }),
    ])).toEqual([]);
  });

  it('names each missing precondition once per kind of write, with a count', () => {
    const found = preconditionViolations([
      ev({ verb: 'update', who: 'deployment-controller', resource: 'replicasets', requestObject: { metadata: { name: 'a' } } }),
      ev({ verb: 'update', who: 'deployment-controller', resource: 'replicasets', requestObject: { metadata: { name: 'b', resourceVersion: '' } } }),
      ev({ verb: 'patch', who: 'replicaset-controller', resource: 'pods', requestObject: { metadata: { ownerReferences: [] } } }),
      // a delete sent with no body has no preconditions
      ev({ verb: 'delete', who: 'generic-garbage-collector', resource: 'configmaps' }),
    ]);
    expect(found).toEqual([
      'update of replicasets ns/x by deployment-controller without metadata.resourceVersion (and 1 more like it)',
      'patch of pods ns/x by replicaset-controller changes ownerReferences without metadata.uid or resourceVersion',
      'delete of configmaps ns/x by generic-garbage-collector without preconditions.uid',
    ]);
  });

  it('skips a write refused before its body was read (no requestObject, nothing written)', () => {
    // as a restarted kube-apiserver answers before its RBAC cache is filled
    const refused = { ...ev({ verb: 'update', who: 'deployment-controller', resource: 'deployments', subresource: 'status' }), responseStatus: { code: 403 } };
    expect(preconditionViolations([refused, { ...refused, verb: 'delete', user: { username: SA + 'generic-garbage-collector' }, responseStatus: { code: 429 } }])).toEqual([]);
    // the same without a body, but done, is judged
    expect(preconditionViolations([{ ...refused, responseStatus: { code: 200 } }])).toHaveLength(1);
  });

  it('reads only Request-level events (Metadata ones carry no body to judge)', () => {
    expect(preconditionViolations([{ ...ev({ verb: 'update', who: 'deployment-controller', resource: 'replicasets' }), level: 'Metadata' }])).toEqual([]);
  });
});

describe('index ranges', () => {
  it('expands a Job status range list', () => {
    expect(indexesOf('0-3,7,9-10')).toEqual([0, 1, 2, 3, 7, 9, 10]);
    expect(indexesOf(undefined)).toEqual([]);
    expect(indexesOf('')).toEqual([]);
  });
});

describe('events compared with upstream', () => {
  it('leave out a controller refused while a restarted API server fills its RBAC caches, and nothing else', () => {
    expect(notYetAuthorized('Error creating job: jobs.batch is forbidden: User "system:serviceaccount:kube-system:cronjob-controller" cannot create resource "jobs" in API group "batch" in the namespace "x"')).toBe(true);
    expect(notYetAuthorized('Error creating: pods "web-abc" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=10, limited: pods=10')).toBe(false);
    expect(notYetAuthorized('Saw a job that the controller did not create or forgot: x')).toBe(false);
    expect(notYetAuthorized(undefined)).toBe(false);
  });
});
