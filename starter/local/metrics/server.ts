/**
 * The metrics stand-in's HTTPS server: the three metrics APIs the horizontal pod autoscaler reads,
 * served to kube-apiserver's aggregation layer. Only the aggregator may call it: TLS client
 * certificates must chain to the front-proxy CA (the aggregator presents its --proxy-client-cert);
 * the caller was already authenticated and authorized by kube-apiserver, so the stand-in does not
 * check the X-Remote-User it forwards (a real metrics-server would ask for a SubjectAccessReview).
 */
import * as https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { V1ConfigMap, V1Node } from '@kubernetes/client-node';
import { KubeError, KubeTarget, PodCache, kubeRequest } from './kube';
import {
  AnnotatedObject, CUSTOM_GV, EXTERNAL_CONFIGMAP, EXTERNAL_GV, GROUP_VERSIONS, METRICS_GV, Requirement, SelectorParseError,
  apiGroup, apiGroupList, apiResourceList, customValue, externalValues, listMetricValues, listPodMetrics,
  metricValue, nodeMetrics, parseSelector, podCustomMetricNames, podMetrics, podUsage, route, status,
} from './logic';

export interface ServerOptions {
  kube: KubeTarget;
  host: string;
  port: number;
  tlsCert: Buffer;
  tlsKey: Buffer;
  /** CA of the aggregator's proxy client certificate */
  clientCa: Buffer;
  /** CNs allowed to call (the aggregator's proxy client cert) */
  allowedNames: string[];
  log: (event: string, fields?: Record<string, unknown>) => void;
}

class HttpError extends Error {
  constructor(readonly code: number, readonly reason: string, message: string, readonly details?: { name?: string; group?: string; kind?: string }) {
    super(message);
  }
}

interface ResourceInfo {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
}

const DISCOVERY_TTL_MS = 30_000;

export class MetricsStandin {
  readonly pods: PodCache;
  private server?: https.Server;
  private readonly resources = new Map<string, { at: number; info?: ResourceInfo }>();

  constructor(private readonly o: ServerOptions) {
    this.pods = new PodCache(o.kube, o.log);
  }

