/**
 * IP addresses and prefixes as Go's net/netip reads them, for the ServiceCIDR controller's
 * containment questions. Pure and deterministic (the workflow bundle imports it): an address is
 * its family and its value as a bigint; a prefix keeps the address as written and its length.
 */

export type IpFamily = 4 | 6;

export interface Addr {
  family: IpFamily;
  /** the address as an unsigned integer of 32 (IPv4) or 128 (IPv6) bits */
  value: bigint;
}

export interface Prefix {
  addr: Addr;
  bits: number;
}

const widthOf = (f: IpFamily): number => (f === 4 ? 32 : 128);

function parseV4(s: string): bigint | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  let v = 0n;
  for (const p of parts) {
    // netip refuses empty fields, signs, more than three digits and leading zeros
    if (!/^(0|[1-9]\d{0,2})$/.test(p)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    v = (v << 8n) | BigInt(n);
  }
  return v;
}

function parseV6(s: string): bigint | undefined {
  // a zone (fe80::1%eth0) is an address netip parses, but never a Kubernetes IP or prefix
  if (s.includes('%')) return undefined;
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const groups = (h: string): number[] | undefined => {
    if (h === '') return [];
    const out: number[] = [];
    const fields = h.split(':');
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i];
      if (i === fields.length - 1 && f.includes('.')) {
        const v4 = parseV4(f);
        if (v4 === undefined) return undefined;
        out.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
        continue;
      }
      if (!/^[0-9a-fA-F]{1,4}$/.test(f)) return undefined;
      out.push(parseInt(f, 16));
    }
    return out;
  };
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  if (!head || !tail) return undefined;
  let all: number[];
  if (halves.length === 2) {
    // "::" stands for at least one group of zeros
    const missing = 8 - head.length - tail.length;
    if (missing < 1) return undefined;
    all = [...head, ...new Array<number>(missing).fill(0), ...tail];
  } else {
    all = head;
  }
  if (all.length !== 8) return undefined;
  return all.reduce((v, g) => (v << 16n) | BigInt(g), 0n);
}

/** netip.ParseAddr: undefined for anything it would refuse. An IPv4-mapped IPv6 address is IPv6. */
export function parseAddr(s: string): Addr | undefined {
  if (s.includes(':')) {
    const v = parseV6(s);
    return v === undefined ? undefined : { family: 6, value: v };
  }
  const v = parseV4(s);
  return v === undefined ? undefined : { family: 4, value: v };
}

/** netip.ParsePrefix: `address/length`, the length in decimal without a leading zero. Host bits may be set. */
export function parsePrefix(s: string): Prefix | undefined {
  const slash = s.lastIndexOf('/');
  if (slash < 0) return undefined;
  const addr = parseAddr(s.slice(0, slash));
  const bitsText = s.slice(slash + 1);
  if (!addr || !/^(0|[1-9]\d*)$/.test(bitsText)) return undefined;
  const bits = Number(bitsText);
  if (bits > widthOf(addr.family)) return undefined;
  return { addr, bits };
}

function mask(family: IpFamily, bits: number): bigint {
  const w = BigInt(widthOf(family));
  const all = (1n << w) - 1n;
  return all ^ ((1n << (w - BigInt(bits))) - 1n);
}

/** The prefix's first address (its network address). */
export function networkAddress(p: Prefix): Addr {
  return { family: p.addr.family, value: p.addr.value & mask(p.addr.family, p.bits) };
}

/** The prefix's last address: every host bit set (IPv4's broadcast address). */
export function lastAddress(p: Prefix): Addr {
  const w = widthOf(p.addr.family);
  const host = (1n << BigInt(w - p.bits)) - 1n;
  return { family: p.addr.family, value: networkAddress(p).value | host };
}

/** Prefix.Contains: same family, and the address within the prefix. */
export function prefixContains(p: Prefix, a: Addr): boolean {
  if (p.addr.family !== a.family) return false;
  const m = mask(a.family, p.bits);
  return (a.value & m) === (p.addr.value & m);
}

/** Prefix.Overlaps: same family, and the two agree on the shorter prefix's bits. */
export function prefixesOverlap(p: Prefix, q: Prefix): boolean {
  if (p.addr.family !== q.addr.family) return false;
  const bits = Math.min(p.bits, q.bits);
  const m = mask(p.addr.family, bits);
  return (p.addr.value & m) === (q.addr.value & m);
}

/** Whether `outer` contains `inner` whole, as upstream asks it: they overlap and outer is no longer. */
export function prefixContainsPrefix(outer: Prefix, inner: Prefix): boolean {
  return prefixesOverlap(outer, inner) && outer.bits <= inner.bits;
}

/**
 * Whether an IP belongs to a ServiceCIDR's prefix as upstream's allocators see it: inside it, not
 * its network address, and for IPv4 not its broadcast address either (neither is ever allocated).
 */
export function serviceCidrContainsIp(p: Prefix, a: Addr): boolean {
  if (networkAddress(p).family === a.family && networkAddress(p).value === a.value) return false;
  if (a.family === 4 && lastAddress(p).value === a.value) return false;
  return prefixContains(p, a);
}

/** The IP family name of a prefix as written, as the IPAddress family label spells it; '' when it does not parse. */
export function familyLabelOf(cidr: string): '' | 'IPv4' | 'IPv6' {
  const p = parsePrefix(cidr);
  return p ? (p.addr.family === 4 ? 'IPv4' : 'IPv6') : '';
}
