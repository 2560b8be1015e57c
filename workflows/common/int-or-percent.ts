/** An IntOrString field that holds a count or a percentage ("25%"), as maxSurge or minAvailable. */
export type IntOrPercent = number | string;

const SIGNED_INT = /^[+-]?[0-9]+$/;

/**
 * intstr's GetScaledValueFromIntOrPercent: an integer as is; 'N%' of total rounded up or down.
 * A string without '%' or with a non-integer number is an error, worded as upstream's.
 */
export function scaledValue(v: IntOrPercent | undefined | null, total: number, roundUp: boolean): { value: number; error?: string } {
  if (v === undefined || v === null) return { value: 0 };
  if (typeof v === 'number') return { value: Math.trunc(v) };
  if (!v.endsWith('%')) return { value: 0, error: `invalid value for IntOrString: invalid type: string is not a percentage` };
  const digits = v.slice(0, -1);
  if (!SIGNED_INT.test(digits)) return { value: 0, error: `invalid value for IntOrString: invalid value ${JSON.stringify(v)}` };
  const raw = (Number(digits) * total) / 100;
  return { value: roundUp ? Math.ceil(raw) : Math.floor(raw) };
}
