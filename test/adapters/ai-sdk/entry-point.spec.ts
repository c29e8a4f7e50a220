import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

const root = path.resolve(__dirname, '../../..');

/**
 * Requires `entry` in a fresh Node process (the package as built by the Jest global setup) and
 * answers every module request it made that names the AI SDK or this adapter.
 */
function aiRequestsOf(entry: string): string[] {
  const script = `
    const Module = require('node:module');
    const seen = [];
    const resolve = Module._resolveFilename;
    Module._resolveFilename = function (request, ...rest) { seen.push(request); return resolve.call(this, request, ...rest); };
    const loaded = require(${JSON.stringify(entry)});
    if (typeof loaded !== 'object' || loaded === null) throw new Error('nothing exported');
    process.stdout.write(JSON.stringify(seen.filter((r) => r === 'ai' || r.startsWith('ai/') || r.startsWith('@ai-sdk/') || r.includes('adapters/ai-sdk') || r.endsWith('/ai-sdk'))));
  `;
  const child = spawnSync(process.execPath, ['-e', script], { cwd: root, encoding: 'utf8' });
  if (child.status !== 0) throw new Error(`node exited ${child.status}: ${child.stderr}`);
  return JSON.parse(child.stdout) as string[];
}

describe('nest-agent-runtime/ai-sdk entry point', () => {
  it('is not loaded by the core entry point, which never requests ai either', () => {
    expect(aiRequestsOf('./dist/src/index.js')).toEqual([]);
  });

  it('resolves through the package exports and loads no ai module at run time', () => {
    expect(aiRequestsOf('nest-agent-runtime/ai-sdk')).toEqual(['nest-agent-runtime/ai-sdk']);
    const exported = spawnSync(process.execPath, ['-p', "Object.keys(require('nest-agent-runtime/ai-sdk')).sort().join(',')"], { cwd: root, encoding: 'utf8' });
    expect(exported.stdout.trim()).toBe('guardTools,isToolDenial,runtimeSafetyMiddleware,withAdmission');
  });
});
