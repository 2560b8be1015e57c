import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import {
  DESCRIPTION_ANNOTATION,
  ROOT_CA_CONFIGMAP,
  ROOT_CA_DESCRIPTION,
  ROOT_CA_KEY,
  RootCaConfigMapView,
  RootCaWrite,
  rootCaWriteNeeded,
} from '../../workflows/root-ca-cert-publisher/logic';
import type { RecordEvent } from '../kube/events';
import { asActivityFailure, isStatus } from '../kube/failures';
import type { KubeObject } from '../kube/projections';
import { ApiError, KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';
import { isNamespaceTerminating } from '../serviceaccount/activities';

export const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

type ConfigMap = KubeObject & { data?: Record<string, string> };

/** The watch's view of a ConfigMap: the digest of its bundle, never the bundle. */
export function rootCaView(cm: ConfigMap): RootCaConfigMapView {
  const data = cm.data ?? {};
  return {
    resourceVersion: cm.metadata?.resourceVersion ?? '',
    ...(data[ROOT_CA_KEY] !== undefined ? { caSha256: sha256Hex(data[ROOT_CA_KEY]) } : {}),
    dataKeys: Object.keys(data).sort(),
    hasDescription: !!cm.metadata?.annotations?.[DESCRIPTION_ANNOTATION],
  };
}

export interface PublishRootCaRequest {
  namespace: string;
  write: RootCaWrite;
  reason: string;
}

export interface PublishRootCaResult {
  outcome: 'created' | 'updated' | 'unchanged' | 'skipped' | 'failed';
  message?: string;
}

export interface RootCaDeps {
  /** writes, as the controller (its role grants configmaps create and update only) */
  rest: KubeRest;
  /** reads, as the shared watch reads: upstream reads through its informer, not with the controller's rights */
  reader: KubeRest;
  logger: Logger;
  recordEvent: RecordEvent;
  rootCa: string;
}

/** Creates or rewrites kube-root-ca.crt; a fresh read decides between them, so a retry is harmless. */
export function createRootCaActivities(deps: RootCaDeps) {
  const want = sha256Hex(deps.rootCa);
  const path = (ns: string, name?: string) => resourcePath(RESOURCES.configMaps, ns, name);

  async function write(req: PublishRootCaRequest): Promise<PublishRootCaResult> {
    let current: ConfigMap | undefined;
    try {
      current = (await deps.reader.request<ConfigMap>('GET', path(req.namespace, ROOT_CA_CONFIGMAP))).body;
    } catch (e) {
      if (!isStatus(e, 404)) throw e;
    }
    const needed = rootCaWriteNeeded(true, current && rootCaView(current), want);
    if (!needed) return { outcome: 'unchanged' };
    if (!current) {
      await deps.rest.request('POST', path(req.namespace), {
        body: {
          apiVersion: 'v1', kind: 'ConfigMap',
          metadata: { name: ROOT_CA_CONFIGMAP, namespace: req.namespace, annotations: { [DESCRIPTION_ANNOTATION]: ROOT_CA_DESCRIPTION } },
          data: { [ROOT_CA_KEY]: deps.rootCa },
        },
      });
      return { outcome: 'created' };
    }
    const next: ConfigMap = {
      ...current,
      metadata: { ...current.metadata, annotations: { ...current.metadata?.annotations, [DESCRIPTION_ANNOTATION]: ROOT_CA_DESCRIPTION } },
      data: { [ROOT_CA_KEY]: deps.rootCa },
    };
    await deps.rest.request('PUT', path(req.namespace, ROOT_CA_CONFIGMAP), { body: next });
    return { outcome: 'updated' };
  }

  return {
    async publishRootCa(req: PublishRootCaRequest): Promise<PublishRootCaResult> {
      let result: PublishRootCaResult;
      try {
        result = await write(req);
      } catch (e) {
        // someone wrote it in between: the next watch event says whether anything is still owed
        if (isStatus(e, 409)) result = { outcome: 'skipped', message: 'changed while writing' };
        else if (isStatus(e, 404) || isNamespaceTerminating(e)) result = { outcome: 'skipped', message: 'namespace gone or terminating' };
        else if (e instanceof ApiError && !e.transient) result = { outcome: 'failed', message: e.serverMessage };
        else throw asActivityFailure(e);
      }
      deps.logger.info({ controller: 'root-ca-cert-publisher', key: req.namespace, reason: req.reason, ...result }, 'published root CA');
      return result;
    },
  };
}

export type RootCaActivities = ReturnType<typeof createRootCaActivities>;
