/** The console's style sheet, served as `<path>/console.css` (the page's CSP allows styles from its own origin only). */
export const CONSOLE_STYLE = `
:root { color-scheme: light; --ink: #1d2433; --muted: #677085; --line: #dfe3ea; --good: #1d7a46; --bad: #b3261e; --accent: #2f5bd3; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: #f5f6f8; }
header { display: flex; align-items: center; gap: 12px; padding: 12px 20px; background: #1d2433; color: #fff; }
header h1 { font-size: 18px; margin: 0; font-weight: 600; }
main { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 16px; padding: 16px 20px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; min-width: 0; }
section.wide { grid-column: 1 / -1; }
#comparison { overflow-x: auto; }
section[hidden] { display: none; }
h2 { font-size: 15px; margin: 0 0 8px; }
h2 small { font-weight: 400; color: var(--muted); }
table { width: 100%; border-collapse: collapse; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 360px; }
th { color: var(--muted); font-weight: 500; font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
tr.selected td { background: #eef2fd; }
.mono, ol { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12.5px; }
.summary { margin: 0 0 8px; }
.empty, .note { color: var(--muted); margin: 6px 0; }
.badge, .badge.good, .badge.bad { font-size: 12px; padding: 2px 8px; border-radius: 10px; background: #59627a; color: #fff; }
.badge.good { background: var(--good); }
.badge.bad { background: var(--bad); }
.good { color: var(--good); }
.bad { color: var(--bad); }
.status-completed { color: var(--good); font-weight: 600; }
.status-failed, .status-timed_out, .status-cancelled { color: var(--bad); font-weight: 600; }
.status-paused { color: #9a6700; font-weight: 600; }
.status-running, .status-pending, .status-queued { color: var(--accent); }
button { font: inherit; font-size: 12.5px; padding: 2px 10px; border: 1px solid var(--line); border-radius: 6px; background: #fff; cursor: pointer; }
button.follow { border: none; background: none; color: var(--accent); padding: 0; }
button.approve { border-color: var(--good); color: var(--good); margin-right: 6px; }
button.reject { border-color: var(--bad); color: var(--bad); }
ol { margin: 0; padding-left: 0; list-style: none; max-height: 260px; overflow: auto; }
ol li { padding: 2px 0; border-bottom: 1px dashed var(--line); white-space: pre; }
ol li.item-terminal { font-weight: 600; }
input { font: inherit; padding: 2px 6px; border: 1px solid var(--line); border-radius: 4px; }
`;
