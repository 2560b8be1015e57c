import { sameStatus } from '../../activities/hpa/activities';
import { clientErrorText } from '../../activities/hpa/metrics';
import { hpaConfigOf, syncPeriodMs } from '../../activities/hpa/settings';
import { ApiError } from '../../activities/kube/rest';
import { scaleReadFailed } from '../../workflows/hpa/logic';
import { emptyHistory } from '../../workflows/hpa/types';

describe('the HPA status comparison (updateStatusIfNeeded)', () => {
  const status = {
    currentReplicas: 2,
    desiredReplicas: 6,
    currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 150, averageValue: '150m' } } }],
    conditions: [{ type: 'AbleToScale', status: 'True', reason: 'SucceededRescale', message: 'm', lastTransitionTime: '2026-11-25T00:00:00Z' }],
  };

  it('ignores key order, nulls and empty lists, as the API server drops and reorders them', () => {
    const served = JSON.parse(JSON.stringify({ conditions: status.conditions, desiredReplicas: 6, currentMetrics: status.currentMetrics, currentReplicas: 2, lastScaleTime: null }));
    expect(sameStatus(served, status)).toBe(true);
    expect(sameStatus({ currentReplicas: 0, desiredReplicas: 0, currentMetrics: null }, { currentReplicas: 0, desiredReplicas: 0, currentMetrics: [] })).toBe(true);
  });

  it('sees a changed count, condition or metric', () => {
    expect(sameStatus({ ...status, desiredReplicas: 5 }, status)).toBe(false);
    expect(sameStatus({ ...status, conditions: [{ ...status.conditions[0], reason: 'ReadyForNewScale' }] }, status)).toBe(false);
    expect(sameStatus({ ...status, currentMetrics: [{ type: '' }] }, status)).toBe(false);
    expect(sameStatus(undefined, status)).toBe(false);
  });
});

describe('clientErrorText: what client-go prints for a failed metrics read', () => {
  it('the server\'s Status message when it sent one', () => {
    const e = new ApiError(404, 'NotFound', 'GET x: 404 deployments.apps "web" not found', undefined, 'deployments.apps "web" not found');
    expect(clientErrorText(e, 'get', 'deployments.apps')).toBe('deployments.apps "web" not found');
  });

  it('the generic text by status code for a plain-text answer (the aggregator\'s)', () => {
    const notFound = new ApiError(404, 'Unknown', 'GET x: 404 404 page not found', undefined, '404 page not found');
    expect(clientErrorText(notFound, 'get', 'pods.metrics.k8s.io')).toBe('the server could not find the requested resource (get pods.metrics.k8s.io)');
    const unavailable = new ApiError(503, 'Unknown', 'GET x: 503 service unavailable', undefined, 'service unavailable\n');
    expect(clientErrorText(unavailable, 'get', 'pods.metrics.k8s.io')).toBe('the server is currently unable to handle the request (get pods.metrics.k8s.io)');
  });

  it('a connection failure as its error', () => {
    expect(clientErrorText(new ApiError(0, 'ConnectionError', 'GET x: connect ECONNREFUSED'), 'get', 'pods.metrics.k8s.io')).toBe('GET x: connect ECONNREFUSED');
    expect(clientErrorText(new Error('boom'), 'get', 'x')).toBe('boom');
  });
});

describe('the HPA settings', () => {
  it('defaults as upstream: 15s period, 5m window, 0.1 tolerance, 5m CPU initialization, 30s readiness delay', () => {
    expect(syncPeriodMs({})).toBe(15_000);
    expect(hpaConfigOf({})).toEqual({
      tolerance: 0.1, cpuInitializationPeriodMs: 300_000, initialReadinessDelayMs: 30_000, downscaleStabilizationWindowMs: 300_000,
      configurableTolerance: true, podLevelResources: true,
    });
  });

  it('takes the flags and gates given', () => {
    const c = hpaConfigOf({ 'horizontal-pod-autoscaler-tolerance': 0.2, 'horizontal-pod-autoscaler-downscale-stabilization': 30_000, 'feature-gate:HPAConfigurableTolerance': false });
    expect(c.tolerance).toBe(0.2);
    expect(c.downscaleStabilizationWindowMs).toBe(30_000);
    expect(c.configurableTolerance).toBe(false);
    expect(c.podLevelResources).toBe(true);
  });
});

describe('a sync that could not read the scale', () => {
  it('keeps the status found, observedGeneration included, and sets FailedGetScale with the Warning', () => {
    const history = { ...emptyHistory(), recommendations: [{ timestampMs: 1, replicas: 4 }] };
    const r = scaleReadFailed({ observedGeneration: 3, currentReplicas: 4, desiredReplicas: 4, lastScaleTime: '2026-11-25T00:00:00Z' }, history,
      'deployments.apps "web" not found', Date.parse('2026-11-25T01:00:00Z'));
    expect(r.status).toEqual({
      observedGeneration: 3, currentReplicas: 4, desiredReplicas: 4, lastScaleTime: '2026-11-25T00:00:00Z',
      conditions: [{ type: 'AbleToScale', status: 'False', reason: 'FailedGetScale',
        message: 'the HPA controller was unable to get the target\'s current scale: deployments.apps "web" not found', lastTransitionTime: '2026-11-25T01:00:00Z' }],
    });
    expect(r.events).toEqual([{ type: 'Warning', reason: 'FailedGetScale', message: 'deployments.apps "web" not found' }]);
    expect(r.history).toBe(history);
  });
});
