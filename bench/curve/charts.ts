import * as fs from 'node:fs';
import * as path from 'node:path';

/** One line of a chart: a name for the legend and its points (x = objects). */
export interface Series {
  name: string;
  points: Array<{ x: number; y: number }>;
}

export interface Chart {
  /** file name in the charts directory, without .png */
  file: string;
  title: string;
  yTitle: string;
  series: Series[];
}

/*
 * vega and vega-lite are ES modules with top-level await, which `require` cannot load and which
 * TypeScript's CommonJS output would turn a plain `import()` into; this keeps a real dynamic import.
 */
const importEsm = new Function('m', 'return import(m)') as (m: string) => Promise<unknown>;

interface VegaLite { compile(spec: object): { spec: object } }
interface Vega {
  parse(spec: object): object;
  View: new (runtime: object, o: { renderer: 'none' }) => { toSVG(): Promise<string> };
}

/** Draws each chart as a PNG into `dir` (log-scale x: the sizes are about 3x apart); returns the files written. */
export async function drawCharts(charts: Chart[], dir: string): Promise<string[]> {
  const vl = await importEsm('vega-lite') as VegaLite;
  const vega = await importEsm('vega') as Vega;
  const { Resvg } = await import('@resvg/resvg-js');
  fs.mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  for (const c of charts) {
    const values = c.series.flatMap((s) => s.points.filter((p) => Number.isFinite(p.y)).map((p) => ({ objects: p.x, value: p.y, series: s.name })));
    if (!values.length) continue;
    const spec = vl.compile({
      title: c.title,
      width: 420,
      height: 260,
      data: { values },
      mark: { type: 'line', point: true },
      encoding: {
        x: { field: 'objects', type: 'quantitative', scale: { type: 'log' }, title: 'objects (Deployments, ReplicaSets and pods)' },
        y: { field: 'value', type: 'quantitative', title: c.yTitle, scale: { zero: true } },
        color: { field: 'series', type: 'nominal', title: null, sort: c.series.map((s) => s.name) },
      },
    }).spec;
    const svg = await new vega.View(vega.parse(spec), { renderer: 'none' }).toSVG();
    const png = new Resvg(svg, { background: 'white', fitTo: { mode: 'zoom', value: 1.5 }, font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' } }).render().asPng();
    const file = path.join(dir, `${c.file}.png`);
    fs.writeFileSync(file, png);
    written.push(file);
  }
  return written;
}
