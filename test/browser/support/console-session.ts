import type { Browser, Page } from 'puppeteer-core';
import type { AdmissionConfig } from '../../../src/admission/admission-config';
import { RecordingLogger } from '../../e2e/support/harness';
import { startReferenceService, type ReferenceService } from '../../e2e/support/reference-service';
import { createFreshDatabase, type FreshDatabase } from '../../support/fresh-database';
import { launchChromium } from './chromium';
import { PageWatch } from './page-watch';

/** The reference service on a fresh migrated database, and a headless Chromium page signed in as its operator. */
export interface ConsoleSession {
  readonly logger: RecordingLogger;
  readonly service: ReferenceService;
  readonly page: Page;
  /** The page's console errors and failed requests. */
  readonly watch: PageWatch;
}

/**
 * Registers `beforeAll`/`afterAll` hooks that start the reference service with `admission` and open a
 * page carrying the operator's demo cookie (the page's fetches and EventSources send it: the operator
 * sees every run, the denials and the traces); the returned object is filled in once the hooks ran.
 */
export function useConsoleSession(admission: AdmissionConfig): ConsoleSession {
  const session = { logger: new RecordingLogger() } as { logger: RecordingLogger; service: ReferenceService; page: Page; watch: PageWatch };
  let database: FreshDatabase | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    database = await createFreshDatabase();
    session.service = await startReferenceService({ databaseUrl: database.url, admission, logDecisions: false }, session.logger);
    browser = await launchChromium();
    session.page = await browser.newPage();
    await session.page.setCookie({ name: 'reference_token', value: 'operator-token', url: session.service.http.baseUrl });
    session.watch = new PageWatch(session.page);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await session.service?.app.close();
    await database?.drop();
  });
  return session;
}
