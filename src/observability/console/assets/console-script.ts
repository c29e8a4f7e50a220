import { ADMISSION_SCRIPT } from './console-admission-script';

/**
 * The console's browser script, served as `<path>/console.js` (the page's CSP allows scripts from
 * its own origin only, never inline). It renders every value with `textContent`, never as markup.
 * Plain ES2017 without template literals, so it can live in this TypeScript string unchanged.
 */
export const CONSOLE_SCRIPT =
  String.raw`'use strict';
(function () {
  var root = document.documentElement;
  var consoleBase = root.getAttribute('data-console-base') || '';
  var apiBase = root.getAttribute('data-api-base') || '';
  var RUN_ITEM_TYPES = ['event', 'paused', 'resumed', 'resume_failed', 'terminal'];
  var followed = null;

  function byId(id) { return document.getElementById(id); }
  function setText(node, value) { node.textContent = value === null || value === undefined ? '' : String(value); }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  function time(ms) { return typeof ms === 'number' && ms > 0 ? new Date(ms).toISOString().slice(11, 23) : ''; }
  function shortId(id) { return typeof id === 'string' && id.length > 16 ? id.slice(0, 12) + '...' : id; }

  function cell(content, className) {
    var td = document.createElement('td');
    if (content instanceof Node) td.appendChild(content); else setText(td, content);
    if (className) td.className = className;
    return td;
  }

  function button(label, className, onClick) {
    var b = document.createElement('button');
    b.type = 'button';
    b.className = className;
    setText(b, label);
    b.addEventListener('click', onClick);
    return b;
  }

  function fillTable(tableId, emptyId, rows) {
    var body = byId(tableId).tBodies[0];
    clear(body);
    rows.forEach(function (tr) { body.appendChild(tr); });
    byId(emptyId).hidden = rows.length > 0;
  }

  function request(url, init) {
    var options = Object.assign({ credentials: 'same-origin', headers: { accept: 'application/json' } }, init || {});
    return fetch(url, options).then(function (response) {
      return response.text().then(function (text) {
        var body = null;
        try { body = text ? JSON.parse(text) : null; } catch (ignored) { body = null; }
        return { status: response.status, body: body };
      });
    });
  }

  function errorText(answer) {
    var code = answer.body && typeof answer.body.code === 'string' ? answer.body.code : 'error';
    return answer.status + ' ' + code;
  }

` +
  ADMISSION_SCRIPT +
  String.raw`
  function renderRuns(runs) {
    byId('runs-panel').hidden = runs === null;
    if (runs === null) return;
    fillTable('runs', 'runs-empty', runs.map(function (run) {
      var tr = document.createElement('tr');
      tr.setAttribute('data-run-id', run.run_id);
      if (followed && followed.runId === run.run_id) tr.className = 'selected';
      tr.appendChild(cell(button(shortId(run.run_id), 'follow mono', function () { follow(run.run_id); })));
      tr.appendChild(cell(run.agent));
      tr.appendChild(cell(run.status, 'status status-' + run.status));
      tr.appendChild(cell(run.pending_call_ids.join(', ')));
      tr.appendChild(cell(run.last_seq));
      tr.appendChild(cell(run.error_code || ''));
      tr.appendChild(cell(time(run.updated_at_ms)));
      return tr;
    }));
  }

  function renderConfirmations(confirmations) {
    byId('confirmations-panel').hidden = confirmations === null;
    if (confirmations === null) return;
    fillTable('confirmations', 'confirmations-empty', confirmations.map(function (pending) {
      var tr = document.createElement('tr');
      tr.setAttribute('data-run-id', pending.run_id);
      tr.setAttribute('data-call-id', pending.call_id);
      tr.appendChild(cell(shortId(pending.run_id), 'mono'));
      tr.appendChild(cell(pending.call_id, 'mono'));
      tr.appendChild(cell(pending.tool === null ? '(unknown)' : pending.tool));
      var actions = document.createElement('span');
      actions.appendChild(button('Approve', 'approve', function () { decide(pending, true); }));
      actions.appendChild(button('Reject', 'reject', function () { decide(pending, false); }));
      tr.appendChild(cell(actions));
      return tr;
    }));
  }

  function renderDenials(denials) {
    var items = denials.status === 'ok' ? denials.items : [];
    setText(byId('denials-empty'), denials.status === 'ok' ? 'No denials recorded.' : denials.status === 'unavailable' ? 'The audit log cannot be read right now.' : denials.status === 'not_shown' ? 'Denials are shown to operators only.' : 'No Postgres audit log is configured.');
    fillTable('denials', 'denials-empty', items.map(function (denial) {
      var tr = document.createElement('tr');
      tr.appendChild(cell(time(denial.decided_at_ms)));
      tr.appendChild(cell(denial.operation));
      tr.appendChild(cell(denial.subject_digest ? denial.subject + ' #' + denial.subject_digest : denial.subject));
      tr.appendChild(cell(denial.reason));
      tr.appendChild(cell(shortId(denial.decision_id), 'mono'));
      return tr;
    }));
  }

  function decide(pending, confirmed) {
    var url = apiBase + '/runs/' + encodeURIComponent(pending.run_id) + '/confirmations/' + encodeURIComponent(pending.call_id);
    var result = byId('confirmation-result');
    setText(result, (confirmed ? 'approving ' : 'rejecting ') + pending.call_id + '...');
    if (!followed || followed.runId !== pending.run_id) follow(pending.run_id);
    request(url, { method: 'POST', headers: { accept: 'application/json', 'content-type': 'application/json' }, body: JSON.stringify({ confirmed: confirmed }) })
      .then(function (answer) {
        setText(result, answer.status === 202 ? (confirmed ? 'approved ' : 'rejected ') + pending.call_id + ': run ' + answer.body.status : errorText(answer));
      })
      .catch(function () { setText(result, 'request failed'); });
  }

  function follow(runId) {
    if (followed) followed.source.close();
    var list = byId('run-event-list');
    clear(list);
    setText(byId('run-selected'), runId);
    setText(byId('run-status'), '');
    byId('run-hint').hidden = true;
    var source = new EventSource(apiBase + '/runs/' + encodeURIComponent(runId) + '/events');
    followed = { runId: runId, source: source };
    RUN_ITEM_TYPES.forEach(function (type) {
      source.addEventListener(type, function (message) {
        var item = JSON.parse(message.data);
        var li = document.createElement('li');
        li.setAttribute('data-seq', String(item.seq));
        li.className = 'item-' + item.type;
        var parts = [String(item.seq), item.type];
        if (item.type === 'event' && item.event) parts.push(item.event.kind, 'by ' + item.event.author);
        if (item.type === 'paused') parts.push('awaiting ' + item.pending_call_ids.join(', '));
        if (item.type === 'terminal') parts.push(item.status);
        if (item.error && item.error.code) parts.push(item.error.code);
        setText(li, parts.join('  '));
        list.appendChild(li);
        if (item.type === 'paused') setText(byId('run-status'), 'paused');
        if (item.type === 'resumed') setText(byId('run-status'), 'running');
        if (item.type === 'terminal') {
          setText(byId('run-status'), item.status);
          source.close();
        }
      });
    });
  }

  function verifyAudit() {
    var out = byId('audit-result');
    setText(out, 'verifying...');
    request(consoleBase + '/audit/verify').then(function (answer) {
      var report = answer.body;
      if (answer.status !== 200 || report === null) setText(out, errorText(answer));
      else if (report.status === 'no_postgres_audit_log') setText(out, 'no Postgres audit log');
      else setText(out, (report.ok ? 'intact' : 'BROKEN at seq ' + report.first_broken.seq + ' (' + report.first_broken.reason + ')') + ', ' + report.rows_checked + ' rows, head ' + report.head_seq);
      out.className = report && report.ok === false ? 'bad' : report && report.ok ? 'good' : '';
    }).catch(function () { setText(out, 'request failed'); });
  }

  function loadEvaluations() {
    request(apiBase + '/evaluations?limit=20').then(function (answer) {
      if (answer.status !== 200 || !answer.body) {
        setText(byId('evaluations-empty'), 'Evaluations unavailable: ' + errorText(answer));
        fillTable('evaluations', 'evaluations-empty', []);
        return;
      }
      setText(byId('evaluations-empty'), 'No evaluation jobs.');
      fillTable('evaluations', 'evaluations-empty', answer.body.jobs.map(function (job) {
        var tr = document.createElement('tr');
        tr.setAttribute('data-job-id', job.job_id);
        var verdict = cell(job.phase === 'completed' ? '...' : '', 'verdict');
        tr.appendChild(cell(shortId(job.job_id), 'mono'));
        tr.appendChild(cell(job.eval_set_id + ' ' + job.eval_set_version));
        tr.appendChild(cell(job.agent));
        tr.appendChild(cell(job.phase, 'status status-' + job.phase));
        tr.appendChild(verdict);
        tr.appendChild(cell(job.phase === 'completed' ? button('Compare', 'compare', function () { compare(job.job_id); }) : ''));
        if (job.phase === 'completed') showVerdict(job.job_id, verdict);
        return tr;
      }));
    }).catch(function () { setText(byId('evaluations-empty'), 'Evaluations unavailable.'); });
  }

  function showVerdict(jobId, target) {
    request(apiBase + '/evaluations/' + encodeURIComponent(jobId) + '/result').then(function (answer) {
      var passed = answer.status === 200 && answer.body && answer.body.result ? answer.body.result.passed : null;
      setText(target, passed === null ? errorText(answer) : passed ? 'pass' : 'fail');
      target.className = 'verdict ' + (passed ? 'good' : 'bad');
    });
  }

  function compare(jobId) {
    var out = byId('comparison');
    clear(out);
    var baseline = byId('baseline-name').value;
    request(apiBase + '/evaluations/jobs/' + encodeURIComponent(jobId) + '/compare?baseline=' + encodeURIComponent(baseline)).then(function (answer) {
      var title = document.createElement('p');
      out.appendChild(title);
      if (answer.status !== 200 || !answer.body) { setText(title, 'compare with ' + baseline + ': ' + errorText(answer)); return; }
      var report = answer.body.report;
      setText(title, shortId(report.candidate_job_id) + ' against ' + baseline + ' (' + shortId(report.baseline_job_id) + '): ' + (report.regressed ? 'REGRESSED' : 'no regression'));
      title.className = report.regressed ? 'bad' : 'good';
      var table = document.createElement('table');
      var head = document.createElement('tr');
      ['metric', 'baseline', 'candidate', 'delta', 'threshold', 'passed', 'regressed'].forEach(function (name) {
        var th = document.createElement('th');
        setText(th, name);
        head.appendChild(th);
      });
      table.appendChild(head);
      Object.keys(report.metrics).forEach(function (name) {
        var metric = report.metrics[name];
        var tr = document.createElement('tr');
        [name, score(metric.baseline_score), score(metric.candidate_score), score(metric.delta), metric.threshold, metric.passed, metric.regressed].forEach(function (value) { tr.appendChild(cell(value)); });
        table.appendChild(tr);
      });
      out.appendChild(table);
    });
  }

  function traceEventName(event) {
    var name = event.event || event.name || event.type || '';
    var tool = event.metadata && typeof event.metadata.tool === 'string' ? event.metadata.tool : '';
    return tool ? name + ' ' + tool : name;
  }

  function score(value) { return typeof value === 'number' ? String(Math.round(value * 1000) / 1000) : value; }

  function queryTraces(event) {
    event.preventDefault();
    var runId = byId('trace-run-id').value.trim();
    var out = byId('trace-result');
    setText(out, 'querying...');
    request(apiBase + '/traces?limit=50' + (runId ? '&run_id=' + encodeURIComponent(runId) : '')).then(function (answer) {
      var body = byId('traces').tBodies[0];
      clear(body);
      if (answer.status !== 200 || !answer.body) { setText(out, errorText(answer)); return; }
      setText(out, answer.body.events.length + ' records' + (answer.body.truncated ? ' (more available)' : ''));
      answer.body.events.forEach(function (record) {
        var tr = document.createElement('tr');
        tr.appendChild(cell(record.cursor));
        tr.appendChild(cell(time(record.timestamp_ms)));
        tr.appendChild(cell(record.kind));
        tr.appendChild(cell(traceEventName(record.event)));
        tr.appendChild(cell(shortId(record.identity.run_id || ''), 'mono'));
        body.appendChild(tr);
      });
    }).catch(function () { setText(out, 'request failed'); });
  }

  var snapshots = new EventSource(consoleBase + '/events');
  snapshots.addEventListener('open', function () { setText(byId('connection'), 'live'); byId('connection').className = 'badge good'; });
  snapshots.addEventListener('error', function () { setText(byId('connection'), 'reconnecting'); byId('connection').className = 'badge bad'; });
  snapshots.addEventListener('snapshot', function (message) {
    var snapshot = JSON.parse(message.data);
    renderAdmission(snapshot.admission);
    renderRuns(snapshot.runs);
    renderConfirmations(snapshot.confirmations);
    renderDenials(snapshot.denials);
    root.setAttribute('data-snapshot-id', message.lastEventId);
  });
  byId('audit-verify').addEventListener('click', verifyAudit);
  byId('evaluations-refresh').addEventListener('click', loadEvaluations);
  byId('trace-form').addEventListener('submit', queryTraces);
  verifyAudit();
  loadEvaluations();
})();
`;
