#!/usr/bin/env bash
# Nest 12 smoke test: builds the library, installs the Nest 12 line into a throw-away directory,
# runs the compiled reference service there with plain `node` (CommonJS code require()-ing the
# ESM-only Nest 12 packages, Node >= 20.19) and checks its HTTP surface and its SIGTERM shutdown.
#
#   bash scripts/nest12-smoke.sh            # prints "nest12-smoke: PASS ..." or "nest12-smoke: FAIL ..."
#   KEEP_SMOKE_DIR=1 bash scripts/nest12-smoke.sh   # keep the temp dir (logs, node_modules) for a look
#
# Changes nothing in the repository except dist/ (npm run build). Needs the npm registry.
set -euo pipefail

# The Nest 12 line under test: exact versions (current 12.x when this was written).
NEST_COMMON=12.5.1
NEST_CORE=12.5.1
NEST_PLATFORM_EXPRESS=12.5.1
NEST_TERMINUS=12.1.0
NEST_EVENT_EMITTER=12.0.1
NEST_TYPEORM=12.0.2

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STARTED_AT=$SECONDS
WORK=""
SERVER_PID=""
STEP="start"

log() { printf 'nest12-smoke: %s\n' "$*"; }
fail() {
  printf 'nest12-smoke: error: %s\n' "$*" >&2
  exit 1
}

# Prints the server log's tail (on failure), stops whatever is still running, removes the temp dir
# and prints the verdict as the last line.
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
  fi
  if [[ -n "$WORK" ]]; then
    if [[ $rc -ne 0 && -f "$WORK/server.log" ]]; then
      echo "----- server log (last 60 lines) -----" >&2
      tail -n 60 "$WORK/server.log" >&2 || true
      echo "--------------------------------------" >&2
    fi
    # an embedded Postgres left behind by a killed server: fast shutdown via its postmaster.pid
    local pidfile="$WORK/.data/postgres/postmaster.pid"
    if [[ -f "$pidfile" ]]; then
      local pgpid
      pgpid="$(head -n 1 "$pidfile" 2>/dev/null || true)"
      if [[ "$pgpid" =~ ^[0-9]+$ ]] && kill -0 "$pgpid" 2>/dev/null; then
        kill -INT "$pgpid" 2>/dev/null || true
        for _ in $(seq 1 100); do kill -0 "$pgpid" 2>/dev/null || break; sleep 0.1; done
      fi
    fi
    if [[ "${KEEP_SMOKE_DIR:-}" == 1 ]]; then
      log "kept $WORK"
    else
      rm -rf "$WORK"
    fi
  fi
  local took=$((SECONDS - STARTED_AT))
  if [[ $rc -eq 0 ]]; then
    log "PASS (Nest core $NEST_CORE, common $NEST_COMMON, platform-express $NEST_PLATFORM_EXPRESS, terminus $NEST_TERMINUS, event-emitter $NEST_EVENT_EMITTER, typeorm $NEST_TYPEORM; node $(node --version); ${took}s)"
  else
    log "FAIL at step '$STEP' (exit $rc, ${took}s)"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

command -v curl >/dev/null || fail "curl is needed"
node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' ||
  fail "Node >= 20.19 is needed (require() of ES modules); this is $(node --version)"
unset NODE_PATH DATABASE_URL

STEP="build"
log "npm run build"
(cd "$ROOT" && npm run build --silent)
[[ -f "$ROOT/dist/src/main.js" && -d "$ROOT/dist/migrations" ]] || fail "build produced no dist/src/main.js or dist/migrations"

STEP="install"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/nest12-smoke.XXXXXX")"
# run as root, the embedded Postgres runs as the "postgres" OS user, which must enter this directory
chmod 755 "$WORK"
log "temp dir $WORK"

# package.json of the temp app: Nest 12 pinned above; the runtime deps at the versions of the
# repository's package.json; install scripts allowed as the repository allows them (the embedded
# Postgres platform package must run its postinstall), and that platform package pinned as well.
ROOT="$ROOT" WORK="$WORK" node - \
  "$NEST_COMMON" "$NEST_CORE" "$NEST_PLATFORM_EXPRESS" "$NEST_TERMINUS" "$NEST_EVENT_EMITTER" "$NEST_TYPEORM" <<'EOF'
