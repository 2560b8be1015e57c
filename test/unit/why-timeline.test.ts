import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, CommanderError } from 'commander';
import { addWhyCommand } from '../../starter/why/command';
import { objectQuery, parseObjectRef } from '../../starter/operate/objects';
import { formatTimeline } from '../../starter/why/format';
import { runFromHistory, type HistoryEventJson, type RunHistory } from '../../starter/why/history';
import { buildTimeline, type TimelineEntry } from '../../starter/why/timeline';

const dir = path.join(__dirname, '..', 'replay', 'histories');
const fixture = (name: string): RunHistory => runFromHistory(JSON.parse(fs.readFileSync(path.join(dir, `${name}.json`), 'utf8')));
const writes = (entries: TimelineEntry[], names: string[]) => entries.filter((e) => e.activity && names.includes(e.activity.name));
const b64json = (v: unknown) => ({ metadata: { encoding: Buffer.from('json/plain').toString('base64') }, data: Buffer.from(JSON.stringify(v)).toString('base64') });

describe('a ReplicaSet through four continue-as-new runs (replicaset-churn-*)', () => {
  // visibility answers newest first: the timeline must not depend on the order runs come in
  const runs = ['replicaset-churn-0', 'replicaset-churn-1', 'replicaset-churn-2', 'replicaset-churn-3'].map(fixture);
  const t = buildTimeline(runs);

  test('runs are ordered by start and chained by continue-as-new', () => {
    expect(t.runs.map((r) => r.runId.slice(0, 8))).toEqual(['d826f783', '7a800b19', '08e5dfcc', 'fb16b526']);
    expect(t.runs.map((r) => r.status)).toEqual(['continued-as-new', 'continued-as-new', 'continued-as-new', 'running']);
    expect(t.objects).toEqual([{ kind: 'ReplicaSet', namespace: 't-rs-9a65da', name: 'churn', uid: '5dbd92b8-3cfc-40ab-a915-0e5108dc679b' }]);
    const kinds = t.entries.map((e) => e.kind);
    expect(kinds.filter((k) => k === 'continued-as-new')).toHaveLength(3);
    // each continue-as-new is followed directly by the next run's start
    kinds.forEach((k, i) => {
      if (k === 'continued-as-new') expect(kinds[i + 1]).toBe('started');
    });
  });

  test('the scale writes appear in order, with what they touched', () => {
    const w = writes(t.entries, ['createPods', 'deletePods']);
    expect(w.slice(0, 4).map((e) => `${e.activity?.name} ${e.activity?.input}`)).toEqual([
      'createPods names 1 (churn-cf28b)',
      'createPods names 1 (churn-79r5m)',
      'createPods names 2 (churn-drzvx, churn-8fwkz)',
      'deletePods pods 3 (churn-8fwkz, churn-drzvx, churn-79r5m)',
    ]);
    expect(w.map((e) => e.activity?.name).slice(-2)).toEqual(['createPods', 'deletePods']);
    expect(w.every((e) => e.kind === 'decided+wrote' && e.activity?.outcome.status === 'ok')).toBe(true);
    // these histories were recorded before createPods carried a reason
    expect(w[0].activity?.reason).toBeUndefined();
    expect(w[3].activity?.outcome.summary).toBe('deleted 3');
  });

  test('signals are summarised by what they carry; reads are reads', () => {
    const observed = t.entries.filter((e) => e.kind === 'observed').map((e) => e.what);
    expect(observed).toContain('event: owner churn replicas=1 gen=13 rv=7064');
    expect(observed).toContain('event: podsDeleted 3');
    expect(t.entries.filter((e) => e.kind === 'read').every((e) => e.activity?.name === 'observeReplicaOwner')).toBe(true);
  });

  test('the workflow task re-run around continue-as-new is not reported as a failure', () => {
    const rerun = t.entries.find((e) => e.kind === 'workflow-task-failed');
    expect(rerun?.alert).toBe(false);
    expect(t.failing).toBe(false);
    expect(t.lastError).toBeUndefined();
  });

  test('state and next timer come from the latest open run', () => {
    expect(t.state).toBe('running');
    expect(t.nextTimer).toMatchObject({ runId: 'fb16b526-68cb-4f6f-a13c-31a4ea18dbaa', timerId: '4', durationMs: 43_200_000, firesAt: '2026-11-22T14:40:03.529Z' });
  });
});

