/**
 * What every serving form calls: one request in (method, URL, headers, body bytes, how to find
 * its project), one answer out. The direct POST path serves the common request; yoga the rest.
 */
import type { CancelSignal } from '../../db/cancel-request.js';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { answerDirect, directGetParams, directParams, type HttpAnswer } from './direct-post.js';
import type { StrataServerContext } from './engine-plugin.js';
import { fetchRequest } from './fetch-exchange.js';
import {
  DEFAULT_MAX_BODY_BYTES,
  limitsOf,
  schemaNoticesOf,
  type GraphQLHandlerOptions,
  type GraphQLTarget,
  type RequestLimits,
} from './options.js';
import type { StrataYoga } from './yoga-server.js';

export type { HttpAnswer };

/**
 * A signal aborted when `res` closes before its answer was written: the client went away. A class
 * rather than an AbortController: this is made for every request, and an AbortSignal costs several
 * microseconds to create.
 */
class ClosedBeforeAnswer implements CancelSignal {
  aborted = false;
  private listeners: Set<() => void> | undefined;

  constructor(res: ServerResponse) {
    res.once('close', () => {
      if (res.writableFinished) return;
      this.aborted = true;
      const called = this.listeners;
      this.listeners = undefined;
      for (const listener of called ?? []) listener();
    });
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.aborted) return;
    this.listeners ??= new Set();
    this.listeners.add(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    this.listeners?.delete(listener);
  }
}

export function abortedWhenClosed(res: ServerResponse): CancelSignal {
  return new ClosedBeforeAnswer(res);
}

export type TargetResolver = () => GraphQLTarget | undefined | Promise<GraphQLTarget | undefined>;

export class GraphQLCore {
  private yogaServer?: Promise<StrataYoga>;
  readonly maxBodyBytes: number;
  readonly limits: RequestLimits;
  private readonly logErrors: boolean;
  private readonly onCatalogNotices: ((notices: string[]) => void) | undefined;

  constructor(
    readonly endpoint: string,
    private readonly opts: GraphQLHandlerOptions,
  ) {
    this.maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.limits = limitsOf(opts);
    this.logErrors = opts.logging !== false;
    this.onCatalogNotices = schemaNoticesOf(opts);
  }

  /**
   * The graphql-yoga server, loaded and built on first use: the direct POST path (most traffic)
   * never needs it, and not loading it saves ~15 MB of resident memory.
   */
  yoga(): Promise<StrataYoga> {
    this.yogaServer ??= import('./yoga-server.js').then((m) => m.createStrataYoga(this.endpoint, this.opts));
    return this.yogaServer;
  }

  async answer(
    method: string,
    url: string | undefined,
    headers: IncomingHttpHeaders,
    body: Buffer | string | undefined,
    target: TargetResolver,
    /** Aborted when the client is gone (see `abortedWhenClosed`). */
    signal?: CancelSignal,
  ): Promise<HttpAnswer> {
    const post = directParams(method, headers, body);
    const params = post ?? directGetParams(method, url, headers);
    if (params) {
      return answerDirect(
        params,
        headers,
        target,
        {
          limits: this.limits,
          onUnexpectedError: (err) => {
            if (this.logErrors) console.error('[strata graphql]', err);
          },
          onCatalogNotices: this.onCatalogNotices,
        },
        post ? 'POST' : 'GET',
        signal,
      );
    }
    const ctx: StrataServerContext = { strataTarget: target, strataSignal: signal };
    const yoga = await this.yoga();
    const response = await yoga.fetch(fetchRequest(yoga, this.endpoint, method, url, headers, body), ctx);
    const out: Record<string, string> = {};
    response.headers.forEach((value, key) => {
      out[key] = value;
    });
    return {
      status: response.status,
      headers: out,
      body: response.body ? Buffer.from(await response.arrayBuffer()) : undefined,
    };
  }
}