const fs = require('node:fs');
const path = require('node:path');
const [common, core, platformExpress, terminus, eventEmitter, typeorm] = process.argv.slice(2);
const repo = JSON.parse(fs.readFileSync(path.join(process.env.ROOT, 'package.json'), 'utf8'));
const pinned = (name) => {
  const version = repo.dependencies?.[name] ?? repo.devDependencies?.[name];
  if (!version) throw new Error(`${name} has no version in ${process.env.ROOT}/package.json`);
  return version;
};
// every runtime dependency of the package, plus the peers and the dev-only launcher the reference app needs
const runtime = [...Object.keys(repo.dependencies ?? {}), 'reflect-metadata', 'rxjs', 'embedded-postgres'];
const platformPackage = `@embedded-postgres/${process.platform}-${process.arch}`;
const pkg = {
  name: 'nest12-smoke',
  version: '0.0.0',
  private: true,
  description: 'throw-away app of scripts/nest12-smoke.sh',
  dependencies: {
    '@nestjs/common': common,
    '@nestjs/core': core,
    '@nestjs/platform-express': platformExpress,
    '@nestjs/terminus': terminus,
    '@nestjs/event-emitter': eventEmitter,
    '@nestjs/typeorm': typeorm,
    ...Object.fromEntries(runtime.map((name) => [name, pinned(name)])),
  },
  optionalDependencies: { [platformPackage]: pinned('embedded-postgres') },
  allowScripts: { ...(repo.allowScripts ?? {}), [platformPackage]: true },
};
fs.writeFileSync(path.join(process.env.WORK, 'package.json'), JSON.stringify(pkg, null, 2) + '\n');
EOF

log "npm install (Nest $NEST_CORE) ..."
if ! (cd "$WORK" && npm install --no-audit --no-fund >"$WORK/npm-install.log" 2>&1); then
  tail -n 40 "$WORK/npm-install.log" >&2
  fail "npm install failed"
fi
if grep -qiE 'warn|skipped' "$WORK/npm-install.log"; then
  log "npm install printed warnings:"
  grep -iE 'warn|skipped' "$WORK/npm-install.log" | sed 's/^/  | /'
fi

STEP="copy"
mkdir -p "$WORK/dist"
cp -R "$ROOT/dist/src" "$ROOT/dist/migrations" "$WORK/dist/"

STEP="resolve"
# module resolution from the copied compiled code must find the temp dir's Nest 12, not the repo's
(cd "$WORK/dist/src" && node - "$WORK" <<'EOF'
const path = require('node:path');
const work = process.argv[2];
let bad = false;
for (const name of ['@nestjs/common', '@nestjs/core', '@nestjs/platform-express', '@nestjs/terminus', '@nestjs/event-emitter', '@nestjs/typeorm']) {
  const file = require.resolve(`${name}/package.json`, { paths: [process.cwd()] });
  const { version } = require(file);
  const ok = !path.relative(work, file).startsWith('..') && /^12\./.test(version);
  console.log(`nest12-smoke:   ${name}@${version} from ${file}${ok ? '' : '  <-- not the 12.x of the temp dir'}`);
  if (!ok) bad = true;
}
process.exit(bad ? 1 : 0);
EOF
) || fail "the copied dist does not resolve the Nest 12 packages of $WORK"

STEP="start server"
read -r APP_PORT PG_PORT < <(node -e '
const net = require("node:net");
const one = () => new Promise((ok, no) => { const s = net.createServer(); s.once("error", no);
  s.listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => ok(p)); }); });
(async () => { const a = await one(); let b; do b = await one(); while (b === a); console.log(a, b); })();')
log "starting node dist/src/main.js (PORT=$APP_PORT, EMBEDDED_PG_PORT=$PG_PORT, cwd $WORK)"
(cd "$WORK" && NO_COLOR=1 PORT="$APP_PORT" EMBEDDED_PG_PORT="$PG_PORT" exec node dist/src/main.js) >"$WORK/server.log" 2>&1 &
SERVER_PID=$!

BASE="http://127.0.0.1:$APP_PORT"
for i in $(seq 1 240); do
  kill -0 "$SERVER_PID" 2>/dev/null || fail "the service exited before it listened"
  if curl -s -o /dev/null --max-time 2 "$BASE/health/live"; then break; fi
  [[ $i -lt 240 ]] || fail "the service did not listen on $APP_PORT within 120 s"
  sleep 0.5
done
log "listening after $((SECONDS - STARTED_AT))s total"

