import { prune } from '../../activities/informers/fields';
import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES } from '../../activities/kube/resources';
import { IP_ADDRESS_FIELDS, SERVICE_CIDR_FIELDS, serviceCidrView } from '../../activities/servicecidr/activities';
import { serviceCidrRoutes } from '../../activities/servicecidr/routes';
import { familyLabelOf, parseAddr, parsePrefix, prefixContainsPrefix, prefixesOverlap, serviceCidrContainsIp } from '../../workflows/servicecidr/ip';
import {
  DELETION_GRACE_MS, READY_CONDITION, SERVICE_CIDR_FINALIZER, TERMINATING_CONDITION, TERMINATING_MESSAGE,
  checkDeletion, containingServiceCidrs, finalizeStep, overlappingServiceCidrs, serviceCidrNeed, serviceCidrsOfIp,
  type CidrEntry, type IpAddressView, type ServiceCidrView,
} from '../../workflows/servicecidr/logic';
import type { ServiceCidrEvent } from '../../workflows/servicecidr/workflow';
import { routeHarness } from '../support/routes';

const addr = (s: string) => {
  const a = parseAddr(s);
  if (!a) throw new Error(`bad address ${s}`);
  return a;
};
const prefix = (s: string) => {
  const p = parsePrefix(s);
  if (!p) throw new Error(`bad prefix ${s}`);
  return p;
};
const allocated = (name: string, family = name.includes(':') ? 'IPv6' : 'IPv4'): IpAddressView => ({
  name, labels: { 'ipaddress.kubernetes.io/managed-by': 'ipallocator.k8s.io', 'ipaddress.kubernetes.io/ip-family': family },
});

describe('addresses and prefixes, as net/netip reads them', () => {
  test.each([
    ['10.96.0.1', true], ['0.0.0.0', true], ['255.255.255.255', true], ['256.1.1.1', false], ['01.2.3.4', false], ['1.2.3', false],
    ['2001:db8::1', true], ['::', true], ['::1', true], ['::ffff:10.0.0.1', true], ['1:2:3:4:5:6:7:8', true], ['1:2:3:4:5:6:7::', true],
    ['1:2:3:4:5:6:7:8::', false], ['1::2::3', false], ['12345::', false], ['fe80::1%eth0', false], ['', false], ['x', false],
  ])('parseAddr(%s) parses: %s', (s, ok) => {
    expect(parseAddr(s) !== undefined).toBe(ok);
  });

  test('an IPv4-mapped IPv6 address is IPv6, and a v4 prefix does not contain it', () => {
    expect(addr('::ffff:10.0.0.1').family).toBe(6);
    expect(serviceCidrContainsIp(prefix('10.0.0.0/8'), addr('::ffff:10.0.0.1'))).toBe(false);
  });

  test.each([['10.96.0.0/16', true], ['10.96.0.0/33', false], ['10.96.0.0/016', false], ['10.96.0.0', false], ['2001:db8::/64', true], ['2001:db8::/129', false], ['10.96.1.5/16', true]])(
    'parsePrefix(%s) parses: %s', (s, ok) => {
      expect(parsePrefix(s) !== undefined).toBe(ok);
    });

  test('IPv4: the network and broadcast addresses are never in a ServiceCIDR', () => {
    const p = prefix('10.97.0.0/24');
    expect(serviceCidrContainsIp(p, addr('10.97.0.0'))).toBe(false);
    expect(serviceCidrContainsIp(p, addr('10.97.0.1'))).toBe(true);
    expect(serviceCidrContainsIp(p, addr('10.97.0.254'))).toBe(true);
    expect(serviceCidrContainsIp(p, addr('10.97.0.255'))).toBe(false);
    expect(serviceCidrContainsIp(p, addr('10.97.1.1'))).toBe(false);
    // host bits in the prefix as written change nothing
    expect(serviceCidrContainsIp(prefix('10.97.0.7/24'), addr('10.97.0.0'))).toBe(false);
  });

  test('IPv6: the network address is out, the last one is in (no broadcast)', () => {
    const p = prefix('2001:db8:1::/112');
    expect(serviceCidrContainsIp(p, addr('2001:db8:1::'))).toBe(false);
    expect(serviceCidrContainsIp(p, addr('2001:db8:1::1'))).toBe(true);
    expect(serviceCidrContainsIp(p, addr('2001:db8:1::ffff'))).toBe(true);
    expect(serviceCidrContainsIp(p, addr('2001:db8:1::1:0'))).toBe(false);
    expect(serviceCidrContainsIp(p, addr('10.0.0.1'))).toBe(false);
  });

  test('overlap and containment of prefixes', () => {
    expect(prefixesOverlap(prefix('10.96.0.0/16'), prefix('10.96.5.0/24'))).toBe(true);
    expect(prefixesOverlap(prefix('10.96.0.0/16'), prefix('10.97.0.0/24'))).toBe(false);
    expect(prefixesOverlap(prefix('0.0.0.0/0'), prefix('2001:db8::/32'))).toBe(false);
    expect(prefixContainsPrefix(prefix('10.96.0.0/16'), prefix('10.96.5.0/24'))).toBe(true);
    expect(prefixContainsPrefix(prefix('10.96.5.0/24'), prefix('10.96.0.0/16'))).toBe(false);
    expect(prefixContainsPrefix(prefix('10.96.5.0/24'), prefix('10.96.5.0/24'))).toBe(true);
    expect(prefixContainsPrefix(prefix('2001:db8::/48'), prefix('2001:db8:0:1::/64'))).toBe(true);
    expect(prefixContainsPrefix(prefix('2001:db8:1::/48'), prefix('2001:db8::/64'))).toBe(false);
    expect(familyLabelOf('10.0.0.0/8')).toBe('IPv4');
    expect(familyLabelOf('fd00::/108')).toBe('IPv6');
    expect(familyLabelOf('nope')).toBe('');
  });
});

