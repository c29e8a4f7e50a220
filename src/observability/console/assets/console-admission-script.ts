/**
 * The admission panel's part of the console script (spliced into `CONSOLE_SCRIPT`, inside its
 * closure, so it uses that script's helpers): the totals, the agents with their effective limit and
 * cost in use, and the tenants with most work with every other tenant folded into one `_other` row
 * (spec 09 §7). Values are rendered with `textContent` only.
 */
export const ADMISSION_SCRIPT = String.raw`
  function dash(value) { return value === undefined || value === null ? '-' : value; }

  function row(attribute, id, cells) {
    var tr = document.createElement('tr');
    tr.setAttribute(attribute, id);
    cells.forEach(function (c) { tr.appendChild(cell(c[0], c[1])); });
    return tr;
  }

  function renderAdmission(admission) {
    var panel = byId('admission-panel');
    panel.hidden = admission === null;
    if (admission === null) return;
    setText(byId('admission-active'), admission.active);
    setText(byId('admission-limit'), admission.global_limit);
    setText(byId('admission-available'), admission.available);
    setText(byId('admission-queued'), admission.queue_length);
    setText(byId('admission-max-queue'), admission.max_queue);
    setText(byId('admission-overflow'), admission.overflow);
    setText(byId('admission-draining'), admission.draining ? 'draining' : 'accepting');
    setText(byId('admission-cost'), dash(admission.cost_in_use));
    fillTable('admission-agents', 'admission-empty', admission.per_agent.map(function (agent) {
      return row('data-agent', agent.agent, [[agent.agent], [agent.active, 'active'], [agent.queued, 'queued'], [agent.limit, 'limit'],
        [dash(agent.effective_limit), 'effective-limit'], [dash(agent.cost_in_use), 'cost']]);
    }));
    byId('admission-tenants-panel').hidden = !admission.per_tenant;
    if (!admission.per_tenant) return;
    var rows = admission.per_tenant.map(function (tenant) {
      return row('data-tenant', tenant.tenant, [[tenant.tenant], [tenant.active, 'active'], [tenant.queued, 'queued'], [tenant.limit, 'limit'], [tenant.cost_in_use, 'cost']]);
    });
    var other = admission.other_tenants;
    if (other && other.count > 0) {
      rows.push(row('data-tenant-other', String(other.count), [['_other (' + other.count + ' tenants)'], [other.active, 'active'], [other.queued, 'queued'], ['-', 'limit'], ['-', 'cost']]));
    }
    fillTable('admission-tenants', 'admission-tenants-empty', rows);
  }
`;
