import { CSR_FACT_FIELDS, csrFacts } from '../../activities/certificates/csr';
import { csrApprovingRoutes } from '../../activities/csrapproving/routes';
import { csrSigningRoutes } from '../../activities/csrsigning/routes';
import { prune } from '../../activities/informers/fields';
import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES } from '../../activities/kube/resources';
import type { CsrEvent } from '../../workflows/common/csr';
import { routeHarness } from '../support/routes';
import { makeCsr } from '../support/x509';

const CSRS = RESOURCES.certificateSigningRequests;
const KUBELET = makeCsr({ cn: 'system:node:n1', o: ['system:nodes'] }).csrPem;

const csr = (name: string, o: { signer?: string; conditions?: Array<{ type: string; status?: string }>; certificate?: string; usages?: string[]; rv?: string } = {}): KubeObject =>
  ({
    metadata: { name, uid: `u-${name}`, resourceVersion: o.rv ?? '1' },
    spec: {
      request: Buffer.from(KUBELET).toString('base64'), signerName: o.signer ?? 'kubernetes.io/kube-apiserver-client-kubelet',
      username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers'], usages: o.usages ?? ['digital signature', 'client auth'],
    },
    status: { conditions: o.conditions ?? [], ...(o.certificate ? { certificate: o.certificate } : {}) },
  } as unknown as KubeObject);

const names = (sent: Array<{ target: { name: string } }>) => sent.map((s) => s.target.name);

describe('certificate routes', () => {
  test('the facts read nothing the mask drops', () => {
    const full = { ...csr('a'), spec: { ...(csr('a') as unknown as { spec: object }).spec, extra: { x: ['y'] }, uid: 'user-uid' } } as unknown as KubeObject;
    expect(csrFacts(prune(full, CSR_FACT_FIELDS) as KubeObject)).toEqual(csrFacts(full));
    expect(csrFacts(full).request).toEqual({ commonName: 'system:node:n1', organizations: ['system:nodes'], dnsNames: [], ipAddresses: [], emailAddresses: [], uris: [] });
  });

  test('approver: only pending, recognized CSRs start a run; settled ones send nothing at a relist', () => {
    const { sent, h } = routeHarness<CsrEvent>(csrApprovingRoutes, { controllers: ['csrapproving'] });
    h(CSRS).relisted([
      csr('pending'),
      csr('approved', { conditions: [{ type: 'Approved', status: 'True' }] }),
      csr('denied', { conditions: [{ type: 'Denied', status: 'True' }] }),
      csr('serving', { signer: 'kubernetes.io/kubelet-serving' }),
      csr('bad-usages', { usages: ['client auth'] }),
    ], '5');
    expect(names(sent)).toEqual(['pending']);
    expect(sent[0].target).toMatchObject({ controller: 'csrapproving', workflowId: 'csrapproving/pending', uid: 'u-pending' });
  });

  test('signer: only approved, unfailed, unissued CSRs of a started signer; none without signing files', () => {
    expect(routeHarness(csrSigningRoutes, { controllers: ['csrsigning'] }).family).toBeUndefined();
    const flags = { 'cluster-signing-kubelet-client-cert-file': '/ca.crt', 'cluster-signing-kubelet-client-key-file': '/ca.key' };
    const { sent, h } = routeHarness<CsrEvent>(csrSigningRoutes, { controllers: ['csrsigning'], flags });
    const approved = { type: 'Approved', status: 'True' };
    h(CSRS).relisted([
      csr('pending'),
      csr('approved', { conditions: [approved] }),
      csr('issued', { conditions: [approved], certificate: 'eA==' }),
      csr('failed', { conditions: [approved, { type: 'Failed', status: 'True' }] }),
      csr('denied', { conditions: [approved, { type: 'Denied', status: 'True' }] }),
      csr('other-signer', { signer: 'kubernetes.io/kube-apiserver-client', conditions: [approved] }),
    ], '5');
    expect(names(sent)).toEqual(['approved']);
    sent.length = 0;
    h(CSRS).event('DELETED', csr('approved', { conditions: [approved] }));
    expect(sent.map((s) => s.event)).toEqual([{ deletedUid: 'u-approved' }]);
  });
});
