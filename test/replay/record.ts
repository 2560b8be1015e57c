/**
 * Saves workflow histories from a running Temporal as replay fixtures, with the Temporal CLI:
 *   node dist/test/replay/record.js <temporal-address> <name> '<visibility query>' [...]
 * Every run matching the query is saved as test/replay/histories/<name>-<n>.json.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ensureBinaries } from '../../starter/local/binaries';
import { repoRoot } from '../../starter/local/paths';

async function main(): Promise<void> {
  const [address, ...pairs] = process.argv.slice(2);
  if (!address || pairs.length % 2 !== 0) {
    process.stderr.write('usage: record.js <temporal-address> <name> <query> [<name> <query> ...]\n');
    process.exit(2);
  }
  const { temporal } = await ensureBinaries(['temporal']);
  const cli = (args: string[]) => execFileSync(temporal, [...args, '--address', address, '--output', 'json'], { maxBuffer: 256 << 20 }).toString();
  const dir = path.join(repoRoot, 'test', 'replay', 'histories');
  for (let i = 0; i < pairs.length; i += 2) {
    const [name, query] = [pairs[i], pairs[i + 1]];
    const runs = JSON.parse(cli(['workflow', 'list', '--query', query])) as Array<{ execution: { workflowId: string; runId: string } }>;
    runs.forEach(({ execution }, n) => {
      const file = path.join(dir, `${name}-${n}.json`);
      fs.writeFileSync(file, cli(['workflow', 'show', '-w', execution.workflowId, '-r', execution.runId]));
      process.stdout.write(`${file}\n`);
    });
  }
}

void main();
