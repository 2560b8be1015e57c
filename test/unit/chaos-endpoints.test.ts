import type { AuditEvent } from '../../bench/lib/audit';
import {
  churnPlan, endStateProblems, endpointsWrittenAfterDelete, outcomeOf, plannedEnd, wantedEndpoints, wantedSliceEndpoints,
  type EndpointsObj, type Expectation, type PodObj, type ServiceObj, type SliceObj, type World,
} from '../../chaos/scenarios/endpoints';

const pod = (name: string, o: { ip?: string; ready?: boolean; terminating?: boolean; phase?: string; half?: string } = {}): PodObj => ({
  metadata: { name, uid: `uid-${name}`, labels: { app: 'web', half: o.half ?? 'a' }, ...(o.terminating ? { deletionTimestamp: '2026-11-28T00:00:00Z' } : {}) },
  status: {
    phase: o.phase ?? 'Running', ...(o.ip === undefined ? {} : { podIP: o.ip }),
    conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
  },
});
const svc = (name: string, publish = false, selector: Record<string, string> = { app: 'web' }): ServiceObj =>
  ({ metadata: { name, uid: `uid-svc-${name}` }, spec: { selector, ...(publish ? { publishNotReadyAddresses: true } : {}) } });

describe('the endpoints churn plan', () => {
  test('the same every time; sizes; each pod recreated once; a recreated pod keeps its readiness in its own round', () => {
    expect(churnPlan('full')).toEqual(churnPlan('full'));
    for (const mode of ['full', 'quick'] as const) {
      const plan = churnPlan(mode);
      expect(plan.pods).toHaveLength(mode === 'full' ? 250 : 60);
      const recreated = plan.rounds.flatMap((r) => r.recreate);
      expect(new Set(recreated).size).toBe(plan.pods.length);
      expect(recreated).toHaveLength(plan.pods.length);
      for (const r of plan.rounds) for (const f of r.flip) expect(r.recreate).not.toContain(f.pod);
      // each flip writes the opposite of what the pod was, so every write is a change
      const ready = new Map(plan.pods.map((n) => [n, true]));
      for (const r of plan.rounds) {
        for (const n of r.recreate) ready.set(n, true);
        for (const f of r.flip) {
          expect(f.ready).toBe(!ready.get(f.pod));
          ready.set(f.pod, f.ready);
        }
      }
      // the end has Ready and not-Ready pods, and terminating ones of both kinds
      const end = plannedEnd(plan);
      const states = [...end.values()];
      expect(states.filter((s) => !s.terminating && s.ready).length).toBeGreaterThan(0);
      expect(states.filter((s) => !s.terminating && !s.ready).length).toBeGreaterThan(0);
      const terminating = plan.terminate.map((n) => end.get(n)!);
      expect(terminating.every((s) => s.terminating)).toBe(true);
      expect(new Set(terminating.map((s) => s.ready)).size).toBe(2);
      expect(plan.switchAfter).toBeLessThan(plan.rounds.length - 1);
    }
  });
});

describe('what the endpoints controllers should show', () => {
  const pods = [
    pod('a', { ip: '10.0.0.1' }),
    pod('b', { ip: '10.0.0.2', ready: false }),
    pod('c', { ip: '10.0.0.3', terminating: true }),
    pod('d', { ip: '10.0.0.4', ready: false, terminating: true }),
    pod('e'), // no IP yet
    pod('f', { ip: '10.0.0.6', phase: 'Succeeded' }),
    pod('g', { ip: '10.0.0.7', half: 'b' }),
  ];
  test('Endpoints: terminating pods only when not-ready addresses are published, then every pod as ready', () => {
    expect(wantedEndpoints(svc('web'), pods)).toEqual({ ready: ['10.0.0.1 a', '10.0.0.7 g'], notReady: ['10.0.0.2 b'] });
    expect(wantedEndpoints(svc('all', true), pods)).toEqual({ ready: ['10.0.0.1 a', '10.0.0.2 b', '10.0.0.3 c', '10.0.0.4 d', '10.0.0.7 g'], notReady: [] });
    expect(wantedEndpoints(svc('half', false, { app: 'web', half: 'b' }), pods)).toEqual({ ready: ['10.0.0.7 g'], notReady: [] });
  });
  test('EndpointSlices: terminating pods too, serving as their readiness, ready only when serving and not terminating (or published)', () => {
    expect(wantedSliceEndpoints(svc('web'), pods)).toEqual([
      '10.0.0.1 a ready=true serving=true terminating=false',
      '10.0.0.2 b ready=false serving=false terminating=false',
      '10.0.0.3 c ready=false serving=true terminating=true',
      '10.0.0.4 d ready=false serving=false terminating=true',
      '10.0.0.7 g ready=true serving=true terminating=false',
    ]);
    expect(wantedSliceEndpoints(svc('all', true), pods)[3]).toBe('10.0.0.4 d ready=true serving=false terminating=true');
  });
});

