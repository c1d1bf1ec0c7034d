import { createServer } from 'node:net';

function tryPort(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** `preferred` if it is free on 127.0.0.1, else a free port the OS picks. */
export async function findFreePort(preferred: number, host = '127.0.0.1'): Promise<number> {
  if (preferred > 0 && (await tryPort(preferred, host))) return preferred;
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen({ port: 0, host }, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}