describe('a Job past its activeDeadlineSeconds (job-deadline-restart-0)', () => {
  const t = buildTimeline([fixture('job-deadline-restart-0')]);

  test('the deadline timer fired, then the active pods were deleted for DeadlineExceeded', () => {
    const fired = t.entries.find((e) => e.timer?.state === 'fired');
    expect(fired?.timer).toMatchObject({ timerId: '3', durationMs: 3520, endedAt: '2026-11-22T07:22:20.037Z' });
    const del = writes(t.entries, ['deleteJobPods']);
    expect(del).toHaveLength(1);
    expect(del[0].activity?.reason).toBe('JobFinished: the Job is finishing (DeadlineExceeded): delete its 2 active pods');
    expect(del[0].activity?.input).toBe('pods 2 (deadline-26sts, deadline-fmt7z), removeFinalizer=false');
    expect(del[0].activity?.outcome).toMatchObject({ status: 'ok', attempts: 1, summary: 'deleted 2 (deadline-fmt7z, deadline-26sts)' });
    expect(t.entries.indexOf(fired as TimelineEntry)).toBeLessThan(t.entries.indexOf(del[0]));
  });

  test('the slow-start batches and the final status carry their reasons', () => {
    expect(writes(t.entries, ['createJobPods']).map((e) => e.activity?.reason)).toEqual([
      '0 active pods, 2 wanted: slow-start batch 1 of 2',
      '0 active pods, 2 wanted: slow-start batch 2 of 2',
    ]);
    expect(writes(t.entries, ['updateJobStatus']).pop()?.activity?.reason).toBe('the Job finished');
  });

  test('text form: header, one line per entry, footer', () => {
    const text = formatTimeline(t, {});
    const lines = text.split('\n');
    expect(lines[0]).toBe('Job t-job-5e51cf/deadline  uid d7275bff-119f-435e-8b6e-80b215724772');
    expect(lines[1]).toBe('  job/t-job-5e51cf/deadline  jobWorkflow  1 run since 2026-11-22 07:22:05.102, latest 05034c25 running');
    expect(lines).toContain(
      ' 07:22:20.056  job  deleteJobPods "JobFinished: the Job is finishing (DeadlineExceeded): delete its 2 active pods" ' +
        'pods 2 (deadline-26sts, deadline-fmt7z), removeFinalizer=false -> ok deleted 2 (deadline-fmt7z, deadline-26sts)',
    );
    expect(lines).toContain(' 07:22:16.515  job  waiting 3.52s (timer 3, fired)');
    expect(lines).toContain(' 07:22:05.138  job  read observeJob(deadline) -> ok job deadline parallelism=2 completions=2 gen=1 rv=48651, pods 0');
    expect(lines).toContain('next timer: job timer 6 (12h) fires at 2026-11-22 19:22:20.833 UTC');
    expect(lines).toContain('last error: none');
    expect(formatTimeline(t, { now: Date.parse('2026-11-22T18:22:20.833Z') })).toContain('UTC, in 1h');
  });
});

