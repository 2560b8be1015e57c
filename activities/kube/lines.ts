/**
 * A watch stream is newline-delimited JSON arriving in arbitrary chunks. Returns a feeder for the
 * chunks that calls `onLine` with each complete, non-empty, trimmed line; `onLine` returning
 * false stops the rest of that chunk (the stream is being abandoned).
 */
export function lineSplitter(onLine: (line: string) => void | false): (chunk: string) => void {
  let buf = '';
  return (chunk) => {
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line && onLine(line) === false) return;
    }
  };
}
