import { promisify } from 'node:util';
import { deflate, inflateSync } from 'node:zlib';
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

const deflateAsync = promisify(deflate);

/** What the Go SDK's zlib codec writes as a compressed payload's encoding; its codec server can decode ours. */
export const ZLIB_ENCODING = 'binary/zlib';

/**
 * Payloads larger than this are compressed. Below it a payload stays plain JSON, readable in the
 * Web UI and by `temporal workflow show`: every ordinary reconcile's inputs and results are a few
 * KiB. Above it are the observations of owners with thousands of pods, which compress well.
 */
export const COMPRESS_ABOVE_BYTES = 128 * 1024;

const ENCODING_KEY = 'encoding';
const encodingOf = (p: Payload) => (p.metadata?.[ENCODING_KEY] ? Buffer.from(p.metadata[ENCODING_KEY]).toString() : '');

/**
 * Temporal rejects any payload over 2 MiB (the server's blob size limit), and a local activity's
 * result over it fails the workflow task that records it, again on every retry. A ReplicaSet's
 * observation lists every pod it owns, about 0.5 KiB each in JSON, so an owner of about 4,000 pods
 * would have wedged its workflow. Compressed, repetitive pod summaries take about a tenth of that.
 *
 * The wire format is the Go SDK's zlib codec's (`converter.NewZlibCodec`): the whole payload,
 * protobuf-encoded, deflated with zlib, under the encoding `binary/zlib`. Kept only when smaller.
 */
export class ZlibPayloadCodec implements PayloadCodec {
  constructor(private readonly aboveBytes = COMPRESS_ABOVE_BYTES) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.all(payloads.map(async (p) => {
      if ((p.data?.length ?? 0) <= this.aboveBytes) return p;
      const plain = temporal.api.common.v1.Payload.encode(p).finish();
      const packed = await deflateAsync(plain);
      if (packed.length >= plain.length) return p;
      return { metadata: { [ENCODING_KEY]: Buffer.from(ZLIB_ENCODING) }, data: new Uint8Array(packed) };
    }));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    // at most 2 MiB compressed each: inflating in place takes milliseconds
    return payloads.map((p) => (encodingOf(p) === ZLIB_ENCODING ? unpackZlibPayload(p.data ?? new Uint8Array()) : p));
  }
}

/** The payload inside a `binary/zlib` payload's data, synchronously (for tools that read histories as JSON). */
export function unpackZlibPayload(data: Uint8Array): Payload {
  return temporal.api.common.v1.Payload.decode(inflateSync(data)) as Payload;
}

/** Every client, worker and replayer of this project uses it, so any of them reads what another wrote. */
export const DATA_CONVERTER: DataConverter = { payloadCodecs: [new ZlibPayloadCodec()] };
