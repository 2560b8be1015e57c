import { parseGoDuration } from '../workflows/common/duration';

/*
 * Flags a controller declares in its descriptor. The manager adds them to `run`, reads and
 * validates them with the rest, and hands the values to the controller's activities, routes and
 * start hooks; the README's flag table is checked against the same declarations.
 */

interface FlagBase {
  /** the flag without dashes, as upstream spells it */
  name: string;
  help: string;
}

export interface IntFlag extends FlagBase {
  kind: 'int';
  def: number;
  min: number;
  max: number;
}

/** A float32 on the command line, as upstream's rates and fractions. */
export interface FloatFlag extends FlagBase {
  kind: 'float';
  def: number;
  min: number;
}

/** A Go duration on the command line; its value is in milliseconds. */
export interface DurationFlag extends FlagBase {
  kind: 'duration';
  def: string;
  allowZero: boolean;
}

/** A path that must name an existing file; no default. */
export interface FileFlag extends FlagBase {
  kind: 'file';
}

/** A Go bool flag: `--x`, `--x=true` or `--x=false`. */
export interface BoolFlag extends FlagBase {
  kind: 'bool';
  def: boolean;
}

/** A plain string, such as a directory that need not exist. */
export interface StringFlag extends FlagBase {
  kind: 'string';
  def: string;
}

/** Go's strconv.ParseBool spellings, which pflag accepts for `--flag=value` and upstream for feature gates. */
export function parseGoBool(value: string): boolean | undefined {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(value)) return false;
  return undefined;
}

export type FlagSpec = IntFlag | FloatFlag | DurationFlag | FileFlag | BoolFlag | StringFlag;

export type FlagValueOf<F extends FlagSpec> = F extends FileFlag ? string | undefined : F extends StringFlag ? string : F extends BoolFlag ? boolean : number;

/** Resolved values by flag name: plain JSON, so they can ride in a workflow or activity input. */
export type FlagValues = Readonly<Record<string, number | string | boolean | undefined>>;

/** Upstream keeps counts in int32 fields. */
export const INT32_MAX = 2 ** 31 - 1;

export function intFlag(name: string, def: number, help: string, range: { min?: number; max?: number } = {}): IntFlag {
  return { kind: 'int', name, def, help, min: range.min ?? 1, max: range.max ?? INT32_MAX };
}

export function floatFlag(name: string, def: number, help: string, min = 0): FloatFlag {
  return { kind: 'float', name, def, help, min };
}

export function durationFlag(name: string, def: string, help: string, allowZero = false): DurationFlag {
  return { kind: 'duration', name, def, help, allowZero };
}

export function boolFlag(name: string, def: boolean, help: string): BoolFlag {
  return { kind: 'bool', name, def, help };
}

export function stringFlag(name: string, def: string, help: string): StringFlag {
  return { kind: 'string', name, def, help };
}

export function fileFlag(name: string, help: string): FileFlag {
  return { kind: 'file', name, help };
}

/** The flag's default as a value: what a reader sees when an input predates the flag. */
export function flagDefault<F extends FlagSpec>(spec: F): FlagValueOf<F> {
  const v = spec.kind === 'int' || spec.kind === 'float' || spec.kind === 'bool' || spec.kind === 'string' ? spec.def : spec.kind === 'duration' ? parseGoDuration(spec.def) : undefined;
  return v as FlagValueOf<F>;
}

/** A flag's value from resolved values, typed by its declaration; the default when absent. */
export function flagValue<F extends FlagSpec>(values: FlagValues | undefined, spec: F): FlagValueOf<F> {
  const v = values?.[spec.name];
  return (v === undefined ? flagDefault(spec) : v) as FlagValueOf<F>;
}

/** A flag's value only when the manager resolved one: routes leave it out of workflow inputs otherwise. */
export function flagGiven<F extends FlagSpec>(values: FlagValues | undefined, spec: F): FlagValueOf<F> | undefined {
  return values?.[spec.name] as FlagValueOf<F> | undefined;
}
