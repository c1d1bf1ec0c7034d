/** Per-route options the management hooks read from a route's `config`. */

export interface RateLimitPolicy {
  /** Requests per window for this route (default: platform.config.rateLimitMax). */
  max?: number;
  /** Window length in ms (default: platform.config.rateLimitWindowMs). */
  windowMs?: number;
  /**
   * The scope of the counter: by default the project (`:ref` in the path), the organization
   * (`:slug`) or the caller. Return a string to choose another (POST /v1/projects uses the body's organization).
   */
  scope?: (req: import('fastify').FastifyRequest) => string | undefined;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Text of a 500 answer for this operation (the spec's per-operation description). */
    failureMessage?: string;
    /** Rate limit of this route; `false` turns it off. */
    managementRateLimit?: RateLimitPolicy | false;
    /** Routes that work without a personal access token (none of the reference's routes). */
    managementPublic?: boolean;
  }
}
