import type { Page } from 'puppeteer-core';

/**
 * Collects what the page reports as going wrong: console errors and uncaught exceptions. A request
 * the page itself aborts (an EventSource it closed) is not an error.
 */
export class PageWatch {
  readonly errors: string[] = [];

  constructor(page: Page) {
    page.on('console', (message) => {
      if (message.type() === 'error') this.errors.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => this.errors.push(`pageerror: ${error instanceof Error ? error.message : String(error)}`));
  }
}
