import * as fs from 'node:fs';
import type { ControllerDescriptor } from '../../workers/descriptor';
import { signerPlan, signingFlagProblems, startedSigners } from '../../workflows/csrsigning/logic';
import { csrSigningWorkflow } from '../../workflows/csrsigning/workflow';
import { loadCertificateAuthority } from '../certificates/x509';
import { createCsrSigningActivities } from './activities';
import { csrSigningRoutes } from './routes';
import { CSR_SIGNING_FLAGS, signingFilesOf } from './settings';

export const csrSigningController: ControllerDescriptor = {
  name: 'certificatesigningrequest-signing-controller',
  short: 'csrsigning',
  serviceAccount: 'certificate-controller',
  // upstream runs five workers for each of its four signers
  concurrency: 20,
  flags: CSR_SIGNING_FLAGS,
  validateFlags: (flags) => signingFlagProblems(signingFilesOf(flags)),
  workflows: [csrSigningWorkflow],
  activities: (ctx) => createCsrSigningActivities(ctx),
  routes: csrSigningRoutes,
  // as upstream at start: no files, skipped; both kinds of files, an error; a CA that cannot be
  // read, an error naming its signer. The key is read here to check it, and dropped.
  precondition({ flags }) {
    const plan = signerPlan(signingFilesOf(flags));
    if (plan.kind === 'skip') return { fatal: false, message: plan.message };
    if (plan.kind === 'error') return { fatal: true, message: `error starting "certificatesigningrequest-signing-controller": ${plan.message}` };
    for (const signer of startedSigners(plan)) {
      const files = plan.signers[signer]!;
      try {
        const read = (f: string, what: string) => {
          try {
            return fs.readFileSync(f, 'utf8');
          } catch (e) {
            throw new Error(`error reading CA ${what} file "${f}": ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? `open ${f}: no such file or directory` : (e as Error).message}`);
          }
        };
        loadCertificateAuthority(read(files.certFile, 'cert'), read(files.keyFile, 'key'), files.certFile, files.keyFile);
      } catch (e) {
        return { fatal: true, message: `failed to init ${signer} certificate controller: ${(e as Error).message}` };
      }
    }
    return undefined;
  },
};
