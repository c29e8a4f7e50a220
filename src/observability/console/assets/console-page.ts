/** Where the page's requests go: the console's own routes and the package's routes (`/runs`, ...). */
export interface ConsolePageBases {
  /** The console's path as the browser reached it, global prefix included, e.g. `/api/console`. */
  readonly consoleBase: string;
  /** The application's global prefix (`''` without one): the package's routes are below it. */
  readonly apiBase: string;
}

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function attribute(value: string): string {
  return value.replace(/[&<>"']/g, (character) => ESCAPES[character]);
}

/**
 * The console's HTML: structure only. Every value on it is filled in by `console.js` through
 * `textContent`; the two bases are the only data in the markup, as escaped attributes.
 */
export function consolePage(bases: ConsolePageBases): string {
  const base = attribute(bases.consoleBase);
  return `<!doctype html>
<html lang="en" data-console-base="${base}" data-api-base="${attribute(bases.apiBase)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Agent runtime console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${base}/console.css">
<script src="${base}/console.js" defer></script>
</head>
<body>
<header>
  <h1>Agent runtime console</h1>
  <span id="connection" class="badge">connecting</span>
</header>
<main>
  <section id="admission-panel">
    <h2>Admission</h2>
    <p class="summary">
      active <strong id="admission-active">-</strong> of <span id="admission-limit">-</span>,
      available <span id="admission-available">-</span>,
      queued <strong id="admission-queued">-</strong> of <span id="admission-max-queue">-</span>,
      overflow <span id="admission-overflow">-</span>, <span id="admission-draining">-</span>,
      cost in use <span id="admission-cost">-</span>
    </p>
    <table id="admission-agents"><thead><tr><th>agent</th><th>active</th><th>queued</th><th>limit</th><th>effective limit</th><th>cost in use</th></tr></thead><tbody></tbody></table>
    <p class="empty" id="admission-empty">No agent has active or queued work.</p>
    <div id="admission-tenants-panel" hidden>
      <h3>Tenants (most work first)</h3>
      <table id="admission-tenants"><thead><tr><th>tenant</th><th>active</th><th>queued</th><th>limit</th><th>cost in use</th></tr></thead><tbody></tbody></table>
      <p class="empty" id="admission-tenants-empty">No tenant has active or queued work.</p>
    </div>
  </section>
  <section id="confirmations-panel">
    <h2>Pending confirmations</h2>
    <table id="confirmations"><thead><tr><th>run</th><th>call</th><th>tool</th><th></th></tr></thead><tbody></tbody></table>
    <p class="empty" id="confirmations-empty">None.</p>
    <p id="confirmation-result" class="note"></p>
  </section>
  <section id="runs-panel" class="wide">
    <h2>Runs</h2>
    <table id="runs"><thead><tr><th>run</th><th>agent</th><th>status</th><th>pending</th><th>events</th><th>error</th><th>updated</th></tr></thead><tbody></tbody></table>
    <p class="empty" id="runs-empty">No runs yet.</p>
  </section>
  <section id="run-panel" class="wide">
    <h2>Run events <span id="run-selected" class="mono"></span> <span id="run-status" class="status"></span></h2>
    <p class="empty" id="run-hint">Choose a run to follow its event stream.</p>
    <ol id="run-event-list"></ol>
  </section>
  <section id="policy-panel">
    <h2>Policy denials</h2>
    <p class="summary">Audit chain: <span id="audit-result">not verified</span> <button type="button" id="audit-verify">Verify</button></p>
    <table id="denials"><thead><tr><th>time</th><th>operation</th><th>subject</th><th>reason</th><th>decision</th></tr></thead><tbody></tbody></table>
    <p class="empty" id="denials-empty">No denials recorded.</p>
  </section>
  <section id="evaluations-panel">
    <h2>Evaluations</h2>
    <p class="summary">
      <label>baseline <input id="baseline-name" value="main" size="12" maxlength="128"></label>
      <button type="button" id="evaluations-refresh">Refresh</button>
    </p>
    <table id="evaluations"><thead><tr><th>job</th><th>set</th><th>agent</th><th>phase</th><th>result</th><th></th></tr></thead><tbody></tbody></table>
    <p class="empty" id="evaluations-empty">No evaluation jobs.</p>
    <div id="comparison"></div>
  </section>
  <section id="traces-panel" class="wide">
    <h2>Traces <small>(the principal the application resolves for this request)</small></h2>
    <form id="trace-form" class="summary">
      <label>run id <input id="trace-run-id" size="32" maxlength="128" placeholder="all"></label>
      <button type="submit" id="trace-query">Query</button>
      <span id="trace-result" class="note"></span>
    </form>
    <table id="traces"><thead><tr><th>cursor</th><th>time</th><th>kind</th><th>event</th><th>run</th></tr></thead><tbody></tbody></table>
  </section>
</main>
</body>
</html>
`;
}
