import { afterAll, beforeAll, expect, it } from 'vitest';
import { axeCheck, openPage, settled } from './support/browser.js';
import { startConsoleService, type ConsoleService } from './support/console-service.js';

// A webhook's page rotates its secret, in a real browser against `edgewatch serve`: the new secret is shown
// once, with the time the old one stops signing (docs/rules/webhooks.md#secret-rotation).

let service: ConsoleService;

beforeAll(async () => {
  service = await startConsoleService('rotate', {});
}, 120_000);

afterAll(async () => {
  await service?.close();
});

it('rotates the secret from the webhook page and shows the new one once', async () => {
  const hook = await service.call('/api/v1/webhook', {
    name: 'Rotating',
    url: 'https://hooks.example.com/rotating',
  });
  const test = await openPage(service.browser, { signedInWith: service.adminKey });
  try {
    const ui = test.page;
    await ui.goto(`${service.server.baseUrl}/#/webhooks/${hook.id}`);
    await settled(ui, 'Rotating');
    await ui.getByRole('button', { name: 'Rotate secret' }).click();
    const dialog = ui.getByRole('dialog', { name: 'Rotate the secret of Rotating' });
    await dialog.getByLabel('The old secret keeps signing for').selectOption('604800');
    await dialog.getByRole('button', { name: 'Rotate', exact: true }).click();
    const secret = await dialog.getByLabel('New signing secret').innerText();
    expect(secret).toMatch(/^whsec_/);
    await dialog.getByText('The old secret signs too until').waitFor();
    await axeCheck(ui, 'a rotated secret');

    // What the dialog showed is the secret that signs now; the one before it signs for a week more.
    const row = await service.ctx.db
      .selectFrom('webhooks')
      .selectAll()
      .where('id', '=', hook.id as string)
      .executeTakeFirstOrThrow();
    expect(service.ctx.secretBox.open(row.secret_sealed)).toBe(secret);
    expect(service.ctx.secretBox.open(row.previous_secret_sealed!)).toBe(hook.secret);
    expect(row.previous_secret_expires_at! - Date.now()).toBeGreaterThan(6 * 86_400_000);
    expect(test.problems).toEqual([]);
  } finally {
    await test.context.close();
  }
});