const ALL: CidrEntry[] = [
  { name: 'kubernetes', cidrs: ['10.96.0.0/16', 'fd00:10:96::/112'] },
  { name: 'extra', cidrs: ['10.97.0.0/24'] },
  { name: 'wide', cidrs: ['10.97.0.0/16'] },
  { name: 'v6', cidrs: ['fd00:10:97::/112'] },
];

describe('which ServiceCIDRs an address or prefix concerns', () => {
  test('every ServiceCIDR that contains an address, nested ones included', () => {
    expect(containingServiceCidrs(ALL, addr('10.97.0.10')).sort()).toEqual(['extra', 'wide']);
    expect(containingServiceCidrs(ALL, addr('10.97.3.10'))).toEqual(['wide']);
    expect(containingServiceCidrs(ALL, addr('10.96.0.10'))).toEqual(['kubernetes']);
    expect(containingServiceCidrs(ALL, addr('fd00:10:96::a'))).toEqual(['kubernetes']);
    expect(containingServiceCidrs(ALL, addr('fd00:10:97::a'))).toEqual(['v6']);
    expect(containingServiceCidrs(ALL, addr('10.98.0.1'))).toEqual([]);
  });

  test('only addresses the API server allocated', () => {
    expect(serviceCidrsOfIp(ALL, allocated('10.97.0.10')).sort()).toEqual(['extra', 'wide']);
    expect(serviceCidrsOfIp(ALL, { name: '10.97.0.10', labels: { 'ipaddress.kubernetes.io/managed-by': 'someone-else' } })).toEqual([]);
    expect(serviceCidrsOfIp(ALL, { name: 'not-an-ip', labels: allocated('1.1.1.1').labels })).toEqual([]);
  });

  test('overlapping ServiceCIDRs of a new one, itself included', () => {
    expect(overlappingServiceCidrs(ALL, { name: 'x', cidrs: ['10.97.0.128/25'] }).sort()).toEqual(['extra', 'wide']);
    expect(overlappingServiceCidrs(ALL, { name: 'x', cidrs: ['fd00:10::/32'] }).sort()).toEqual(['kubernetes', 'v6']);
  });
});

