#!/usr/bin/env bash
# The README's walkthrough "Feeding your own agent's runs", run as written against a running stack
# (scripts/api-quickstart.sh calls it while the demo's stack is up, in place of `npx skillsmith up`):
# ingest a file of runs into tenant acme, post one more over HTTP, synthesize and wait, list and
# show the learned skill, recall it for a new goal. Fails unless a skill is learned and recalled.
set -euo pipefail
cd "$(dirname "$0")/.."
API=${SKILLSMITH_API_URL:-http://127.0.0.1:8080}
# The README's token for tenant acme; the stack must have been started with it in SKILLSMITH_API_TOKENS.
TOKEN=${SKILLSMITH_WALKTHROUGH_TOKEN:-acme-token-0123456789abcdef}

fail() { echo "readme-walkthrough: $*" >&2; exit 1; }
field() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=process.argv[1].split(".").reduce((o,k)=>o?.[k],JSON.parse(s));if(v===undefined)process.exit(1);console.log(typeof v==="string"?v:JSON.stringify(v))})' "$1"; }

echo "== npx skillsmith ingest docs/examples/acme-runs.jsonl --tenant acme"
npx skillsmith ingest docs/examples/acme-runs.jsonl --tenant acme

echo "== POST /v1/runs (docs/examples/acme-run.json)"
body=$(mktemp)
status=$(curl -sS -o "$body" -w '%{http_code}' -X POST "$API/v1/runs" -H "Authorization: Bearer $TOKEN" \
  -H 'Content-Type: application/json' --data @docs/examples/acme-run.json) || fail "curl failed"
cat "$body"
echo
[ "$status" = 202 ] || fail "POST /v1/runs answered $status, not 202"

echo "== npx skillsmith synthesize --tenant acme --wait"
npx skillsmith synthesize --tenant acme --wait

echo "== npx skillsmith passes --tenant acme"
npx skillsmith passes --tenant acme

echo "== npx skillsmith schedule set --every 24h --tenant acme (then deleted: the walkthrough leaves no schedule behind)"
npx skillsmith schedule set --every 24h --tenant acme
npx skillsmith schedule delete --tenant acme

echo "== npx skillsmith skills list --tenant acme"
npx skillsmith skills list --tenant acme
name=$(npx skillsmith skills list --tenant acme --json | field skills.0.name) || fail "the pass learned no skill for tenant acme"

echo "== npx skillsmith skills show $name --tenant acme"
npx skillsmith skills show "$name" --tenant acme

goal='Refund order A-2001 for Ines Moreau (arrived late) and email them the receipt'
echo "== npx skillsmith recall \"$goal\" --tenant acme"
npx skillsmith recall "$goal" --tenant acme
recalled=$(npx skillsmith recall "$goal" --tenant acme --json | field matches.0.name) || fail "recall returned no skill for a new goal of the learned task"
[ "$recalled" = "$name" ] || fail "recall returned $recalled, not the learned $name"
echo "readme-walkthrough: ok"
