/**
 * A minimal load balancer for the cluster test, doing what deploy/haproxy.cfg does: round robin
 * over the current nodes, and a request whose connection failed before any answer (refused, or
 * closed while idle by a stopping node, so the request was never read) goes to the next node. An answer, once started, is passed
 * on as it is.
 */
import { Agent, type IncomingMessage, type Server, createServer, request } from 'node:http';

export interface RetryingProxy {
  url: string;
  /** The nodes' base URLs (http://host:port), replaced as nodes come and go. */
  setTargets(urls: string[]): void;
  close(): Promise<void>;
}

export async function startRetryingProxy(targets: string[]): Promise<RetryingProxy> {
  let current = [...targets];
  let next = 0;
  const agent = new Agent({ keepAlive: true });
  const forward = (target: string, req: IncomingMessage, body: Buffer, reuse: boolean) =>
    new Promise<IncomingMessage>((resolve, reject) => {
      const u = new URL(target);
      const out = request(
        {
          host: u.hostname,
          port: Number(u.port),
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: u.host },
          // A retry opens a fresh connection: a kept-alive one may have been closed meanwhile.
          agent: reuse ? agent : false,
        },
        resolve,
      );
      out.on('error', reject);
      out.end(body);
    });
  const server: Server = createServer(async (req, res) => {
    // Each node twice at most (haproxy.cfg: retries 2, redispatch), starting with the next in turn.
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const tried: string[] = [];
    const first = next++;
    for (let attempt = 0; attempt < 2 * current.length; attempt++) {
      // The current list each time: nodes may have been replaced since the request came in.
      const target = current[(first + attempt) % current.length];
      if (!target) break;
      try {
        const answer = await forward(target, req, body, attempt === 0);
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        return;
      } catch (err) {
        tried.push(`${target}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`no node answered: ${tried.join('; ')}`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    setTargets(urls) {
      current = [...urls];
    },
    async close() {
      agent.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(() => r(undefined)));
    },
  };
}
