import type { V1AttachedVolume } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { EVENT_COMPONENT, type AttachmentObservation, type ScheduledPod } from '../../workflows/attachdetach/types';
import type { FieldMask } from '../informers/fields';
import type { LocalReads } from '../informers/local-reads';
import type { RecordEvent } from '../kube/events';
import { apiCall, isStatus } from '../kube/failures';
import { heartbeating } from '../kube/heartbeat';
import type { KubeObject } from '../kube/projections';
import type { KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath, type ResourceType } from '../kube/resources';
import {
  ATTACHMENT_FIELDS,
  ATTACH_NODE_FIELDS,
  attachedNames,
  attachmentName,
  attachmentOf,
  attachmentView,
  nodeView,
  type NodeJson,
} from './projections';

export interface ObserveAttachmentsRequest {
  uniqueName: string;
  driver: string;
  handle: string;
  /** nodes the workflow wants to know about (desired, or in its actual state) */
  nodes: string[];
}

export interface CreateAttachmentRequest {
  driver: string;
  handle: string;
  node: string;
  pvName: string;
  reason: string;
}

export interface DeleteAttachmentRequest {
  uniqueName: string;
  driver: string;
  handle: string;
  node: string;
  /** upstream's verifySafeToDetach: refuse while the node lists the volume in use */
  verifySafe: boolean;
  reason: string;
}

export interface ReportAttachedRequest {
  node: string;
  uniqueName: string;
  attached: boolean;
  reason: string;
}

