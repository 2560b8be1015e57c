import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isOurs, readPid, startDetached, stopProcess } from '../../starter/local/processes';
import { isPortFree } from '../../starter/local/ports';

/**
 * A process that, told to stop, first loses its command line and only then lets its listening
 * socket go, as an exiting kube-apiserver does (its memory, and with it /proc/<pid>/cmdline, goes
 * before its files are closed). The chaos restarts found it: a stop that took the empty command
 * line for "gone" let `up` find the old port still held.
 */
const LINGERING_SERVER = `
const net = require('node:net');
const srv = net.createServer().listen(Number(process.argv[1]), '127.0.0.1', () => process.stdout.write('up ' + 'and listening\\n'));
process.on('SIGTERM', () => { process.title = ''; setTimeout(() => srv.close(() => process.exit(0)), 800); });
`;

async function freePort(): Promise<number> {
  for (let p = 20_000 + Math.floor(Math.random() * 9_000); ; p++) if (await isPortFree(p)) return p;
}

describe('stopProcess', () => {
  it('returns only once the process has exited and its port is free, even after its command line is gone', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stop-process-'));
    const port = await freePort();
    const rec = startDetached(dataDir, { name: 'lingering', binary: process.execPath, args: ['-e', LINGERING_SERVER, String(port)] });
    // (the log's first line quotes the script, so the marker is built at run time)
    const logFile = path.join(dataDir, 'logs', 'lingering.log');
    for (let i = 0; i < 100 && !fs.readFileSync(logFile, 'utf8').includes('up and listening'); i++) await new Promise((r) => setTimeout(r, 50));
    expect(isOurs(readPid(dataDir, 'lingering'))).toBe(true);
    expect(await isPortFree(port)).toBe(false);

    expect(await stopProcess(dataDir, 'lingering', 5_000)).toBe('stopped');
    expect(await isPortFree(port)).toBe(true);
    expect(fs.existsSync(`/proc/${rec.pid}/cmdline`) && fs.readFileSync(`/proc/${rec.pid}/cmdline`, 'utf8') !== '').toBe(false);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
});
