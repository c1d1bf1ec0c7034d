/** Request log serializer for Storage routes: tokens in query strings never reach the log. */
import type { FastifyRequest } from 'fastify';

const SECRET_PARAMS = /([?&](?:token|authorization|apikey)=)[^&#]*/gi;

export function redactUrl(url: string): string {
  return url.replace(SECRET_PARAMS, '$1[redacted]');
}

export function serializeRequest(req: FastifyRequest): Record<string, unknown> {
  return {
    method: req.method,
    url: redactUrl(req.url),
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}
