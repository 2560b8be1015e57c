/*
 * What `run` does with each upstream kube-controller-manager flag it has no option of its own for
 * (starter/upstream-flags.ts lists them all). Every one is accepted, so that an upstream command
 * line (kubeadm's above all) starts this manager unchanged; each says here whether it is honoured,
 * changes nothing here and why, or is not built yet. README's flag table and --help show the same.
 */

export type AcceptedFlagKind =
  /** handled by resolveRunOptions (the log level, the garbage collector switch, ...) */
  | 'honoured'
  /** it has nothing to act on here: the reason says why */
  | 'no effect'
  /** upstream's behaviour is not built yet: a value away from upstream's default is logged as a warning at start */
  | 'not yet';

export interface AcceptedFlag {
  kind: AcceptedFlagKind;
  /** one sentence, shown in --help, README and the start log */
  reason: string;
}

const CLOUD: AcceptedFlag = { kind: 'no effect', reason: 'a cloud provider setting: since v1.31 upstream has no in-tree cloud providers, and cloud-controller-manager runs the cloud loops' };
const LEADER_MIGRATION: AcceptedFlag = { kind: 'no effect', reason: 'leader migration moves controllers between leader-elected managers; Temporal replaces leader election' };
const NODE_IPAM: AcceptedFlag = { kind: 'not yet', reason: 'node-ipam-controller (podCIDR allocation) is not built yet' };
const REQUEST_HEADER: AcceptedFlag = {
  kind: 'not yet',
  reason: 'front-proxy (request header) authentication is not built yet: the secure port authenticates bearer tokens and client certificates only',
};
const METRICS: AcceptedFlag = { kind: 'not yet', reason: "upstream's metric series are not exported yet; this manager's own kcm_* series are all shown" };
const ENDPOINT_BATCH: AcceptedFlag = {
  kind: 'no effect',
  reason: "a Service's pod changes are merged in the watch (at most two signals a second for a busy Service) and written at once, with no batch delay",
};
const TEXT_LOG_BUFFER: AcceptedFlag = { kind: 'no effect', reason: 'a setting of the text log format; this manager writes JSON lines, each at once' };

/** Keyed by upstream's flag name (underscores as upstream spells them). */
export const ACCEPTED_UPSTREAM_FLAGS: Readonly<Record<string, AcceptedFlag>> = {
  profiling: { kind: 'not yet', reason: 'the /debug/pprof endpoints are not served yet (nothing is served there, as with --profiling=false); see --heap-snapshot-dir' },
  'contention-profiling': { kind: 'no effect', reason: "Go's block profile has no Node.js counterpart" },
  'enable-leader-migration': LEADER_MIGRATION,
  'leader-migration-config': LEADER_MIGRATION,
  'allocate-node-cidrs': NODE_IPAM,
  'cidr-allocator-type': NODE_IPAM,
  'cluster-cidr': NODE_IPAM,
  'service-cluster-ip-range': NODE_IPAM,
  'node-cidr-mask-size': NODE_IPAM,
  'node-cidr-mask-size-ipv4': NODE_IPAM,
  'node-cidr-mask-size-ipv6': NODE_IPAM,
  'allow-untagged-cloud': CLOUD,
  'cloud-config': CLOUD,
  'cloud-provider': CLOUD,
  'configure-cloud-routes': CLOUD,
  'external-cloud-volume-plugin': CLOUD,
  'route-reconciliation-period': CLOUD,
  'node-sync-period': CLOUD,
  'concurrent-service-syncs': { kind: 'no effect', reason: 'workers of the service-lb-controller, a cloud loop that runs in cloud-controller-manager' },
  'cluster-name': { kind: 'no effect', reason: 'the prefix of cloud resources that the cloud loops name; none runs here' },
  'controller-shutdown-timeout': { kind: 'no effect', reason: 'a stopping replica ends its workers at once; Temporal hands what they held to another replica, and a write cut short is retried there' },
  'controller-start-interval': { kind: 'no effect', reason: 'controllers start together; each waits for its informers, which start together too' },
  'emulated-version': { kind: 'honoured', reason: 'this build behaves as v1.35 only: a value naming another version is refused' },
  'min-compatibility-version': { kind: 'honoured', reason: 'this build behaves as v1.35 only: a value naming another version is refused' },
  'kube-api-content-type': { kind: 'no effect', reason: 'the clients speak JSON, which every API server answers' },
  'disable-http2-serving': { kind: 'no effect', reason: 'the secure port serves HTTP/1.1 only' },
  'http2-max-streams-per-connection': { kind: 'no effect', reason: 'the secure port serves HTTP/1.1 only' },
  'permit-address-sharing': { kind: 'no effect', reason: 'Node.js listens with SO_REUSEADDR always' },
  'permit-port-sharing': { kind: 'no effect', reason: 'SO_REUSEPORT is not offered by Node.js 20; two managers on one port cannot both listen' },
  'tls-cipher-suites': { kind: 'not yet', reason: "the secure port offers Node.js's default suites (TLS 1.2 ECDHE with AES-GCM or ChaCha20, and TLS 1.3)" },
  'tls-sni-cert-key': { kind: 'not yet', reason: 'per-name serving certificates are not built yet; --tls-cert-file serves every name' },
  'requestheader-allowed-names': REQUEST_HEADER,
  'requestheader-client-ca-file': REQUEST_HEADER,
  'requestheader-extra-headers-prefix': REQUEST_HEADER,
  'requestheader-group-headers': REQUEST_HEADER,
  'requestheader-uid-headers': REQUEST_HEADER,
  'requestheader-username-headers': REQUEST_HEADER,
  'concurrent-device-taint-eviction-syncs': { kind: 'no effect', reason: 'device-taint-eviction-controller (alpha, off by default upstream) is not built' },
  'endpoint-updates-batch-period': ENDPOINT_BATCH,
  'endpointslice-updates-batch-period': ENDPOINT_BATCH,
  'mirroring-endpointslice-updates-batch-period': ENDPOINT_BATCH,
  'enable-garbage-collector': { kind: 'honoured', reason: 'false leaves garbage-collector-controller out, as upstream does' },
  'allow-metric-labels': METRICS,
  'allow-metric-labels-manifest': METRICS,
  'disabled-metrics': METRICS,
  'show-hidden-metrics-for-version': METRICS,
  'log-flush-frequency': { kind: 'no effect', reason: 'each log line is written at once' },
  'log-text-info-buffer-size': TEXT_LOG_BUFFER,
  'log-text-split-stream': TEXT_LOG_BUFFER,
  'logging-format': { kind: 'honoured', reason: "json (this manager's default) or text (klog's line shape, upstream's default, with the controller where klog names the Go file)" },
  v: { kind: 'honoured', reason: 'klog verbosity as the log level when --log-level is not given: 0-3 info, 4-5 debug, 6 and above trace' },
  vmodule: { kind: 'not yet', reason: 'per-file verbosity has no counterpart yet: log lines are per controller, not per Go file' },
  version: { kind: 'honoured', reason: 'prints the version and exits' },
};