describe('the end state check', () => {
  const pods = [pod('web-000', { ip: '10.0.0.1' }), pod('web-001', { ip: '10.0.0.2', ready: false })];
  const want: Expectation = {
    pods: new Map([['web-000', { ready: true, terminating: false }], ['web-001', { ready: false, terminating: false }]]),
    services: ['web'], absent: ['gone'],
  };
  const ref = (name: string) => ({ kind: 'Pod', name, uid: `uid-${name}` });
  const endpoints: EndpointsObj = {
    metadata: { name: 'web', labels: { 'endpoints.kubernetes.io/managed-by': 'endpoint-controller' }, annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': 't' } },
    subsets: [{ addresses: [{ ip: '10.0.0.1', nodeName: 'n1', targetRef: ref('web-000') }], notReadyAddresses: [{ ip: '10.0.0.2', nodeName: 'n2', targetRef: ref('web-001') }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] }],
  };
  const slice = (name: string, eps: NonNullable<SliceObj['endpoints']>, service = 'web', ownerUid = 'uid-svc-web'): SliceObj => ({
    metadata: { name, labels: { 'kubernetes.io/service-name': service }, ownerReferences: [{ kind: 'Service', name: service, uid: ownerUid, controller: true, blockOwnerDeletion: true }] },
    addressType: 'IPv4', endpoints: eps, ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  });
  const ep0 = { addresses: ['10.0.0.1'], conditions: { ready: true, serving: true, terminating: false }, targetRef: ref('web-000') };
  const ep1 = { addresses: ['10.0.0.2'], conditions: { ready: false, serving: false, terminating: false }, targetRef: ref('web-001') };
  const good: World = { pods, services: [svc('web')], endpoints: [endpoints], slices: [slice('web-x1', [ep0]), slice('web-x2', [ep1])] };

  test('a state as upstream would leave it passes', () => {
    expect(endStateProblems(want, good)).toEqual([]);
  });

  test('each way it can break is named', () => {
    const problems = (w: Partial<World>) => endStateProblems(want, { ...good, ...w });
    // the same endpoint in two slices: the set of endpoints is right, the duplicate is its own violation
    expect(problems({ slices: [slice('web-x1', [ep0, ep1]), slice('web-x2', [ep1])] })).toEqual([
      "addresses in more than one endpoint of web's slices: 1 (10.0.0.2 x2)",
    ]);
    expect(problems({ slices: [slice('web-x1', [ep0, ep1]), slice('web-x2', [])] })).toEqual(['empty slices of web beside endpoints: 1 (web-x2)']);
    expect(problems({ slices: [...good.slices, slice('gone-y', [], 'gone', 'uid-svc-gone')] })).toEqual([
      'EndpointSlice gone-y for Service gone, which does not exist',
      'EndpointSlice gone-y owned by no existing Service (orphan)',
    ]);
    expect(problems({ slices: [slice('web-x1', [ep0]), slice('web-x2', [ep1], 'web', 'uid-old')] })).toEqual(['EndpointSlice web-x2 owned by no existing Service (orphan)']);
    expect(problems({ endpoints: [{ ...endpoints, subsets: [{ addresses: [{ ip: '10.0.0.1', targetRef: ref('web-000') }] }] }] }))
      .toEqual(['Endpoints web notReadyAddresses: missing: 1 (10.0.0.2 web-001)']);
    // a Service that should be gone and is not: its own Endpoints and slices are checked like any other's
    expect(problems({ services: [svc('web'), svc('gone')] })).toEqual([
      'Service gone still there', 'Endpoints gone missing',
      'EndpointSlices of gone: missing: 2 (10.0.0.1 web-000 ready=true serving=true terminating=false; 10.0.0.2 web-001 ready=false serving=false terminating=false)',
      'no EndpointSlice for gone',
    ]);
    expect(problems({ endpoints: [endpoints, { metadata: { name: 'gone' } }] })).toEqual(['Endpoints gone left for a Service that does not exist']);
    expect(problems({ slices: [slice('web-x1', Array.from({ length: 101 }, () => ep0))] })).toEqual([
      'EndpointSlices of web: missing: 1 (10.0.0.2 web-001 ready=false serving=false terminating=false)',
      "addresses in more than one endpoint of web's slices: 1 (10.0.0.1 x101)",
      'slices of web over 100 endpoints: 1 (web-x1: 101)',
    ]);
    // a pod the churn left not Ready that shows Ready is the pods' state, not the controllers'
    expect(problems({ pods: [pods[0], pod('web-001', { ip: '10.0.0.2' })] })[0]).toBe('pods not as the churn left them: 1 (web-001 Ready)');
  });

  test('the outcome holds no IP, node name or trigger time', () => {
    const text = JSON.stringify(outcomeOf(good));
    for (const s of ['10.0.0', 'n1', 'last-change-trigger-time', 'web-x1']) expect(text).not.toContain(s);
    expect(outcomeOf(good)).toMatchObject({ endpoints: [{ name: 'web', subsets: [{ addresses: ['web-000'], notReadyAddresses: ['web-001'] }] }] });
    // an address without its node shows (the slices' endpoints of this fixture name none)
    const noNode: World = { ...good, endpoints: [{ ...endpoints, subsets: [{ addresses: [{ ip: '10.0.0.1', targetRef: ref('web-000') }] }] }] };
    expect(outcomeOf(noNode)).toMatchObject({ endpoints: [{ subsets: [{ addresses: ['web-000 (no nodeName)'] }] }], slices: [{ endpoints: [{ pod: 'web-000', nodeName: undefined }, { pod: 'web-001' }] }] });
  });
});

test('writes of the deleted Service\'s Endpoints after its deletion are counted, not those before', () => {
  const e = (verb: string, resource: string, name: string, code: number, username = 'system:serviceaccount:kube-system:endpoint-controller'): AuditEvent =>
    ({ verb, user: { username }, objectRef: { resource, namespace: 'ns', name }, responseStatus: { code } });
  const audit = [
    e('update', 'endpoints', 'gone', 200),
    e('delete', 'services', 'gone', 200, 'admin'),
    e('delete', 'endpoints', 'gone', 200),
    e('create', 'endpoints', 'gone', 201),
    e('update', 'endpoints', 'gone', 409),
    e('update', 'endpoints', 'web', 200),
  ];
  expect(endpointsWrittenAfterDelete(audit, 'ns', 'gone')).toBe(1);
  expect(endpointsWrittenAfterDelete(audit.slice(2), 'ns', 'gone')).toBe(0);
});
