import * as net from 'node:net';
import { PortAllocator, PortInUseError, ephemeralRangeStart, isPortFree } from '../../starter/local/ports';

describe('PortAllocator', () => {
  test('hands out distinct free ports', async () => {
    const a = new PortAllocator();
    const ports = await Promise.all(Array.from({ length: 5 }, (_, i) => a.take(`p${i}`)));
    expect(new Set(ports).size).toBe(5);
    for (const p of ports) expect(await isPortFree(p)).toBe(true);
  });

  test('a requested port that is taken is a PortInUseError naming port and purpose', async () => {
    const srv = net.createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    const port = (srv.address() as net.AddressInfo).port;
    try {
      await expect(new PortAllocator().take('kube-apiserver (apiserver)', port)).rejects.toThrow(PortInUseError);
      await expect(new PortAllocator().take('kube-apiserver (apiserver)', port)).rejects.toThrow(
        new RegExp(`port ${port} \\(wanted for kube-apiserver \\(apiserver\\)\\) is already in use`),
      );
    } finally {
      srv.close();
    }
  });

  test('the same port is not handed out twice by one allocator', async () => {
    const a = new PortAllocator();
    const p = await a.take('first');
    await expect(a.take('second', p)).rejects.toThrow(PortInUseError);
  });
});

describe('where ports are picked', () => {
  test('below the kernel\'s ephemeral range, where no outgoing connection can take them meanwhile', async () => {
    const a = new PortAllocator();
    const top = ephemeralRangeStart();
    const ports = await Promise.all(Array.from({ length: 20 }, (_, i) => a.take(`p${i}`)));
    expect(new Set(ports).size).toBe(20);
    for (const p of ports) {
      expect(p).toBeGreaterThanOrEqual(10_000);
      expect(p).toBeLessThan(top);
    }
  });
});
