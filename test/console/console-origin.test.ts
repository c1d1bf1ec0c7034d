/**
 * The console's own origin without a browser: its port setting (STRATA_CONSOLE_PORT, default
 * 54323, `off`), and a page request by a Host that is not a plain host name (it would go into the
 * page's CSP and API origin) refused with 400 rather than echoed.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configFromEnv } from '../../src/config.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';

let tp: TestPlatform;

beforeAll(async () => {
  tp = await startTestPlatform();
}, 120_000);

afterAll(async () => {
  await tp?.close();
});

function getWithHost(url: string, host: string): Promise<{ status: number; csp?: string; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: '/', headers: { host } }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          csp: res.headers['content-security-policy'] as string | undefined,
          body,
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('console origin', () => {
  it('is on port 54323 by default, any free port with 0, none with off; a bad value is refused', () => {
    expect(configFromEnv({}).consolePort).toBe(54323);
    expect(configFromEnv({ STRATA_CONSOLE_PORT: '0' }).consolePort).toBe(0);
    expect(configFromEnv({ STRATA_CONSOLE_PORT: 'off' }).consolePort).toBeUndefined();
    expect(() => configFromEnv({ STRATA_CONSOLE_PORT: 'x' })).toThrow(
      /STRATA_CONSOLE_PORT must be a port number/,
    );
  });

  it('names the API origin of the host name it was opened by', async () => {
    const port = new URL(tp.url).port;
    const page = await getWithHost(
      tp.consoleUrl as string,
      `localhost:${new URL(tp.consoleUrl as string).port}`,
    );
    expect(page.status).toBe(200);
    expect(page.csp).toContain(`connect-src 'self' http://localhost:${port} ws://localhost:${port};`);
    expect(page.body).toContain(`<meta name="strata-api-origin" content="http://localhost:${port}" />`);
  });

  it('refuses a Host that is not a plain host name instead of writing it into the page', async () => {
    for (const host of ["evil.example'; script-src *", 'a b', 'x"><script>', 'a:b:c']) {
      const page = await getWithHost(tp.consoleUrl as string, host);
      expect([host, page.status]).toEqual([host, 400]);
      expect(page.body).not.toContain('script-src *');
      expect(page.csp).not.toContain('script-src');
    }
  });

  it('without a console, the API origin says so instead of redirecting', async () => {
    const off = await startTestPlatform({ consolePort: undefined });
    try {
      expect(off.consoleUrl).toBeUndefined();
      const res = await fetch(`${off.url}/`, { redirect: 'manual' });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ message: 'No console on this server' });
    } finally {
      await off.close();
    }
  }, 120_000);
});

describe('console port taken', () => {
  it('refuses to start, saying which setting to change', async () => {
    const taken = new URL(tp.consoleUrl as string).port;
    await expect(startTestPlatform({ consolePort: Number(taken) })).rejects.toThrow(
      `The console's port ${taken} is in use: choose another with STRATA_CONSOLE_PORT or --console-port`,
    );
  }, 120_000);
});