  async start(): Promise<void> {
    this.pods.start();
    this.server = https.createServer({
      cert: this.o.tlsCert, key: this.o.tlsKey, ca: this.o.clientCa, requestCert: true, rejectUnauthorized: true,
    }, (req, res) => void this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(this.o.port, this.o.host, () => resolve());
    });
    this.o.log('serving', { address: `${this.o.host}:${this.o.port}` });
  }

  async stop(): Promise<void> {
    this.pods.stop();
    await new Promise<void>((r) => {
      if (!this.server) return r();
      this.server.close(() => r());
      // the aggregator keeps connections alive: close them, or close() waits for its idle timeout
      this.server.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://standin');
    const send = (code: number, body: unknown) => {
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      res.writeHead(code, { 'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json' });
      res.end(text);
    };
    try {
      const cn = (req.socket as TLSSocket).getPeerCertificate()?.subject?.CN;
      const cnText = Array.isArray(cn) ? cn.join(',') : cn;
      if (!cnText || !this.o.allowedNames.includes(cnText)) throw new HttpError(403, 'Forbidden', `client certificate CN ${JSON.stringify(cnText)} is not allowed`);
      if (req.method !== 'GET') throw new HttpError(405, 'MethodNotAllowed', `${req.method} is not supported`);
      send(200, await this.answer(url));
    } catch (e) {
      if (e instanceof HttpError) send(e.code, status(e.code, e.reason, e.message, e.details));
      else if (e instanceof SelectorParseError) send(400, status(400, 'BadRequest', e.message));
      else if (e instanceof KubeError) send(e.code || 500, status(e.code || 500, e.reason, e.message));
      else {
        this.o.log('request failed', { path: url.pathname, err: (e as Error).message });
        send(500, status(500, 'InternalError', (e as Error).message));
      }
    }
  }

  private async answer(url: URL): Promise<unknown> {
    const r = route(url.pathname);
    const now = new Date();
    const labelSel = () => parseSelector(url.searchParams.get('labelSelector'));
    const metricSel = () => parseSelector(url.searchParams.get('metricLabelSelector') ?? url.searchParams.get('metricSelector'));
    switch (r.kind) {
      case 'health':
        return 'ok';
      case 'root':
        return { paths: ['/apis', ...GROUP_VERSIONS.flatMap((g) => [`/apis/${g.group}`, `/apis/${g.group}/${g.version}`]), '/healthz', '/livez', '/openapi/v2', '/openapi/v3', '/readyz'] };
      case 'openapi-v2':
        return { swagger: '2.0', info: { title: 'temporal-kcm metrics stand-in', version: 'v1' }, paths: {} };
      case 'openapi-v3':
        return { paths: {} };
      case 'apis':
        return apiGroupList();
      case 'group':
        return apiGroup(r.group);
      case 'discovery': {
        await this.pods.waitForSync(2000);
        return apiResourceList(r.group, r.group === CUSTOM_GV.group ? podCustomMetricNames(this.pods.values()) : []);
      }
      case 'pod-metrics': {
        await this.ensureSynced();
        const gv = `${METRICS_GV.group}/${METRICS_GV.version}`;
        if (r.name !== undefined && r.namespace !== undefined) {
          const pod = this.pods.get(r.namespace, r.name);
          const u = pod ? podUsage(pod) : {};
          if (!pod || !u.containers) {
            throw new HttpError(404, 'NotFound', `podmetrics.metrics.k8s.io "${r.namespace}/${r.name}" not found`, { name: `${r.namespace}/${r.name}`, group: METRICS_GV.group, kind: 'pods' });
          }
          return { kind: 'PodMetrics', apiVersion: gv, ...podMetrics(pod, u.containers, now, u.window) };
        }
        if (r.name !== undefined) throw new HttpError(404, 'NotFound', 'the server could not find the requested resource');
        return { kind: 'PodMetricsList', apiVersion: gv, metadata: {}, items: listPodMetrics(this.pods.values(), r.namespace, labelSel(), now) };
      }
      case 'node-metrics': {
        await this.ensureSynced();
        const gv = `${METRICS_GV.group}/${METRICS_GV.version}`;
        if (r.name !== undefined) {
          let node: V1Node;
          try {
            node = await kubeRequest<V1Node>(this.o.kube, 'GET', `/api/v1/nodes/${encodeURIComponent(r.name)}`);
          } catch (e) {
            if (e instanceof KubeError && e.code === 404) {
              throw new HttpError(404, 'NotFound', `nodemetrics.metrics.k8s.io "${r.name}" not found`, { name: r.name, group: METRICS_GV.group, kind: 'nodes' });
            }
            throw e;
          }
          return { kind: 'NodeMetrics', apiVersion: gv, ...nodeMetrics(node, this.pods.values(), now) };
        }
        labelSel(); // a malformed selector is a 400 here, as metrics-server's; kube-apiserver filters the nodes
        const sel = url.searchParams.get('labelSelector');
        const nodes = await kubeRequest<{ items: V1Node[] }>(this.o.kube, 'GET', `/api/v1/nodes${sel ? `?labelSelector=${encodeURIComponent(sel)}` : ''}`);
        const pods = [...this.pods.values()];
        const items = nodes.items.map((n) => nodeMetrics(n, pods, now)).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
        return { kind: 'NodeMetricsList', apiVersion: gv, metadata: {}, items };
      }
      case 'custom':
        return this.custom(r, labelSel(), metricSel(), url.searchParams.get('labelSelector'), now);
      case 'external': {
        const reqs = labelSel();
        let cm: V1ConfigMap | undefined;
        try {
          cm = await kubeRequest<V1ConfigMap>(this.o.kube, 'GET', `/api/v1/namespaces/${encodeURIComponent(r.namespace)}/configmaps/${EXTERNAL_CONFIGMAP}`);
        } catch (e) {
          if (!(e instanceof KubeError && e.code === 404)) throw e;
        }
        const items = externalValues(cm, r.metric, reqs, now);
        if (!items) {
          throw new HttpError(404, 'NotFound', `the server could not find the external metric ${r.metric} in namespace ${r.namespace} (no key ${r.metric} in ConfigMap ${r.namespace}/${EXTERNAL_CONFIGMAP})`,
            { name: r.metric, group: EXTERNAL_GV.group });
        }
        return { kind: 'ExternalMetricValueList', apiVersion: `${EXTERNAL_GV.group}/${EXTERNAL_GV.version}`, metadata: {}, items };
      }
      case 'not-found':
        throw new HttpError(404, 'NotFound', 'the server could not find the requested resource');
    }
  }

  /** Pod reads wait (briefly) for the first list, so a fresh stand-in does not answer "no pods". */
  private async ensureSynced(): Promise<void> {
    if (this.pods.hasSynced()) return;
    await this.pods.waitForSync(10_000);
    if (!this.pods.hasSynced()) throw new HttpError(503, 'ServiceUnavailable', 'the pod cache has not synced yet');
  }

  private async custom(
    r: { namespace?: string; resource: string; name: string; metric: string },
    reqs: Requirement[], metricReqs: Requirement[], rawSelector: string | null, now: Date,
  ): Promise<unknown> {
    const list = (items: unknown[]) => ({ kind: 'MetricValueList', apiVersion: `${CUSTOM_GV.group}/${CUSTOM_GV.version}`, metadata: {}, items });
    const notFound = (what: string) => new HttpError(404, 'NotFound', `the server could not find the metric ${r.metric} for ${what}`,
      { name: r.name, group: CUSTOM_GV.group, kind: r.metric });
    // the namespace itself: /namespaces/{ns}/metrics/{metric}
    const resource = r.resource === 'metrics' ? 'namespaces' : r.resource;
    const info = await this.resolve(resource);
    if (!info) throw new HttpError(404, 'NotFound', `the server could not find the requested resource (${resource})`);
    if (info.namespaced !== (r.namespace !== undefined)) {
      throw new HttpError(404, 'NotFound', `${resource} is ${info.namespaced ? '' : 'not '}namespaced`);
    }
    const ref = { kind: info.kind, apiVersion: info.group ? `${info.group}/${info.version}` : info.version };
    const base = `${info.group ? `/apis/${info.group}` : '/api'}/${info.version}${r.namespace !== undefined ? `/namespaces/${encodeURIComponent(r.namespace)}` : ''}/${info.resource}`;
    if (r.name === '*') {
      if (info.group === '' && info.resource === 'pods') {
        await this.ensureSynced();
        const pods = [...this.pods.values()].filter((p) => p.metadata?.namespace === r.namespace);
        return list(listMetricValues(pods, ref, r.metric, reqs, metricReqs, now));
      }
      const objs = await kubeRequest<{ items: AnnotatedObject[] }>(this.o.kube, 'GET', base + (rawSelector ? `?labelSelector=${encodeURIComponent(rawSelector)}` : ''));
      return list(listMetricValues(objs.items, ref, r.metric, reqs, metricReqs, now));
    }
    let obj: AnnotatedObject;
    try {
      obj = await kubeRequest<AnnotatedObject>(this.o.kube, 'GET', `${base}/${encodeURIComponent(r.name)}`);
    } catch (e) {
      if (e instanceof KubeError && e.code === 404) throw notFound(`${resource} ${r.name}`);
      throw e;
    }
    const v = customValue(obj, r.metric);
    if (v === undefined) throw notFound(`${resource} ${r.name}`);
    return list([metricValue(obj, ref, r.metric, metricReqs, v, now)]);
  }

  /** `deployments.apps` / `services` -> the resource at its group's preferred version (cached briefly). */
  private async resolve(groupResource: string): Promise<ResourceInfo | undefined> {
    const hit = this.resources.get(groupResource);
    if (hit && Date.now() - hit.at < DISCOVERY_TTL_MS) return hit.info;
    const dot = groupResource.indexOf('.');
    const resource = dot < 0 ? groupResource : groupResource.slice(0, dot);
    const group = dot < 0 ? '' : groupResource.slice(dot + 1);
    let info: ResourceInfo | undefined;
    try {
      let version = 'v1';
      if (group) {
        const g = await kubeRequest<{ preferredVersion?: { version: string } }>(this.o.kube, 'GET', `/apis/${encodeURIComponent(group)}`);
        version = g.preferredVersion?.version ?? '';
      }
      if (version) {
        const list = await kubeRequest<{ resources: Array<{ name: string; kind: string; namespaced: boolean }> }>(
          this.o.kube, 'GET', group ? `/apis/${group}/${version}` : '/api/v1');
        const r = list.resources.find((x) => x.name === resource);
        if (r) info = { group, version, resource, kind: r.kind, namespaced: r.namespaced };
      }
    } catch (e) {
      if (!(e instanceof KubeError && e.code === 404)) throw e;
    }
    this.resources.set(groupResource, { at: Date.now(), info });
    return info;
  }
}