describe('failures', () => {
  /** replicaset-churn-0 with its deletePods (scheduled as event 17) retried three times and then rejected */
  function failedDelete(truncate: boolean): RunHistory {
    const run = fixture('replicaset-churn-0');
    const events: HistoryEventJson[] = run.events.map((e) => {
      if (e.eventId === '18') {
        const a = e.activityTaskStartedEventAttributes as Record<string, unknown>;
        return { ...e, activityTaskStartedEventAttributes: { ...a, attempt: 4, lastFailure: { message: 'etcdserver: request timed out' } } };
      }
      if (e.eventId === '19') {
        return {
          eventId: '19',
          eventTime: e.eventTime,
          eventType: 'EVENT_TYPE_ACTIVITY_TASK_FAILED',
          activityTaskFailedEventAttributes: {
            failure: { message: 'pods "churn-x" is forbidden: exceeded quota', applicationFailureInfo: { type: 'ApiRejected', nonRetryable: true } },
            scheduledEventId: '17',
            startedEventId: '18',
            retryState: 'RETRY_STATE_NON_RETRYABLE_FAILURE',
          },
        };
      }
      return e;
    });
    return { ...run, events: truncate ? events.filter((e) => Number(e.eventId) <= 19) : events };
  }

  test('a rejected write: failed, with its retry count, and the object is failing', () => {
    const t = buildTimeline([failedDelete(true)]);
    const del = writes(t.entries, ['deletePods'])[0];
    expect(del.alert).toBe(true);
    expect(del.activity?.outcome).toMatchObject({ status: 'failed', attempts: 4, lastFailure: 'etcdserver: request timed out' });
    expect(del.what).toMatch(/-> failed: ApiRejected: pods "churn-x" is forbidden: exceeded quota \(retried 3 times\)$/);
    expect(t.failing).toBe(true);
    expect(t.lastError).toMatchObject({ source: 'activity', activity: 'deletePods', attempts: 4, message: 'ApiRejected: pods "churn-x" is forbidden: exceeded quota' });
    const text = formatTimeline(t, { color: true });
    expect(text).toContain('\x1b[31m!02:40:03.300  replicaset  deletePods pods 3');
    expect(text).toContain('! failing (activity, 2026-11-22 02:40:03.375 replicaset): deletePods (attempt 4): ApiRejected');
  });

  test('a later successful reconcile heals it: the error stays as history only', () => {
    const t = buildTimeline([failedDelete(false)]);
    expect(t.failing).toBe(false);
    expect(t.lastError?.message).toContain('exceeded quota');
    expect(formatTimeline(t, {})).toContain('last error (since healed; activity,');
  });

  test('an activity Temporal is still retrying is failing, from the pending activity info', () => {
    const run = failedDelete(true);
    run.events = run.events.filter((e) => Number(e.eventId) <= 17);
    run.pendingActivities = [{ activityId: '2', activityType: 'deletePods', attempt: 5, lastFailure: 'connect ECONNREFUSED 127.0.0.1:6443' }];
    const t = buildTimeline([run]);
    const del = writes(t.entries, ['deletePods'])[0];
    expect(del.what).toMatch(/-> retrying, attempt 5: connect ECONNREFUSED/);
    expect(t.failing).toBe(true);
    expect(t.lastError).toMatchObject({ source: 'retrying', attempts: 5 });
  });

  test("the LastError memo counts, whether from visibility or from the run's own history", () => {
    const viaMemo = buildTimeline([{ ...fixture('job-deadline-restart-0'), memo: { LastError: 'createJobPods: pods is forbidden' } }]);
    expect(viaMemo.failing).toBe(true);
    expect(viaMemo.lastError).toMatchObject({ source: 'memo', message: 'createJobPods: pods is forbidden' });

    const run = fixture('job-deadline-restart-0');
    run.events.push({
      eventId: '999',
      eventTime: '2026-11-22T07:22:30Z',
      eventType: 'EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED',
      workflowPropertiesModifiedEventAttributes: { upsertedMemo: { fields: { LastError: b64json('updateJobStatus: 422 Invalid') } } },
    });
    const inHistory = buildTimeline([run]);
    expect(inHistory.entries[inHistory.entries.length - 1]).toMatchObject({ kind: 'memo', alert: true, what: 'LastError: updateJobStatus: 422 Invalid' });
    expect(inHistory.failing).toBe(true);
  });
});

describe('several controllers and closed runs', () => {
  test('runs of different workflows interleave by time; a finished run closes its workflow', () => {
    const t = buildTimeline([fixture('ttl-after-finished-restart-0'), fixture('job-backoff-0')]);
    expect(t.runs.map((r) => r.controller)).toEqual(['job', 'ttl-after-finished']);
    expect(t.state).toBe('closed');
    expect(t.entries.filter((e) => e.kind === 'finished')).toHaveLength(2);
    const times = t.entries.map((e) => e.time);
    expect(times[0] <= times[times.length - 1]).toBe(true);
    expect(t.nextTimer).toBeUndefined();
  });

  test('a reason nested in the action (applyDeploymentAction) is found; ok=false results are shown', () => {
    const t = buildTimeline([fixture('deployment-collision-0')]);
    const create = writes(t.entries, ['applyDeploymentAction']).find((e) => e.activity?.input.startsWith('action createReplicaSet'));
    expect(create?.activity?.reason).toBe('create new ReplicaSet clash-67bbdf968f (revision 1) with 1 replica(s)');
    expect(create?.activity?.outcome.summary).toMatch(/^ok=false, reason=AlreadyExists/);
    expect(t.entries.some((e) => e.kind === 'marker' && e.what === 'patched __sdk_internal_patch_number:1')).toBe(true);
  });
});

