// Child process of run.mjs: the floor — the same hello-world handler on plain node:http.
import { createServer } from 'node:http';

const server = createServer((_req, res) => {
  const body = JSON.stringify({ message: 'Hello World' });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  const a = server.address();
  process.send?.({ url: `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}` });
});
process.on('message', (m) => {
  if (m === 'cpu') {
    const { user, system } = process.cpuUsage();
    process.send?.({ cpu: user + system });
  }
  if (m === 'stop') server.close(() => process.exit(0));
});
