import * as fs from 'node:fs';
import type { Logger } from 'pino';
import type { SecureServing } from '../health-server';
import type { SecureServingOptions } from '../run-options';
import { createAuthenticator, createAuthorizer } from './delegated-auth';
import { AUTHENTICATION_CONFIGMAP, accessReviewer, delegationClient, lookupClientCa, tokenReviewer } from './reviews';
import { loadServingCert } from './serving-cert';

/** What --authentication-skip-lookup and its kin make of a failed read of the authentication ConfigMap. */
export type LookupOutcome = { kind: 'use'; clientCa?: string } | { kind: 'tolerate'; error: string } | { kind: 'fatal'; error: string };

/** Whether a failed lookup stops the manager: only --authentication-tolerate-lookup-failure lets it start. */
export function lookupOutcome(result: { clientCa?: string } | { error: string }, tolerate: boolean): LookupOutcome {
  if ('error' in result) return tolerate ? { kind: 'tolerate', error: result.error } : { kind: 'fatal', error: result.error };
  return { kind: 'use', ...(result.clientCa ? { clientCa: result.clientCa } : {}) };
}

/** At least one PEM certificate, or an error naming the file (a CA bundle of nothing trusts no one, silently). */
function readCaBundle(file: string): string {
  const text = fs.readFileSync(file, 'utf8');
  if (!/-----BEGIN CERTIFICATE-----/.test(text)) throw new Error(`--client-ca-file ${file}: no PEM certificate in it`);
  return text;
}

/**
 * Everything the secure port needs before it listens: its certificate, the clusters that
 * authenticate and authorize its callers, and the client CA. Logs, as upstream warns, each
 * check that cannot work for want of a kubeconfig; throws what should stop the manager.
 */
export async function prepareSecureServing(o: SecureServingOptions, bindAddress: string, logger: Logger): Promise<SecureServing> {
  const log = logger.child({ component: 'secure-port' });
  const cert = await loadServingCert({ certFile: o.tlsCertFile, keyFile: o.tlsPrivateKeyFile, certDir: o.certDir, bindAddress });
  if (cert.source.kind === 'memory') log.info('generated a self-signed certificate in memory');
  else if (cert.source.kind === 'cert-dir' && cert.source.generated) {
    log.info({ certFile: cert.source.certFile, keyFile: cert.source.keyFile }, 'generated a self-signed certificate');
  }

  const authnClient = await delegationClient('authentication', o.authenticationKubeconfig, log);
  const authzClient = await delegationClient('authorization', o.authorizationKubeconfig, log);

  let clientCa = o.clientCaFile ? readCaBundle(o.clientCaFile) : undefined;
  const where = `configmap/${AUTHENTICATION_CONFIGMAP.name} in ${AUTHENTICATION_CONFIGMAP.namespace}`;
  if (!clientCa && !o.authenticationSkipLookup) {
    if (!authnClient) {
      log.warn(`no --authentication-kubeconfig to look up client-ca-file in ${where}: client certificate authentication will not work`);
    } else {
      const found = await lookupClientCa(authnClient).then(
        (ca) => ({ ...(ca ? { clientCa: ca } : {}) }),
        (e: unknown) => ({ error: (e as Error).message }),
      );
      const outcome = lookupOutcome(found, o.authenticationTolerateLookupFailure);
      if (outcome.kind === 'fatal') throw new Error(`cannot look up the client CA in ${where}: ${outcome.error} (--authentication-tolerate-lookup-failure starts without it)`);
      if (outcome.kind === 'tolerate') {
        log.warn({ err: outcome.error }, `cannot look up the client CA in ${where}; continuing without it, so client certificates authenticate no one (--authentication-tolerate-lookup-failure=false makes this fatal)`);
      } else clientCa = outcome.clientCa;
    }
  }
  if (!authnClient) {
    log.warn('no --authentication-kubeconfig and not in a cluster: bearer tokens are not checked, every request without a verified client certificate is anonymous');
  }
  if (!authzClient) {
    log.warn(
      { alwaysAllowPaths: o.authorizationAlwaysAllowPaths },
      'no --authorization-kubeconfig and not in a cluster: SubjectAccessReview cannot work, so only --authorization-always-allow-paths and the group system:masters are allowed',
    );
  }

  return {
    cert,
    ...(clientCa ? { clientCa } : {}),
    ...(o.tlsMinVersion ? { minTlsVersion: o.tlsMinVersion } : {}),
    authenticate: createAuthenticator({
      clientCertificates: clientCa !== undefined,
      ...(authnClient ? { tokenReview: tokenReviewer(authnClient) } : {}),
      cacheTtlMs: o.authenticationTokenWebhookCacheTtlMs,
    }),
    authorize: createAuthorizer({
      alwaysAllowPaths: o.authorizationAlwaysAllowPaths,
      ...(authzClient ? { accessReview: accessReviewer(authzClient) } : {}),
      allowCacheTtlMs: o.authorizationWebhookCacheAuthorizedTtlMs,
      denyCacheTtlMs: o.authorizationWebhookCacheUnauthorizedTtlMs,
    }),
  };
}
