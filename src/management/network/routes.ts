/**
 * M22 POST network-bans/retrieve, M23 DELETE network-bans (bans are made by the gateway,
 * src/platform/network-guard.ts), M24 GET network-restrictions, M25 POST network-restrictions/apply.
 */
import ipaddr from 'ipaddr.js';
import { Type } from '@sinclair/typebox';
import type { ManagementModule } from '../http/index.js';
import { badRequest, badRequestOn, projectOf } from '../http/index.js';
import { optionalBody, oneMessage } from '../http/schemas.js';
import { normalizeIp } from '../../platform/network-bans.js';
import { CidrError } from './cidr.js';
import { patchRestrictions } from './restrictions-patch.js';
import { parseRestrictionRequest } from './restrictions.js';

const UnbanBody = Type.Object({
  ipv4_addresses: Type.Array(Type.Unknown(), {
    messages: oneMessage('ipv4_addresses must be an array of IPv4 addresses', []),
  }),
  requester_ip: Type.Optional(Type.Boolean({ messages: { type: 'requester_ip must be a boolean value' } })),
  identifier: Type.Optional(Type.String({ messages: { type: 'identifier must be a string' } })),
});

/** Bodies of the restriction routes: objects, whose CIDR lists restrictions*.ts check. */
const RestrictionsBody = Type.Record(Type.String(), Type.Unknown());

/** The addresses to unban: IPv4 as the spec says (IPv6 accepted too, for servers listening on IPv6). */
function addressList(v: unknown[]): string[] {
  return v.map((item) => {
    const text = typeof item === 'string' ? item.trim() : '';
    if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text).toString();
    const v6 = text.includes(':') && ipaddr.IPv6.isValid(text) ? normalizeIp(text) : undefined;
    if (v6 !== undefined) return v6;
    throw badRequest(`Invalid IPv4 address: ${String(item)}`);
  });
}

/** NetworkBanResponse; IPv6 bans (only possible when the platform listens on IPv6) in a non-spec field. */
function banListResponse(list: { v4: string[]; v6: string[] }): {
  banned_ipv4_addresses: string[];
  banned_ipv6_addresses?: string[];
} {
  return list.v6.length
    ? { banned_ipv4_addresses: list.v4, banned_ipv6_addresses: list.v6 }
    : { banned_ipv4_addresses: list.v4 };
}

export const networkRoutes: ManagementModule = async (app, { services }) => {
  const { bans, restrictions } = services;
  // pg_hba.conf of the servers the platform runs follows the platform database from the start.
  app.addHook('onReady', async () => {
    await restrictions
      .syncServers()
      .catch((err: unknown) =>
        app.log.error(
          `network restrictions: pg_hba.conf sync failed: ${err instanceof Error ? err.message : String(err)}`,
        ),
      );
  });

  app.post(
    '/projects/:ref/network-bans/retrieve',
    { config: { failureMessage: "Failed to retrieve project's network bans" } },
    async (req, reply) => reply.code(201).send(banListResponse(await bans.list(projectOf(req).ref))),
  );

  app.delete(
    '/projects/:ref/network-bans',
    { schema: { body: UnbanBody }, config: { failureMessage: 'Failed to remove network bans.' } },
    async (req, reply) => {
      const ips = addressList(req.body.ipv4_addresses);
      if (req.body.requester_ip === true) {
        const own = normalizeIp(req.ip);
        if (own) ips.push(own);
      }
      await bans.remove(projectOf(req).ref, ips);
      return reply.code(200).send();
    },
  );

  app.get(
    '/projects/:ref/network-restrictions',
    { config: { failureMessage: "Failed to retrieve project's network restrictions" } },
    async (req) => restrictions.get(projectOf(req).ref),
  );

  app.post(
    '/projects/:ref/network-restrictions/apply',
    {
      ...optionalBody(RestrictionsBody),
      config: { failureMessage: 'Failed to update project network restrictions' },
    },
    async (req, reply) => {
      const config = await badRequestOn([CidrError], () => parseRestrictionRequest(req.body));
      return reply.code(201).send(await restrictions.apply(projectOf(req).ref, config));
    },
  );

  // Adjacent to M25 (CLI `network-restrictions update --append`): add/remove CIDRs, V2 answer shape.
  app.patch(
    '/projects/:ref/network-restrictions',
    {
      schema: { body: RestrictionsBody },
      config: { failureMessage: 'Failed to update project network restrictions' },
    },
    async (req) => {
      return badRequestOn([CidrError], () => patchRestrictions(restrictions, projectOf(req).ref, req.body));
    },
  );
};
