// The dashboard's page: live state from /api/events (Server-Sent Events),
// the rest from the JSON API when shown or asked. Plain JavaScript; every
// value is put in the page as text, never as HTML.
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const readOnly = document.querySelector('meta[name="read-only"]').content === 'true';
  let last = null;          // the last snapshot
  let deadCursors = [''];   // the cursor of each page shown, for "newer"
  let deadMatch = '';
  let lastFailed = -1;

  const fmt = (n) => Number(n).toLocaleString('en-US');
  const bytes = (n) => {
    const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    let i = 0;
    while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(1) : n) + ' ' + u[i];
  };
  const dur = (s) => {
    if (s < 0) return '–';
    s = Math.round(s);
    if (s < 60) return s + ' s';
    if (s < 3600) return Math.floor(s / 60) + ' min ' + (s % 60) + ' s';
    return Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min';
  };
  const ago = (t, now) => (!t || t.startsWith('0001')) ? '–' : dur(Math.max(0, (now - Date.parse(t)) / 1000)) + ' ago';
  const el = (tag, text, cls) => {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  };
  const set = (id, v) => { const e = $(id); if (e.textContent !== String(v)) e.textContent = v; };

  function say(text, bad) {
    const m = $('msg');
    m.textContent = text;
    m.className = bad ? 'bad' : '';
    m.hidden = false;
    clearTimeout(say.t);
    say.t = setTimeout(() => { m.hidden = true; }, 6000);
  }

  async function getJSON(url) {
    const r = await fetch(url, { credentials: 'same-origin' });
    const body = await r.json().catch(() => ({ error: r.status + ' ' + r.statusText }));
    if (!r.ok) throw Object.assign(new Error(body.error || r.statusText), { status: r.status });
    return body;
  }

  // act asks first, then POSTs with the CSRF token.
  async function act(question, url, body) {
    if (readOnly || !window.confirm(question)) return null;
    try {
      const r = await fetch(url, {
        method: 'POST', credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
        body: JSON.stringify(body || {}),
      });
      const res = await r.json().catch(() => ({ error: r.status + ' ' + r.statusText }));
      if (!r.ok) throw new Error(res.error || r.statusText);
      return res;
    } catch (e) {
      say(e.message, true);
      return null;
    }
  }

  // ---- live state
  function render(s) {
    last = s;
    const st = s.stats || {};
    const now = Date.parse(s.at);
    document.body.dataset.updates = String(Number(document.body.dataset.updates) + 1);
    for (const k of ['pending', 'leased', 'delayed', 'done', 'failed', 'added', 'workers']) set('c-' + k, fmt(st[k] || 0));
    set('c-bytes', bytes(st.bytes || 0));
    set('c-hosts_ready', fmt(st.hosts_ready || 0));
    set('c-hosts_waiting', fmt(st.hosts_waiting || 0));
    set('c-next_host', st.next_host_ready ? dur(Math.max(Date.parse(st.next_host_ready) - now, 0) / 1000) : '–');
    // Politeness-bound: hosts wait for their slot and none is ready now.
    set('c-bound', (st.hosts_waiting > 0 && !st.hosts_ready) ? 'politeness-bound: next host ready' : 'next host ready');
    set('r-now', s.rate_now.toFixed(1));
    set('r-minute', s.rate_minute.toFixed(1));
    set('r-start', s.rate_start.toFixed(1));
    if (s.since) $('r-start-label').title = 'since the dashboard started, ' + new Date(s.since).toLocaleString();
    const left = (st.pending || 0) + (st.leased || 0) + (st.delayed || 0);
    set('eta', st.added > 0 && left === 0 ? 'done' : dur(s.eta));
    set('updated', 'updated ' + new Date(now).toLocaleTimeString());
    const pill = $('state');
    let state = 'running', cls = 'pill';
    if (s.error) { state = 'tracker error'; cls += ' error'; } else if (st.paused) { state = 'paused'; cls += ' paused'; } else if (st.added > 0 && left === 0) { state = 'done'; cls += ' done'; }
    set('state', state);
    pill.className = cls;
    $('paused').hidden = !st.paused;
    if (st.paused) set('paused', 'Paused by ' + st.paused_by + ' ' + ago(st.paused_at, now) + ': no lease is handed out; workers finish what they hold and wait.');
    $('limit').hidden = !st.limit_reached;
    if (st.limit_reached) set('limit', 'Limit reached (' + st.limit_reached + '): what is pending is kept.');
    $('error').hidden = !s.error;
    if (s.error) set('error', s.error);
    if (!readOnly) { $('pause').disabled = !!st.paused; $('resume').disabled = !st.paused; }
    chart(s.series || []);
    records(s.records);
    proxies(s.proxies);
    workers(s.workers || [], now);
    if (st.failed !== lastFailed) { // new dead letters (or requeued): refresh the first page
      lastFailed = st.failed;
      if (deadCursors.length === 1) loadDead();
    }
  }

  function chart(points) {
    const w = 720, h = 140;
    const maxY = Math.max(1, ...points.map((p) => p[1]));
    // The x axis spans the samples (the last hour at most, a minute at least).
    const t1 = points.length ? points[points.length - 1][0] : 0;
    const span = Math.max(60, points.length ? t1 - points[0][0] : 0);
    $('chart-line').setAttribute('points', points.map((p) =>
      (w - (t1 - p[0]) / span * w).toFixed(1) + ',' + (h - 4 - p[1] / maxY * (h - 8)).toFixed(1)).join(' '));
    set('chart-max', maxY.toFixed(1));
    set('chart-span', span >= 3600 ? 'the last hour' : 'the last ' + dur(span));
  }

  // The records the sink holds by rule; hidden for a crawl without extract rules.
  function records(rv) {
    $('records').hidden = !rv;
    if (!rv) return;
    $('records-error').hidden = !rv.error;
    if (rv.error) set('records-error', rv.error);
    const body = $('records-body');
    body.replaceChildren();
    if (!rv.rules.length) {
      const td = el('td', 'none yet', 'muted'); td.colSpan = 3;
      body.append(el('tr')); body.lastChild.append(td);
      return;
    }
    for (const r of rv.rules) {
      const tr = el('tr');
      tr.dataset.rule = r.rule;
      tr.append(el('td', r.rule), el('td', fmt(r.written), 'num'), el('td', fmt(r.invalid), 'num'), el('td', fmt(r.changed), 'num'));
      body.append(tr);
    }
  }

  // The proxies in quarantine; hidden for a crawl without proxies.
  function proxies(pv) {
    $('proxies').hidden = !pv;
    if (!pv) return;
    $('proxies-error').hidden = !pv.error;
    if (pv.error) set('proxies-error', pv.error);
    const body = $('proxies-body');
    body.replaceChildren();
    if (!pv.quarantined.length) {
      const td = el('td', 'none', 'muted'); td.colSpan = 5;
      body.append(el('tr')); body.lastChild.append(td);
      return;
    }
    for (const p of pv.quarantined) {
      const tr = el('tr');
      tr.dataset.proxy = p.url;
      tr.append(el('td', p.url), el('td', p.country || ''), el('td', p.until), el('td', p.by || ''), el('td', p.last_error || ''));
      body.append(tr);
    }
  }

  function workers(ws, now) {
    const body = $('workers-body');
    body.replaceChildren();
    if (!ws.length) {
      const td = el('td', 'no worker seen recently', 'muted'); td.colSpan = 9;
      body.append(el('tr')); body.lastChild.append(td);
      return;
    }
    for (const w of ws) {
      // dead (red): it missed its heartbeats; finished and stopped (muted):
      // it ended cleanly, nothing to do about it.
      const cls = w.state === 'dead' ? 'dead' : (w.state === 'finished' || w.state === 'stopped') ? 'exited' : '';
      const tr = el('tr', undefined, cls);
      tr.dataset.worker = w.name;
      tr.dataset.state = w.state;
      const state = w.state === 'dead' && w.leases > 0 ? 'dead (' + w.leases + ' leases expired)' : w.state;
      tr.append(el('td', w.name), el('td', state, 'state'), el('td', ago(w.last_seen, now)),
        el('td', fmt(w.leases), 'num'), el('td', w.rate.toFixed(1), 'num'), el('td', fmt(w.done), 'num'),
        el('td', fmt(w.failed), 'num'), el('td', fmt(w.expired), 'num'));
      const td = el('td');
      if (!readOnly && w.dead && w.leases > 0) {
        const b = el('button', 'Requeue its leases');
        b.type = 'button';
        b.className = 'requeue-worker';
        b.onclick = async () => {
          const r = await act('Requeue the ' + w.leases + ' leases of ' + w.name + '? Do it only if it is really dead.', 'api/requeue-worker', { worker: w.name });
          if (r) say('requeued ' + r.moved + ' items of ' + w.name);
        };
        td.append(b);
      }
      tr.append(td);
      body.append(tr);
    }
  }

  // ---- dead letters
  async function loadDead() {
    const cursor = deadCursors[deadCursors.length - 1];
    const body = $('dead-body');
    let pg;
    try {
      pg = await getJSON('api/failed?limit=50&match=' + encodeURIComponent(deadMatch) + '&cursor=' + encodeURIComponent(cursor));
    } catch (e) {
      body.replaceChildren();
      const td = el('td', e.status === 501 ? 'not available: ' + e.message : e.message, 'muted'); td.colSpan = 5;
      body.append(el('tr')); body.lastChild.append(td);
      return;
    }
    body.replaceChildren();
    set('dead-total', fmt(pg.total) + ' in all');
    if (!pg.items.length) {
      const td = el('td', deadMatch ? 'none match' : 'no dead letters', 'muted'); td.colSpan = 5;
      body.append(el('tr')); body.lastChild.append(td);
    }
    for (const it of pg.items) {
      const tr = el('tr');
      tr.dataset.key = it.key;
      tr.append(el('td', it.key, 'key'), el('td', String(it.attempts), 'num'), el('td', it.reason, 'reason'),
        el('td', new Date(it.at).toLocaleString()));
      const td = el('td');
      if (!readOnly) {
        const b = el('button', 'Requeue');
        b.type = 'button';
        b.className = 'requeue';
        b.onclick = async () => {
          const r = await act('Requeue ' + it.key + '? Its attempts start again from 0.', 'api/requeue', { keys: [it.key] });
          if (r) { say('requeued ' + r.moved + ' item'); loadDead(); }
        };
        td.append(b);
      }
      tr.append(td);
      body.append(tr);
    }
    $('dead-next').disabled = !pg.next;
    $('dead-next').onclick = () => { deadCursors.push(pg.next); loadDead(); };
    $('dead-prev').disabled = deadCursors.length < 2;
  }
  $('dead-prev').onclick = () => { if (deadCursors.length > 1) { deadCursors.pop(); loadDead(); } };
  $('dead-filter').onsubmit = (e) => { e.preventDefault(); deadMatch = $('dead-match').value.trim(); deadCursors = ['']; loadDead(); };
  if (!readOnly) {
    $('requeue-all').onclick = async () => {
      const what = deadMatch ? 'every dead letter whose URL or error contains "' + deadMatch + '"' : 'every dead letter';
      const r = await act('Requeue ' + what + '?', 'api/requeue', { all: true, match: deadMatch });
      if (r) { say('requeued ' + r.moved + ' items'); deadCursors = ['']; loadDead(); }
    };
    $('pause').onclick = async () => {
      const r = await act('Pause the crawl? Workers finish what they hold, then wait.', 'api/pause');
      if (r) say('crawl paused');
    };
    $('resume').onclick = async () => {
      const r = await act('Resume the crawl?', 'api/resume');
      if (r) say('crawl resumed');
    };
  }

  // ---- hosts, refreshed while the page is visible
  async function loadHosts() {
    const body = $('hosts-body');
    try {
      const hs = await getJSON('api/hosts?n=20');
      body.replaceChildren();
      if (!hs.length) { const td = el('td', 'no host yet', 'muted'); td.colSpan = 5; body.append(el('tr')); body.lastChild.append(td); }
      for (const h of hs) {
        const tr = el('tr');
        tr.append(el('td', h.host), el('td', fmt(h.pending), 'num'), el('td', fmt(h.in_flight), 'num'),
          el('td', fmt(h.errors), 'num'), el('td', h.delay_ms ? h.delay_ms.toFixed(0) + ' ms' : '–', 'num'));
        body.append(tr);
      }
    } catch (e) {
      body.replaceChildren();
      const td = el('td', e.status === 501 ? 'not available: ' + e.message : e.message, 'muted'); td.colSpan = 5;
      body.append(el('tr')); body.lastChild.append(td);
    }
  }
  setInterval(() => { if (!document.hidden) loadHosts(); }, 5000);
  loadHosts();

  // ---- lookup
  $('lookup-form').onsubmit = async (e) => {
    e.preventDefault();
    const key = $('lookup-key').value.trim();
    const dl = $('lookup-result');
    dl.replaceChildren();
    if (!key) return;
    const row = (k, v) => { if (v !== undefined && v !== '' && !(typeof v === 'string' && v.startsWith('0001'))) dl.append(el('dt', k), el('dd', String(v))); };
    try {
      const it = await getJSON('api/lookup?key=' + encodeURIComponent(key));
      dl.dataset.state = it.state;
      row('item', it.key); row('state', it.state.replace(/_/g, ' ')); row('attempts', it.attempts); row('depth', it.depth);
      row('leased by', it.worker); row('lease until', it.deadline && new Date(it.deadline).toLocaleString());
      row('due', it.due && new Date(it.due).toLocaleString()); row('last error', it.reason);
      row('failed at', it.at && new Date(it.at).toLocaleString()); row('labels', (it.labels || []).join(', '));
    } catch (err) {
      dl.dataset.state = err.status === 404 ? 'not_found' : 'error';
      row('result', err.status === 404 ? 'the crawl never saw this item' : err.status === 501 ? 'not available: ' + err.message : err.message);
    }
  };

  // ---- live updates
  const es = new EventSource('api/events');
  es.onmessage = (ev) => render(JSON.parse(ev.data));
  es.onerror = () => { set('state', 'reconnecting…'); $('state').className = 'pill error'; };
})();
