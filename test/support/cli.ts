import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { repoRoot } from '../../starter/local/paths';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run the built `temporal-kcm` CLI as a user would (npm test builds dist/ first). */
export function runCli(args: string[], env: NodeJS.ProcessEnv = process.env, timeoutMs = 300_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'temporal-kcm.js'), ...args], { env, cwd: repoRoot });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : -1), stdout, stderr });
    });
  });
}
