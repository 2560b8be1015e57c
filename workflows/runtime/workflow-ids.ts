/*
 * Workflow IDs that fit every Temporal persistence. The SQL stores (PostgreSQL, MySQL) keep a
 * workflow ID in a VARCHAR(255) column; the dev server's SQLite enforces nothing, so an ID that
 * works there can be refused by a production cluster ("value too long"). Object names are
 * Kubernetes names (DNS subdomains of up to 253 characters) under a namespace of up to 63, so the
 * plain `<controller>/<namespace>/<name>` can pass 255.
 */
import { fnv1a32Bytes, fnv132Bytes } from '../common/hash';
import { utf8Bytes } from '../common/utf8';

export const MAX_WORKFLOW_ID_LENGTH = 255;

/** 64 bits of hash as 16 hex digits: two FNV variants of 32 bits, so that a collision needs both. */
export function idHash(s: string): string {
  const bytes = utf8Bytes(s);
  return fnv1a32Bytes(bytes).toString(16).padStart(8, '0') + fnv132Bytes(bytes).toString(16).padStart(8, '0');
}

/**
 * The ID itself when it fits; otherwise its head and a hash of the whole, `<head>~<hash>`, exactly
 * MAX_WORKFLOW_ID_LENGTH long. The head keeps the controller and namespace readable in the Web UI,
 * and the search attributes (KcmNamespace, KcmName) still name the object in full.
 */
export function boundedWorkflowId(id: string): string {
  if (id.length <= MAX_WORKFLOW_ID_LENGTH) return id;
  const hash = idHash(id);
  return `${id.slice(0, MAX_WORKFLOW_ID_LENGTH - hash.length - 1)}~${hash}`;
}

/**
 * A --shadow replica's workflows: the same IDs behind this prefix (put on by the signaller and by
 * singleton starts), so a shadow deployment beside a live one on the same Temporal namespace never
 * signals or starts the live runs. The informer's ID is named after the task queue, which --shadow
 * changes too.
 */
export const SHADOW_WORKFLOW_ID_PREFIX = 'shadow:';

/**
 * A shadow deployment's whole prefix: `shadow:`, then 8 hex digits of a hash of its task queue and
 * a colon. Two shadow deployments in one Temporal namespace (two builds, or two sets of flags,
 * judged side by side) thereby never signal each other's runs.
 */
export function shadowWorkflowIdPrefix(taskQueue: string): string {
  return `${SHADOW_WORKFLOW_ID_PREFIX}${idHash(taskQueue).slice(0, 8)}:`;
}

const SHADOW_ID_PREFIX = /^shadow:(?:[0-9a-f]{8}:)?/;

/** An object workflow's ID as a live deployment names it (the first slice of --shadow used a bare `shadow:`). */
export function withoutShadowPrefix(id: string): string {
  return id.replace(SHADOW_ID_PREFIX, '');
}
/** appended to --task-queue by --shadow */
export const SHADOW_TASK_QUEUE_SUFFIX = '-shadow';

/**
 * How long the shadow ledger waits for the other side's write before it settles one as differing
 * or missing: six windows, so a write late by a few windows is still found (and counted late).
 */
export function shadowHorizonMs(windowMs: number): number {
  return 6 * windowMs;
}

/** The controller an object workflow's ID names, a shadow one's too. */
export function controllerOfWorkflowId(id: string): string {
  return withoutShadowPrefix(id).split('/')[0];
}
