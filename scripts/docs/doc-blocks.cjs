'use strict';
/**
 * The fenced code blocks of the README and of docs/*.md, with where they start and the markers written
 * right above them. Shared by the TypeScript check (`check-docs.mjs`) and the shell-example test
 * (`test/docs/shell-examples.spec.ts`).
 *
 * A marker is an HTML comment on the line(s) just above the opening fence, `<!-- name: text -->`:
 * - `<!-- partial: why -->` on a ```ts block: not type-checked (a fragment on purpose); listed by name;
 * - `<!-- not-run: why -->` on a ```console block: not run against the reference service;
 * - `<!-- env: NAME=value NAME=value -->` on a ```console block: run against a reference service started
 *   with those environment variables.
 */
const { readdirSync, readFileSync, existsSync } = require('node:fs');
const { join } = require('node:path');

/** `README.md` and every `docs/*.md`, relative to `root`, in a stable order. */
function docFiles(root) {
  const docs = existsSync(join(root, 'docs'))
    ? readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)
    : [];
  return ['README.md', ...docs];
}

/**
 * Every fenced block (```lang … ```) of `file`, as `{file, line, lang, code, markers}`: `line` is the
 * 1-based line of the opening fence, `code` the lines between the fences, `markers` the name → text of
 * the marker comments just above the fence.
 */
function blocksOf(root, file) {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const blocks = [];
  for (let index = 0; index < lines.length; index++) {
    const open = /^(\s*)(`{3,})([\w-]*)\s*$/.exec(lines[index]);
    if (!open) continue;
    const [, indent, fence, lang] = open;
    const body = [];
    let end = index + 1;
    while (end < lines.length && lines[end].trim() !== fence) body.push(lines[end++].slice(indent.length));
    blocks.push({ file, line: index + 1, lang, code: body.join('\n'), markers: markersAbove(lines, index) });
    index = end;
  }
  return blocks;
}

function markersAbove(lines, fenceIndex) {
  const markers = {};
  for (let index = fenceIndex - 1; index >= 0; index--) {
    const marker = /^\s*<!--\s*([\w-]+):\s*(.*?)\s*-->\s*$/.exec(lines[index]);
    if (!marker) break;
    markers[marker[1]] = marker[2];
  }
  return markers;
}

/** The blocks of every doc file whose language is one of `langs`. */
function docBlocks(root, langs) {
  return docFiles(root).flatMap((file) => blocksOf(root, file)).filter((block) => langs.includes(block.lang));
}

module.exports = { docFiles, blocksOf, docBlocks };
