#!/usr/bin/env bash
# The README's API quickstart, run as written: the demo's stack stays up, then curl with a token
# for the demo's tenant recalls a skill, opens a session, loads the skill and posts a run; then the
# README's walkthrough runs on the same stack. Each call's status is checked; the stack is stopped
# at the end whatever happens. CI runs this after
# the README's first command (.ci/run); run it yourself from the project directory.
set -euo pipefail
cd "$(dirname "$0")/.."
API=${SKILLSMITH_API_URL:-http://127.0.0.1:8080}
# The second token is the README walkthrough's, as the README writes it (tenant acme).
export SKILLSMITH_API_TOKENS='[{"token": "quickstart-token-0123456789", "tenantId": "default", "principal": "quickstart", "scopes": ["recall.read", "session.write", "session.read", "skill.read", "run.write"]}, {"token": "acme-token-0123456789abcdef", "tenantId": "acme", "principal": "support-bot", "scopes": ["run.write", "recall.read"]}]'
AUTH='Authorization: Bearer quickstart-token-0123456789'

fail() { echo "api-quickstart: $*" >&2; exit 1; }
# One call: prints the body, fails unless the status is the expected one.
call() {
  local expected=$1
  shift
  local out status
  out=$(mktemp)
  status=$(curl -sS -o "$out" -w '%{http_code}' "$@") || fail "curl $* failed"
  cat "$out"
  echo
  [ "$status" = "$expected" ] || fail "expected $expected, got $status from: curl $*"
}
field() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=process.argv[1].split(".").reduce((o,k)=>o?.[k],JSON.parse(s));if(v===undefined)process.exit(1);console.log(typeof v==="string"?v:JSON.stringify(v))})' "$1"; }

echo "== npx skillsmith demo --keep-running (background)"
npx skillsmith demo --keep-running > /tmp/skillsmith-quickstart-demo.log 2>&1 &
demo=$!
trap 'npx skillsmith down >/dev/null 2>&1 || kill "$demo" 2>/dev/null || true' EXIT
until curl -sf "$API/readyz" > /dev/null; do
  kill -0 "$demo" 2>/dev/null || { cat /tmp/skillsmith-quickstart-demo.log >&2; fail "the demo ended before the API was ready"; }
  sleep 2
done

echo "== GET /readyz"
call 200 "$API/readyz"

echo "== GET /v1/recall"
recall=$(call 200 -H "$AUTH" "$API/v1/recall?goal=make%20a%20spreadsheet%20of%20the%20Globex%20invoices%20from%20May&topK=1")
echo "$recall"
skill=$(echo "$recall" | head -1 | field skills.0.name) || fail "recall returned no skill for a task the demo learned"

echo "== npx skillsmith agents set quickstart-agent --skills $skill"
npx skillsmith agents set quickstart-agent --skills "$skill" || fail "agents set failed"

echo "== POST /v1/sessions"
session=$(call 201 -H "$AUTH" -H 'Content-Type: application/json' -X POST "$API/v1/sessions" \
  -d '{"agentId": "quickstart-agent", "tools": ["billing.invoices.list", "sheets.create", "sheets.append", "email.send"]}')
echo "$session"
id=$(echo "$session" | head -1 | field id) || fail "the session has no id"

echo "== POST /v1/sessions/$id/skills/load ($skill)"
call 200 -H "$AUTH" -H 'Content-Type: application/json' -X POST "$API/v1/sessions/$id/skills/load" -d "{\"name\": \"$skill\"}" > /dev/null

echo "== POST /v1/runs"
call 202 -H "$AUTH" -H 'Content-Type: application/json' -X POST "$API/v1/runs" -d "{
  \"runId\": \"quickstart-$(date +%s)\", \"agentId\": \"quickstart-agent\", \"sessionId\": \"$id\",
  \"goal\": \"make a spreadsheet of the Globex invoices from May\", \"status\": \"completed\",
  \"startedAt\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\", \"completedAt\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\",
  \"toolCalls\": [
    {\"tool\": \"billing.invoices.list\", \"args\": {\"customer\": \"Globex\", \"month\": \"May\"}, \"success\": true},
    {\"tool\": \"sheets.create\", \"args\": {\"title\": \"Globex invoices, May\"}, \"success\": true},
    {\"tool\": \"sheets.append\", \"args\": {\"rows\": 12}, \"success\": true},
    {\"tool\": \"email.send\", \"args\": {\"to\": \"finance@example.com\"}, \"success\": true}
  ]}"

echo "== an unknown skill is 404"
call 404 -H "$AUTH" -H 'Content-Type: application/json' -X POST "$API/v1/sessions/$id/skills/load" -d '{"name": "no-such-skill"}' > /dev/null
echo "api-quickstart: ok"

echo "== the README walkthrough on the same stack (scripts/readme-walkthrough.sh)"
SKILLSMITH_API_URL=$API scripts/readme-walkthrough.sh
