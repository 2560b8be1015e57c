import * as fs from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { fileFlag, flagGiven, intFlag, type FlagValues } from '../../workers/flags';
import { defaultRecyclerTemplate, recyclerTemplateError, type RecyclerPodJson, type RecyclerTiming } from '../../workflows/pv-binder/recycler';

/** upstream's recycler flags, per plugin */
export const RECYCLER_TEMPLATE_NFS = fileFlag('pv-recycler-pod-template-filepath-nfs', 'The file path to a pod definition used as a template for NFS persistent volume recycling');
export const RECYCLER_MIN_TIMEOUT_NFS = intFlag('pv-recycler-minimum-timeout-nfs', 300, 'The minimum ActiveDeadlineSeconds to use for an NFS Recycler pod', { min: 0 });
export const RECYCLER_INCREMENT_NFS = intFlag('pv-recycler-increment-timeout-nfs', 30, 'the increment of time added per Gi to ActiveDeadlineSeconds for an NFS scrubber pod', { min: 0 });
export const RECYCLER_TEMPLATE_HOSTPATH = fileFlag('pv-recycler-pod-template-filepath-hostpath',
  'The file path to a pod definition used as a template for HostPath persistent volume recycling. This is for development and testing only and will not work in a multi-node cluster.');
export const RECYCLER_MIN_TIMEOUT_HOSTPATH = intFlag('pv-recycler-minimum-timeout-hostpath', 60,
  'The minimum ActiveDeadlineSeconds to use for a HostPath Recycler pod.  This is for development and testing only and will not work in a multi-node cluster.', { min: 0 });
export const RECYCLER_INCREMENT_HOSTPATH = intFlag('pv-recycler-timeout-increment-hostpath', 30,
  'the increment of time added per Gi to ActiveDeadlineSeconds for a HostPath scrubber pod.  This is for development and testing only and will not work in a multi-node cluster.', { min: 0 });

export const RECYCLER_FLAGS = [
  RECYCLER_TEMPLATE_NFS, RECYCLER_MIN_TIMEOUT_NFS, RECYCLER_INCREMENT_NFS,
  RECYCLER_TEMPLATE_HOSTPATH, RECYCLER_MIN_TIMEOUT_HOSTPATH, RECYCLER_INCREMENT_HOSTPATH,
] as const;

export interface RecyclerConfig {
  template: RecyclerPodJson;
  timing: RecyclerTiming;
}

/** A template file, YAML or JSON, as upstream's LoadPodFromFile reads it, checked as AttemptToLoadRecycler checks it. */
export function loadRecyclerTemplate(path: string): RecyclerPodJson {
  const pod = parseYaml(fs.readFileSync(path, 'utf8')) as RecyclerPodJson | null;
  if (!pod || typeof pod !== 'object') throw new Error(`${path}: not a pod definition`);
  const problem = recyclerTemplateError(pod);
  if (problem) throw new Error(`pod specification (${path}): ${problem}`);
  return pod;
}

/** The host-path and NFS recyclers as the flags configure them; throws on a bad template file, as upstream stops. */
export function recyclerConfigs(flags: FlagValues): { hostPath: RecyclerConfig; nfs: RecyclerConfig } {
  const load = (path: string | undefined) => (path ? loadRecyclerTemplate(path) : defaultRecyclerTemplate());
  const num = (v: number | undefined, def: number) => (typeof v === 'number' ? v : def);
  return {
    hostPath: {
      template: load(flagGiven(flags, RECYCLER_TEMPLATE_HOSTPATH)),
      timing: { minimumSeconds: num(flagGiven(flags, RECYCLER_MIN_TIMEOUT_HOSTPATH), 60), incrementSeconds: num(flagGiven(flags, RECYCLER_INCREMENT_HOSTPATH), 30) },
    },
    nfs: {
      template: load(flagGiven(flags, RECYCLER_TEMPLATE_NFS)),
      timing: { minimumSeconds: num(flagGiven(flags, RECYCLER_MIN_TIMEOUT_NFS), 300), incrementSeconds: num(flagGiven(flags, RECYCLER_INCREMENT_NFS), 30) },
    },
  };
}
