import { condition, continueAsNew, defineQuery, defineSignal, proxySinks, setHandler, workflowInfo } from '@temporalio/workflow';
import { STATE_QUERY } from '../runtime/object-loop';
import type { KcmSinks } from '../runtime/sinks';
import { boundedWorkflowId } from '../runtime/workflow-ids';
import { buildReport, emptyLedger, ingest, nextSettlement, settle, type LedgerState, type Settled } from './ledger-logic';
import type { ShadowBatch, ShadowLedgerSettings, ShadowReport } from './types';

/** A shadow deployment's one ledger, named after its task queue (which --shadow gives its own suffix). */
export function shadowLedgerWorkflowId(taskQueue: string): string {
  return boundedWorkflowId(`temporal-kcm/${taskQueue}/shadow-ledger`);
}

export const shadowEntriesSignal = defineSignal<[ShadowBatch]>('kcm.shadowEntries');
export const SHADOW_REPORT_QUERY = 'shadowReport';
export const shadowReportQuery = defineQuery<ShadowReport, [{ sinceMs?: number }?]>(SHADOW_REPORT_QUERY);

export interface ShadowLedgerInput {
  settings: ShadowLedgerSettings;
  /** carried across continue-as-new */
  state?: LedgerState;
}

/** What `temporal-kcm state` and the Web UI show of the ledger. */
export interface ShadowLedgerView {
  controller: 'shadow';
  since: string;
  pending: number;
  findingsKept: number;
  buckets: number;
  historyLength: number;
}

/** Continue as new well before Temporal's limits: each batch's entries are in the history. */
const MAX_HISTORY_EVENTS = 2000;

/**
 * The ledger of a --shadow deployment: every replica sends it the writes its controllers proposed,
 * and the replica holding the watch sends it the writes the cluster's own manager made; it matches
 * them (ledger-logic.ts), counts each outcome per controller, and answers `shadow report`.
 */
export async function shadowLedgerWorkflow(input: ShadowLedgerInput): Promise<void> {
  const state = input.state ?? emptyLedger(input.settings, Date.now());
  // a deployment restarted with another --shadow-window applies it from here on
  state.settings = input.settings;
  const inbox: ShadowBatch[] = [];
  const { kcm } = proxySinks<KcmSinks>();
  setHandler(shadowEntriesSignal, (b) => void inbox.push(b));
  setHandler(shadowReportQuery, (req) => buildReport(state, req?.sinceMs, Date.now()));
  setHandler(defineQuery<ShadowLedgerView>(STATE_QUERY), () => describe(state));

  const counted = (s: Settled[]) => {
    const by = new Map<string, number>();
    for (const x of s) by.set(`${x.controller}\u0000${x.outcome}`, (by.get(`${x.controller}\u0000${x.outcome}`) ?? 0) + 1);
    for (const [k, n] of by) {
      const [controller, outcome] = k.split('\u0000');
      kcm.shadowOutcomes(controller, outcome, n);
    }
  };

  for (;;) {
    const due = nextSettlement(state);
    if (due === undefined) await condition(() => inbox.length > 0);
    else await condition(() => inbox.length > 0, Math.max(1, due - Date.now()));
    const decided: Settled[] = [];
    for (const b of inbox.splice(0)) decided.push(...ingest(state, b.id, b.entries, b.reconciles));
    decided.push(...settle(state, Date.now()));
    counted(decided);
    const info = workflowInfo();
    if (inbox.length === 0 && (info.continueAsNewSuggested || info.historyLength >= MAX_HISTORY_EVENTS)) {
      await continueAsNew<typeof shadowLedgerWorkflow>({ settings: state.settings, state });
    }
  }
}

function describe(state: LedgerState): ShadowLedgerView {
  return {
    controller: 'shadow',
    since: new Date(state.since).toISOString(),
    pending: state.pending.length,
    findingsKept: state.findings.length,
    buckets: state.buckets.length,
    historyLength: workflowInfo().historyLength,
  };
}