test('values are kept short and token-like strings are never printed', () => {
  const run = fixture('replicaset-churn-0');
  const jwt = 'eyJhbGciOiJSUzI1NiIsImtpZCI6IkFCQyJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ.c2lnbmF0dXJl';
  run.events.push({
    eventId: '40',
    eventTime: '2026-11-22T02:40:04Z',
    eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED',
    workflowExecutionSignaledEventAttributes: {
      signalName: 'kcm.objectEvent',
      input: { payloads: [b64json({ note: jwt, token: 'abc', long: 'word '.repeat(100), blob: 'x'.repeat(300) })] },
    },
  });
  const last = buildTimeline([run]).entries.pop() as TimelineEntry;
  expect(last.what).not.toContain('eyJ');
  expect(last.what).toContain('note=<redacted>, token=<redacted>');
  expect(last.what).not.toContain('x'.repeat(101));
  expect(last.what.length).toBeLessThanOrEqual(200);
});

test('a signal that merged several watch events says how many', () => {
  const run = fixture('replicaset-churn-0');
  run.events.push({
    eventId: '40',
    eventTime: '2026-11-22T02:40:04Z',
    eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED',
    workflowExecutionSignaledEventAttributes: {
      signalName: 'kcm.objectEvent',
      input: { payloads: [b64json({ podsDeleted: ['a', 'b'], folded: 4 })] },
    },
  });
  const last = buildTimeline([run]).entries.pop() as TimelineEntry;
  expect(last.what).toBe('event (4 watch events merged): podsDeleted 2 (a, b)');
});

describe('the command line', () => {
  test('kinds, objects and the visibility query', () => {
    expect(parseObjectRef('rs', 't-rs/churn')).toEqual({ kind: 'ReplicaSet', namespace: 't-rs', name: 'churn' });
    expect(parseObjectRef('deployments', 'a/b').kind).toBe('Deployment');
    expect(parseObjectRef('hpa', 'a/web')).toEqual({ kind: 'HorizontalPodAutoscaler', namespace: 'a', name: 'web' });
    expect(parseObjectRef('csr', 'node-csr-1')).toEqual({ kind: 'CertificateSigningRequest', name: 'node-csr-1' });
    expect(parseObjectRef('Job', 'a/b').kind).toBe('Job');
    expect(parseObjectRef('clusterrole', 'system:aggregate-to-edit')).toEqual({ kind: 'ClusterRole', name: 'system:aggregate-to-edit' });
    expect(() => parseObjectRef('rs', 'a/b/c')).toThrow();
    expect(() => parseObjectRef('rs', "ns/it's")).toThrow();
    expect(() => parseObjectRef('rs', 'churn')).toThrow(/namespaced/);
    expect(() => parseObjectRef('ns', 'a/b')).toThrow(/cluster-scoped/);
    expect(objectQuery({ kind: 'Job', namespace: 'ns', name: 'x', controller: 'job' })).toBe(
      "KcmKind='Job' AND KcmName='x' AND KcmNamespace='ns' AND KcmController='job'",
    );
    expect(objectQuery({ kind: 'Namespace', name: 'x' }, { running: true })).toBe("KcmKind='Namespace' AND KcmName='x' AND ExecutionStatus='Running'");
  });

  test.each([
    [['why', 'rs', 'a/b/c']],
    [['why', 'rs', 'churn']], // namespaced kind without a namespace
    [['why', 'namespace', 'kube-system/default']],
    [['why', 'job', 'ns/x', '--limit', '0']],
  ])('%j is a usage error, before any connection', async (argv) => {
    const program = new Command('temporal-kcm').exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
    addWhyCommand(program);
    const err = await program.parseAsync(argv, { from: 'user' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommanderError);
  });
});

describe('a ReplicaSet whose API calls are local activities (replicaset-local-io-0)', () => {
  const t = buildTimeline([fixture('replicaset-local-io-0')]);

  test('each local activity marker reads as the activity it ran, with its reason and outcome', () => {
    const w = writes(t.entries, ['createPods', 'updateReplicaOwnerStatus']);
    expect(w.map((e) => e.activity?.name).slice(0, 4)).toEqual(['createPods', 'updateReplicaOwnerStatus', 'updateReplicaOwnerStatus', 'createPods']);
    expect(w[0].activity?.reason).toBe('scale up 0->1: slow-start batch 1 of 1');
    expect(w.every((e) => e.kind === 'decided+wrote' && e.activity?.outcome.status === 'ok')).toBe(true);
    expect(w[0].activity?.outcome.summary).toMatch(/created/);
    expect(t.entries.some((e) => e.kind === 'marker' && e.what.includes('core_local_activity'))).toBe(false);
  });
});
