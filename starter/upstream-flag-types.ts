/** One flag of upstream kube-controller-manager, as its pflag set declares it (starter/upstream-flags.ts). */
export interface UpstreamFlag {
  name: string;
  /** the --help section upstream lists it under ("generic", "secure serving", a controller's name, ...) */
  section: string;
  /** pflag's value type: bool, int32, float32, duration, string, stringSlice, mapStringBool, ... */
  type: string;
  /** its default as upstream's --help prints it */
  default: string;
  shorthand?: string;
  deprecated?: boolean;
  hidden?: boolean;
  usage: string;
}
