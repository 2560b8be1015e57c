import { inflateSync } from 'node:zlib';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { decodePayload } from '../../starter/why/history';
import { COMPRESS_ABOVE_BYTES, ZLIB_ENCODING, ZlibPayloadCodec } from '../../workers/payload-codec';
import type { PodSummary } from '../../workflows/replicaset/types';

const codec = new ZlibPayloadCodec();
const encodingOf = (p: { metadata?: Record<string, Uint8Array> | null }) => Buffer.from(p.metadata?.encoding ?? new Uint8Array()).toString();

/** An owner's observation as the ReplicaSet workflow receives it: n pods of one ReplicaSet. */
function observation(n: number) {
  const pods: PodSummary[] = Array.from({ length: n }, (_, i) => ({
    namespace: 'bench-scale-up', name: `big-7c9f8d6b5-${i.toString(36).padStart(5, 'x')}`, uid: `0b0c${i.toString(16).padStart(4, '0')}-6f1e-4e2b-9a0f-${(i * 7919).toString(16).padStart(12, '0')}`,
    resourceVersion: String(1_000_000 + i * 3), creationTimestamp: `2026-11-27T11:${String(32 + (i % 20)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z`,
    labels: { app: 'big', 'pod-template-hash': '7c9f8d6b5' },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'big-7c9f8d6b5', uid: '5d2b7c1e-0a7f-4d8e-b1c3-9e2f4a6b8c0d', controller: true, blockOwnerDeletion: true }],
    phase: 'Running', nodeName: `kwok-node-${i % 10}`, ready: true, readySince: `2026-11-27T11:40:${String(i % 60).padStart(2, '0')}Z`, restartCount: 0, deletionCost: 0,
  }));
  return { owner: { name: 'big-7c9f8d6b5' }, pods };
}

describe('the payload codec', () => {
  test('a payload at or under the threshold passes unchanged, readable as JSON', async () => {
    const p = defaultPayloadConverter.toPayload({ small: 'x'.repeat(COMPRESS_ABOVE_BYTES - 20) });
    const [out] = await codec.encode([p]);
    expect(out).toBe(p);
    expect(encodingOf(out)).toBe('json/plain');
  });

  test('an observation of 5,000 pods, over the server\'s 2 MiB limit as JSON, is compressed well under it and decodes to the same value', async () => {
    const value = observation(5000);
    const p = defaultPayloadConverter.toPayload(value);
    expect(p.data!.length).toBeGreaterThan(2 * 1024 * 1024);
    const [out] = await codec.encode([p]);
    expect(encodingOf(out)).toBe(ZLIB_ENCODING);
    expect(out.data!.length).toBeLessThan(p.data!.length / 4);
    const [back] = await codec.decode([out]);
    expect(defaultPayloadConverter.fromPayload(back)).toEqual(value);
  });

  test('the Go SDK\'s zlib format: the whole payload, protobuf-encoded, then zlib', async () => {
    const p = defaultPayloadConverter.toPayload(observation(400));
    const [out] = await codec.encode([p]);
    const inner = temporal.api.common.v1.Payload.decode(inflateSync(out.data!));
    expect(Buffer.from(inner.data).equals(Buffer.from(p.data!))).toBe(true);
    expect(Buffer.from(inner.metadata.encoding).toString()).toBe('json/plain');
  });

  test('payloads of other encodings pass through decode untouched', async () => {
    const p = defaultPayloadConverter.toPayload(undefined);
    const [back] = await codec.decode([p]);
    expect(back).toBe(p);
  });

  test('`why` reads a compressed payload in a history as the value it holds', async () => {
    const value = observation(400);
    const [out] = await codec.encode([defaultPayloadConverter.toPayload(value)]);
    const json = { metadata: { encoding: Buffer.from(ZLIB_ENCODING).toString('base64') }, data: Buffer.from(out.data!).toString('base64') };
    expect(decodePayload(json)).toEqual(value);
  });
});