export interface PodEventsRequest {
  pods: ScheduledPod[];
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface AttachDetachDeps {
  rest: KubeRest;
  reader: KubeRest;
  logger: Logger;
  recordEvent: RecordEvent;
  local: LocalReads;
}

/** Conflicting writers of a node's status (the kubelet's heartbeats) are outlasted by re-reading. */
const REPORT_ATTEMPTS = 5;

/**
 * The attach/detach controller's I/O, as upstream's CSI attacher and node status updater do it:
 * VolumeAttachments created and deleted, `status.volumesAttached` of nodes kept, Events on pods.
 * Reads come from this replica's informer cache when it holds them.
 */
export function createAttachDetachActivities(deps: AttachDetachDeps) {
  // each call heartbeats, so a replica killed mid-way is noticed in seconds
  const rest = heartbeating(deps.rest);
  const reader = heartbeating(deps.reader);
  const { local } = deps;
  const log = deps.logger.child({ controller: 'attachdetach' });

  async function listAll(resource: ResourceType, fields: FieldMask, keep: (o: KubeObject) => boolean): Promise<KubeObject[]> {
    const cached = local.list(resource, fields, keep);
    if (cached) return cached;
    return ((await reader.request<{ items: KubeObject[] }>('GET', resourcePath(resource))).body.items ?? []).filter(keep);
  }

  return {
    /** The nodes asked about and every node reporting the volume, and the volume's VolumeAttachments. */
    async observeAttachments(req: ObserveAttachmentsRequest): Promise<AttachmentObservation> {
      return apiCall(async () => {
        const asked = new Set(req.nodes);
        const nodes = await listAll(RESOURCES.nodes, ATTACH_NODE_FIELDS, (o) => asked.has(o.metadata?.name ?? '') || attachedNames(o).includes(req.uniqueName));
        const attachments = await listAll(RESOURCES.volumeAttachments, ATTACHMENT_FIELDS, (o) => attachmentOf(o, req.uniqueName) !== undefined);
        const out: AttachmentObservation = { nodes: {}, attachments: {} };
        for (const n of asked) out.nodes[n] = nodeView(undefined, req.uniqueName);
        for (const o of nodes) out.nodes[o.metadata?.name ?? ''] = nodeView(o, req.uniqueName);
        for (const o of attachments) out.attachments[attachmentOf(o, req.uniqueName)!] = attachmentView(o);
        return out;
      });
    },

    /** upstream's csiAttacher.Attach, without the wait: the workflow waits for the attacher's answer. */
    async createAttachment(req: CreateAttachmentRequest): Promise<'created' | 'exists'> {
      return apiCall(async () => {
        const name = attachmentName(req.handle, req.driver, req.node);
        try {
          await rest.request('POST', resourcePath(RESOURCES.volumeAttachments), { body: {
            apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name },
            spec: { attacher: req.driver, nodeName: req.node, source: { persistentVolumeName: req.pvName } },
          } });
        } catch (e) {
          if (isStatus(e, 409)) return 'exists';
          throw e;
        }
        log.info({ volumeAttachment: name, node: req.node, pv: req.pvName, reason: req.reason }, 'created VolumeAttachment');
        return 'created';
      });
    },

    /** upstream's verifyVolumeIsSafeToDetach and csiAttacher.Detach, without the wait. */
    async deleteAttachment(req: DeleteAttachmentRequest): Promise<'deleted' | 'gone' | 'in-use'> {
      return apiCall(async () => {
        if (req.verifySafe) {
          try {
            const node = (await reader.request<NodeJson>('GET', resourcePath(RESOURCES.nodes, undefined, req.node))).body;
            if ((node.status?.volumesInUse ?? []).includes(req.uniqueName)) {
              log.info({ node: req.node, volume: req.uniqueName }, 'detach refused: the node lists the volume in use');
              return 'in-use';
            }
          } catch (e) {
            // a node that is gone has nothing mounted: upstream skips the check
            if (!isStatus(e, 404)) throw e;
          }
        }
        const name = attachmentName(req.handle, req.driver, req.node);
        try {
          await rest.request('DELETE', resourcePath(RESOURCES.volumeAttachments, undefined, name));
        } catch (e) {
          if (isStatus(e, 404)) return 'gone';
          throw e;
        }
        log.info({ volumeAttachment: name, node: req.node, volume: req.uniqueName, reason: req.reason }, 'deleted VolumeAttachment');
        return 'deleted';
      });
    },

    /** The volume added to or taken from the node's status.volumesAttached, guarded by the version read. */
    async reportAttached(req: ReportAttachedRequest): Promise<'done' | 'unchanged' | 'node-gone'> {
      return apiCall(async () => {
        const path = resourcePath(RESOURCES.nodes, undefined, req.node);
        for (let attempt = 1; ; attempt++) {
          let node: NodeJson;
          try {
            node = (await reader.request<NodeJson>('GET', path)).body;
          } catch (e) {
            if (isStatus(e, 404)) return 'node-gone';
            throw e;
          }
          const current: V1AttachedVolume[] = node.status?.volumesAttached ?? [];
          const has = current.some((v) => v.name === req.uniqueName);
          if (has === req.attached) return 'unchanged';
          const next = req.attached ? [...current, { name: req.uniqueName, devicePath: '' }] : current.filter((v) => v.name !== req.uniqueName);
          try {
            await rest.request('PATCH', `${path}/status`, {
              body: { metadata: { resourceVersion: node.metadata?.resourceVersion }, status: { volumesAttached: next.length ? next : null } },
              contentType: 'application/merge-patch+json',
            });
          } catch (e) {
            if (isStatus(e, 409) && attempt < REPORT_ATTEMPTS) continue;
            if (isStatus(e, 404)) return 'node-gone';
            throw e;
          }
          log.info({ node: req.node, volume: req.uniqueName, attached: req.attached, reason: req.reason }, req.attached ? 'reported volume attached' : 'reported volume detached');
          return 'done';
        }
      });
    },

    async recordPodEvents(req: PodEventsRequest): Promise<void> {
      for (const p of req.pods) {
        deps.recordEvent(EVENT_COMPONENT, { apiVersion: 'v1', kind: 'Pod', namespace: p.namespace, name: p.name, uid: p.uid }, req.type, req.reason, req.message);
      }
    },
  };
}

export type AttachDetachActivities = ReturnType<typeof createAttachDetachActivities>;
