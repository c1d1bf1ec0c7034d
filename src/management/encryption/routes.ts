/**
 * GET / PUT /v1/projects/{ref}/pgsodium: the project's encryption root key, which keys the
 * project's vault (see root-key.ts and sql/project/0200_vault.sql).
 */
import { Type } from '@sinclair/typebox';
import type { ManagementModule } from '../http/index.js';
import { projectOf } from '../http/index.js';
import { oneMessage } from '../http/schemas.js';
import { ensureRootKey, replaceRootKey, ROOT_KEY_MESSAGE, ROOT_KEY_PATTERN } from './root-key.js';
import { startRootKeyProvisioning, type Provisioner } from './provisioning.js';

const started = new WeakSet<object>();

const RootKeyBody = Type.Object({
  root_key: Type.String({ pattern: ROOT_KEY_PATTERN, messages: oneMessage(ROOT_KEY_MESSAGE, ['pattern']) }),
});

export const encryptionRoutes: ManagementModule = async (app, { platform }) => {
  if (!started.has(platform)) {
    started.add(platform);
    let provisioner: Provisioner | undefined;
    app.addHook('onReady', async () => {
      provisioner = await startRootKeyProvisioning(platform, (m) => app.log.warn(m));
    });
    app.addHook('onClose', async () => {
      await provisioner?.close();
      started.delete(platform);
    });
  }

  app.get(
    '/projects/:ref/pgsodium',
    { config: { failureMessage: "Failed to retrieve project's pgsodium config" } },
    async (req) => {
      const project = projectOf(req);
      return { root_key: await ensureRootKey(platform, project.ref) };
    },
  );

  app.put(
    '/projects/:ref/pgsodium',
    {
      schema: { body: RootKeyBody },
      config: { failureMessage: "Failed to update project's pgsodium config" },
    },
    async (req) => {
      const project = projectOf(req);
      return { root_key: await replaceRootKey(platform, project.ref, req.body.root_key) };
    },
  );
};
