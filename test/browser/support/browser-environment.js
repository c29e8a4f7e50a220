'use strict';
// The browser suite's Jest environment: Node's, plus `loadPuppeteer()`. puppeteer-core ships ES
// modules only, which Jest's CommonJS runtime cannot require on Node 20; this file runs outside the
// test sandbox, where Node's own require loads ES modules (Node >= 20.19), so tests get it from here.
const { TestEnvironment } = require('jest-environment-node');

class BrowserTestEnvironment extends TestEnvironment {
  async setup() {
    await super.setup();
    this.global.loadPuppeteer = () => require('puppeteer-core');
  }
}

module.exports = BrowserTestEnvironment;