STEP="http checks"
# check NAME METHOD PATH BODY STATUS [NODE-EXPRESSION over the parsed JSON body `b`]
CHECK_FAILED=0
check() {
  local name="$1" method="$2" path="$3" body="$4" want="$5" expr="${6:-}"
  local args=(-s -o "$WORK/response.json" -w '%{http_code}' --max-time 15 -X "$method")
  [[ -n "$body" ]] && args+=(-H 'content-type: application/json' -d "$body")
  local got
  got="$(curl "${args[@]}" "$BASE$path" || echo "curl-error")"
  local snippet
  snippet="$(head -c 300 "$WORK/response.json" 2>/dev/null || true)"
  if [[ "$got" != "$want" ]]; then
    log "  FAIL $name: $method $path -> $got (want $want) $snippet"
    CHECK_FAILED=1
    return
  fi
  if [[ -n "$expr" ]] && ! node -e "const b = JSON.parse(require('node:fs').readFileSync(process.argv[1], 'utf8')); process.exit(($expr) ? 0 : 1)" "$WORK/response.json" 2>/dev/null; then
    log "  FAIL $name: $method $path -> $got but body fails [$expr]: $snippet"
    CHECK_FAILED=1
    return
  fi
  log "  ok   $name: $method $path -> $got"
}
check invoke POST /agents/a/invoke '{"work_ms":10}' 200
# Nest 12's ValidationPipe must find class-validator/class-transformer (400, not 500)
check invoke-validation POST /agents/a/invoke '{"work_ms":-1}' 400 "b.code === 'invalid_request_body' && b.details.field === 'work_ms'"
check admission-status GET /admission/status '' 200 "typeof b === 'object' && b !== null && 'global_limit' in b"
check ready GET /health/ready '' 200 "b.status === 'ok'"
check policy-denial POST /tools/shell '{}' 403 "JSON.stringify(b).includes('runtime_policy_denied')"
check live GET /health/live '' 200
# a server-owned run under Nest 12: started at once, then followed to the end over SSE
check run-start POST /runs '{"agent":"helper","user_id":"smoke","session_id":"nest12-smoke","message":"where is the runbook?"}' 202 "/^run-/.test(b.run_id) && b.session_id === 'nest12-smoke'"
RUN_ID="$(node -e "process.stdout.write(JSON.parse(require('node:fs').readFileSync(process.argv[1], 'utf8')).run_id || '')" "$WORK/response.json" 2>/dev/null || true)"
if curl -sN --max-time 15 "$BASE/runs/$RUN_ID/events" | grep -q '"type":"terminal","status":"completed"'; then
  log "  ok   run-events: GET /runs/:id/events -> terminal completed"
else
  log "  FAIL run-events: GET /runs/$RUN_ID/events ended without a completed terminal item"
  CHECK_FAILED=1
fi
# an evaluation job under Nest 12: prepared in the piscina worker of the compiled package, run, completed
check eval-submit POST /evaluations '{"set":{"id":"smoke","version":"1","cases":[{"case_id":"c","input":"where is the runbook?","expected_tool_calls":[{"name":"search","args":{"query":"where is the runbook?"}}]}]},"agent":"helper","metrics":[{"name":"tool_trajectory"}]}' 201 "/^eval-/.test(b.job.job_id)"
EVAL_ID="$(node -e "process.stdout.write(JSON.parse(require('node:fs').readFileSync(process.argv[1], 'utf8')).job.job_id || '')" "$WORK/response.json" 2>/dev/null || true)"
for i in $(seq 1 50); do
  curl -s --max-time 5 "$BASE/evaluations/$EVAL_ID" | grep -q '"phase":"completed"' && break
  sleep 0.2
done
check eval-result GET "/evaluations/$EVAL_ID/result" '' 200 "b.result.passed === true && b.result.metrics.tool_trajectory.score === 1"
[[ $CHECK_FAILED -eq 0 ]] || fail "HTTP checks failed"

STEP="SIGTERM shutdown"
kill -TERM "$SERVER_PID"
for i in $(seq 1 300); do
  kill -0 "$SERVER_PID" 2>/dev/null || break
  [[ $i -lt 300 ]] || fail "the service did not exit within 30 s of SIGTERM"
  sleep 0.1
done
set +e
wait "$SERVER_PID"
EXIT_CODE=$?
set -e
SERVER_PID=""
[[ $EXIT_CODE -eq 0 ]] || fail "the service exited $EXIT_CODE after SIGTERM (want 0)"
log "  ok   SIGTERM: exited 0"
if [[ -f "$WORK/.data/postgres/postmaster.pid" ]]; then
  fail "the embedded Postgres is still running after the service stopped"
fi

STEP="warnings"
# Warnings the runtime or the dependencies printed (reported, not failed on).
if grep -qE 'Warning|DeprecationWarning|ExperimentalWarning|\bWARN\b|deprecated' "$WORK/server.log"; then
  log "the service printed warnings:"
  grep -E 'Warning|DeprecationWarning|ExperimentalWarning|\bWARN\b|deprecated' "$WORK/server.log" | sed 's/^/  | /'
else
  log "the service printed no warnings"
fi
STEP="done"
