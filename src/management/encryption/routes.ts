/**
 * M20 GET / M21 PUT /v1/projects/{ref}/pgsodium: the project's encryption root key, which keys the
 * project's vault (see root-key.ts and sql/project/0200_vault.sql).
 */
import type { ManagementModule } from '../http/index.js';
import { badRequest, objectBody, projectOf } from '../http/index.js';
import { ensureRootKey, isValidRootKey, replaceRootKey, ROOT_KEY_MESSAGE } from './root-key.js';
import { startRootKeyProvisioning, type Provisioner } from './provisioning.js';

const started = new WeakSet<object>();

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
    { config: { failureMessage: "Failed to update project's pgsodium config" } },
    async (req) => {
      const project = projectOf(req);
      const body = objectBody(req.body);
      if (!isValidRootKey(body.root_key)) throw badRequest(ROOT_KEY_MESSAGE);
      return { root_key: await replaceRootKey(platform, project.ref, body.root_key) };
    },
  );
};