describe('canDeleteCIDR', () => {
  const extra = ALL[1];
  test('a prefix another ServiceCIDR contains whole: deletable whatever the addresses', () => {
    expect(checkDeletion(extra, ALL, [allocated('10.97.0.10')])).toEqual({ canDelete: true, why: 'covered', coveredBy: ['wide'] });
  });

  test('alone: an address allocated from it blocks, one covered by another does not', () => {
    const alone = ALL.filter((c) => c.name !== 'wide');
    expect(checkDeletion(extra, alone, [allocated('10.96.0.10'), allocated('10.97.0.10')])).toEqual({ canDelete: false, blockingIp: '10.97.0.10' });
    expect(checkDeletion(extra, alone, [allocated('10.96.0.10')])).toEqual({ canDelete: true, why: 'no-orphans' });
    // not the allocator's, or labelled with the other family: not looked at
    expect(checkDeletion(extra, alone, [{ name: '10.97.0.10', labels: {} }, allocated('10.97.0.11', 'IPv6')])).toEqual({ canDelete: true, why: 'no-orphans' });
  });

  test('the larger of two nested ServiceCIDRs: blocked only by addresses outside the smaller one', () => {
    const wide = ALL[2];
    expect(checkDeletion(wide, ALL, [allocated('10.97.0.10')])).toEqual({ canDelete: true, why: 'no-orphans' });
    expect(checkDeletion(wide, ALL, [allocated('10.97.0.10'), allocated('10.97.9.9')])).toEqual({ canDelete: false, blockingIp: '10.97.9.9' });
  });

  test('two ServiceCIDRs with the same prefix cover each other', () => {
    const twins = [...ALL, { name: 'twin', cidrs: ['10.97.0.0/24'] }];
    expect(checkDeletion(extra, twins.filter((c) => c.name !== 'wide'), [allocated('10.97.0.10')])).toMatchObject({ canDelete: true, why: 'covered' });
  });

  test('IPv6 and dual-stack', () => {
    const v6 = ALL[3];
    expect(checkDeletion(v6, ALL, [allocated('fd00:10:97::5')])).toEqual({ canDelete: false, blockingIp: 'fd00:10:97::5' });
    expect(checkDeletion(v6, ALL, [allocated('fd00:10:96::5')])).toEqual({ canDelete: true, why: 'no-orphans' });
    const k8s = ALL[0];
    expect(checkDeletion(k8s, ALL, [allocated('fd00:10:96::5')])).toEqual({ canDelete: false, blockingIp: 'fd00:10:96::5' });
    expect(checkDeletion(k8s, ALL, [])).toEqual({ canDelete: true, why: 'no-orphans' });
  });
});

const view = (o: Partial<ServiceCidrView> = {}): ServiceCidrView => ({ name: 'extra', uid: 'u1', resourceVersion: '1', cidrs: ['10.97.0.0/24'], finalized: false, ...o });

describe('what a ServiceCIDR needs, and the deletion steps', () => {
  test('a live one needs the finalizer and Ready=True with upstream\'s message; then nothing', () => {
    expect(serviceCidrNeed(view())).toBe('ready');
    expect(serviceCidrNeed(view({ finalized: true }))).toBe('ready');
    // the API server's own message on the default ServiceCIDR is rewritten, as upstream does
    expect(serviceCidrNeed(view({ finalized: true, ready: { status: 'True', reason: '', message: 'Kubernetes default Service CIDR is ready' } }))).toBe('ready');
    expect(serviceCidrNeed(view({ finalized: true, ready: READY_CONDITION }))).toBe('none');
  });

  test('one being deleted needs the check while it holds the finalizer', () => {
    expect(serviceCidrNeed(view({ finalized: true, deletionTimestamp: '2026-01-01T00:00:00Z' }))).toBe('finalize');
    expect(serviceCidrNeed(view({ finalized: false, deletionTimestamp: '2026-01-01T00:00:00Z' }))).toBe('none');
  });

  test('blocked: Terminating once; free: the grace period, then the finalizer goes', () => {
    const at = Date.parse('2026-01-01T00:00:00Z');
    const deleting = view({ finalized: true, deletionTimestamp: '2026-01-01T00:00:00Z', ready: READY_CONDITION });
    expect(finalizeStep(deleting, { canDelete: false, blockingIp: '10.97.0.10' }, at)).toEqual({ kind: 'mark-terminating' });
    expect(finalizeStep({ ...deleting, ready: TERMINATING_CONDITION }, { canDelete: false, blockingIp: '10.97.0.10' }, at)).toEqual({ kind: 'blocked' });
    expect(finalizeStep(deleting, { canDelete: true, why: 'no-orphans' }, at + 3000)).toEqual({ kind: 'wait', ms: DELETION_GRACE_MS - 3000 });
    expect(finalizeStep(deleting, { canDelete: true, why: 'no-orphans' }, at + DELETION_GRACE_MS)).toEqual({ kind: 'remove-finalizer' });
    expect(TERMINATING_CONDITION).toEqual({ status: 'False', reason: 'Terminating', message: TERMINATING_MESSAGE });
  });
});

