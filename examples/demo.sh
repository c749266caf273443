#!/usr/bin/env bash
# make demo: a real crawl of the local fixture site with the in-memory
# tracker and the file saver. Needs nothing but Go; no internet.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/distscrape}
PAGES=${DEMO_PAGES:-2000}
OUT=demo-out
work=$(mktemp -d)
site_pid=
cleanup() {
	[ -n "$site_pid" ] && kill "$site_pid" 2>/dev/null && wait "$site_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

go build -o "$work/fixturesite" ./test/fixturesite/cmd/fixturesite
rm -rf "$OUT"
# The fixture site picks a free port and prints its base URL on the first line.
"$work/fixturesite" -addr 127.0.0.1:0 -pages "$PAGES" -latency 2ms >"$work/site.out" 2>"$work/site.err" &
site_pid=$!
for _ in $(seq 100); do
	[ -s "$work/site.out" ] && break
	sleep 0.1
done
SITE_URL=$(head -n1 "$work/site.out" | grep -o 'http://[^ ]*' || true)
if [ -z "$SITE_URL" ]; then
	echo "demo: the fixture site did not start:" >&2
	cat "$work/site.err" >&2
	exit 1
fi
echo "demo: fixture site of $PAGES pages at $SITE_URL"
echo "demo: distscrape crawl -c examples/mirror.yaml (seeds $SITE_URL/, output in $OUT/)"
# The example's seed is the fixture site's default port; the demo's site
# picked a free one, so the seed and the folder are overridden.
DISTSCRAPE_SCRAPER_SEEDS=$SITE_URL/ DISTSCRAPE_SAVER_DIR=$OUT "$BIN" crawl -c examples/mirror.yaml
files=$(find "$OUT" -type f -not -path "*/.distscrape/*" | wc -l)
echo "demo: $files files under $OUT/ ($(du -sh "$OUT" | cut -f1)); e.g. $(find "$OUT" -type f -not -path "*/.distscrape/*" | sort | head -n1)"
