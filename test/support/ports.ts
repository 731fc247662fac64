// A free loopback port for a server a test or the benchmark starts.
//
// A port the system hands out for `listen(0)` comes from its ephemeral range, the same range every outgoing
// connection takes its own port from. Between finding the port free and the child process listening on it (seconds,
// for a server opening its embedded database) an outgoing connection of another test could take it, and the server
// then failed with EADDRINUSE. So the port is picked below that range, at random, and checked by listening on it.
import { readFileSync } from 'node:fs';
import net from 'node:net';

const LOWEST = 10_000;

/** The first port of the system's ephemeral range (Linux's default when it cannot be read). */
function ephemeralStart(): number {
  try {
    const first = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(first) && first > LOWEST ? first : 32_768;
  } catch {
    return 32_768;
  }
}

const below = ephemeralStart();
const handedOut = new Set<number>();

function listenOn(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address() as net.AddressInfo;
      server.close(() => resolve(address.port));
    });
  });
}

export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50 && below - LOWEST > 100; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (below - LOWEST));
    if (handedOut.has(port)) continue;
    if ((await listenOn(port)) !== null) {
      handedOut.add(port);
      return port;
    }
  }
  // Nothing free below the ephemeral range: any port the system gives.
  const port = await listenOn(0);
  if (port === null) throw new Error('no free loopback port');
  return port;
}