const CIDRS = RESOURCES.serviceCidrs;
const IPS = RESOURCES.ipAddresses;
const cidrObj = (name: string, cidrs: string[], o: { rv?: string; finalized?: boolean; ready?: boolean; deleting?: boolean } = {}): KubeObject => ({
  metadata: {
    name, uid: `u-${name}`, resourceVersion: o.rv ?? '1',
    ...(o.finalized ? { finalizers: [SERVICE_CIDR_FINALIZER] } : {}),
    ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
  },
  spec: { cidrs },
  status: { conditions: o.ready ? [{ type: 'Ready', status: 'True', reason: '', message: READY_CONDITION.message, lastTransitionTime: '2026-01-01T00:00:00Z' }] : [] },
} as unknown as KubeObject);
const ipObj = (name: string): KubeObject => ({ metadata: { name, uid: `ip-${name}`, resourceVersion: '1', labels: allocated(name).labels }, spec: { parentRef: { resource: 'services', namespace: 'd', name: 's' } } } as unknown as KubeObject);

describe('servicecidr routes', () => {
  test('the views read nothing their masks drop', () => {
    const full = cidrObj('a', ['10.97.0.0/24'], { finalized: true, ready: true, deleting: true });
    expect(serviceCidrView(prune(full, SERVICE_CIDR_FIELDS) as KubeObject)).toEqual(serviceCidrView(full));
    expect(prune(ipObj('10.97.0.1'), IP_ADDRESS_FIELDS)).toMatchObject({ metadata: { name: '10.97.0.1', labels: allocated('10.97.0.1').labels } });
  });

  test('off unless enabled', () => {
    expect(routeHarness(serviceCidrRoutes, { controllers: ['ttl'] }).family).toBeUndefined();
  });

  test('once both are listed: only ServiceCIDRs that need a write or a deletion check are sent', () => {
    const { sent, h } = routeHarness<ServiceCidrEvent>(serviceCidrRoutes, { controllers: ['servicecidr'] });
    h(CIDRS).relisted([cidrObj('kubernetes', ['10.96.0.0/16']), cidrObj('done', ['10.98.0.0/24'], { finalized: true, ready: true }),
      cidrObj('going', ['10.99.0.0/24'], { finalized: true, ready: true, deleting: true })], '1');
    expect(sent).toEqual([]);
    h(IPS).relisted([], '1');
    expect(sent.map((s) => s.target.workflowId).sort()).toEqual(['servicecidr/going', 'servicecidr/kubernetes']);
  });

  test('an address released inside a ServiceCIDR being deleted sends it; one elsewhere or in a live one does not', () => {
    const { sent, h } = routeHarness<ServiceCidrEvent>(serviceCidrRoutes, { controllers: ['servicecidr'] });
    h(CIDRS).relisted([cidrObj('live', ['10.96.0.0/16'], { finalized: true, ready: true }), cidrObj('going', ['10.97.0.0/24'], { finalized: true, ready: true, deleting: true })], '1');
    h(IPS).relisted([ipObj('10.97.0.10'), ipObj('10.96.0.10')], '1');
    sent.length = 0;
    h(IPS).event('DELETED', ipObj('10.96.0.10'));
    expect(sent).toEqual([]);
    h(IPS).event('DELETED', ipObj('10.97.0.10'));
    expect(sent.map((s) => s.target.workflowId)).toEqual(['servicecidr/going']);
  });

  test('a new ServiceCIDR sends itself and the overlapping ones being deleted', () => {
    const { sent, h } = routeHarness<ServiceCidrEvent>(serviceCidrRoutes, { controllers: ['servicecidr'] });
    h(CIDRS).relisted([cidrObj('going', ['10.97.0.0/24'], { finalized: true, ready: true, deleting: true })], '1');
    h(IPS).relisted([], '1');
    sent.length = 0;
    h(CIDRS).event('ADDED', cidrObj('wide', ['10.97.0.0/16'], { rv: '2' }));
    expect(sent.map((s) => s.target.workflowId).sort()).toEqual(['servicecidr/going', 'servicecidr/wide']);
  });
});
