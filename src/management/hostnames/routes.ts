/**
 * M15–M19 custom hostname: GET, DELETE, POST initialize / reverify / activate (spec §4). Once
 * active, requests with that Host reach the project's APIs (host-routing.ts).
 * initialize, reverify and delete are limited to 10 requests per minute (spec §1).
 */
import { Type } from '@sinclair/typebox';
import type { ManagementModule } from '../http/index.js';
import { badRequestOn, projectOf } from '../http/index.js';
import { oneMessage } from '../http/schemas.js';
import { hostnameResponse } from './hostname-response.js';
import {
  activateHostname,
  getConfig,
  initializeHostname,
  removeHostname,
  reverifyHostname,
} from './hostname-service.js';
import { HostnameStateError } from './state-machine.js';

const STRICT = { max: 10, windowMs: 60_000 };

const InitializeBody = Type.Object({
  custom_hostname: Type.String({
    minLength: 1,
    maxLength: 253,
    messages: oneMessage('custom_hostname must be a string of 1 to 253 characters', [
      'minLength',
      'maxLength',
    ]),
  }),
});

/** A request the hostname's current state does not allow is a 400. */
function stateErrorsAs400<T>(work: () => Promise<T>): Promise<T> {
  return badRequestOn([HostnameStateError], work);
}

export const hostnameRoutes: ManagementModule = async (app, { platform, services }) => {
  const router = services.hostnames;

  app.get(
    '/projects/:ref/custom-hostname',
    { config: { failureMessage: "Failed to retrieve project's custom hostname config" } },
    async (req) => hostnameResponse(await stateErrorsAs400(() => getConfig(platform, projectOf(req).ref))),
  );

  app.delete(
    '/projects/:ref/custom-hostname',
    {
      config: {
        failureMessage: 'Failed to delete project custom hostname configuration',
        managementRateLimit: STRICT,
      },
    },
    async (req, reply) => {
      await removeHostname(platform, router, projectOf(req).ref);
      return reply.code(200).send();
    },
  );

  app.post(
    '/projects/:ref/custom-hostname/initialize',
    {
      schema: { body: InitializeBody },
      config: {
        failureMessage: 'Failed to update project custom hostname configuration',
        managementRateLimit: STRICT,
      },
    },
    async (req, reply) => {
      const record = await stateErrorsAs400(() =>
        initializeHostname(platform, projectOf(req).ref, req.body.custom_hostname),
      );
      return reply.code(201).send(hostnameResponse(record));
    },
  );

  app.post(
    '/projects/:ref/custom-hostname/reverify',
    {
      config: {
        failureMessage: 'Failed to verify project custom hostname configuration',
        managementRateLimit: STRICT,
      },
    },
    async (req, reply) =>
      reply
        .code(201)
        .send(hostnameResponse(await stateErrorsAs400(() => reverifyHostname(platform, projectOf(req).ref)))),
  );

  app.post(
    '/projects/:ref/custom-hostname/activate',
    { config: { failureMessage: 'Failed to activate project custom hostname configuration' } },
    async (req, reply) =>
      reply
        .code(201)
        .send(
          hostnameResponse(
            await stateErrorsAs400(() => activateHostname(platform, router, projectOf(req).ref)),
          ),
        ),
  );
};
