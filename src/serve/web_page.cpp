// The page served at `/`: a chat with the model that shows, for every generated token, how sure the model was and
// which candidates it weighed, plus the time to the first token and the tokens per second. One document, plain
// JavaScript, no external resources. `?autotest=PROMPT` sends PROMPT greedily once and writes a JSON summary into
// #autotest-result (tests/web/web_page_test.sh reads it).
#include "serve/web_page.h"

namespace minigen {

std::string_view web_page_html() {
  return R"html(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>minigen</title>
<style>
  :root {
    --bg: #f5f6f8; --panel: #ffffff; --ink: #1d2330; --muted: #6b7385; --line: #e2e5eb;
    --accent: #3b5bdb; --accent-soft: #e7ecfd; --error: #c92a2a; --error-soft: #fff0f0;
    --mono: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace;
  }
  * { box-sizing: border-box; }
  body { margin: 0; background: var(--bg); color: var(--ink);
         font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; }
  header { display: flex; align-items: baseline; gap: 14px; padding: 12px 24px; background: var(--panel);
           border-bottom: 1px solid var(--line); }
  header h1 { margin: 0; font-size: 20px; letter-spacing: -0.02em; }
  header .model { font-family: var(--mono); font-size: 13px; color: var(--muted); }
  header #api-key { font-family: var(--mono); font-size: 13px; padding: 2px 6px; }
  header .hint { margin-left: auto; font-size: 13px; color: var(--muted); }
  main { display: grid; grid-template-columns: minmax(0, 1fr) 340px; gap: 18px; padding: 18px 24px;
         height: calc(100vh - 53px); }
  .panel { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; }
  .chat { display: flex; flex-direction: column; min-height: 0; }
  #conversation { flex: 1; overflow-y: auto; padding: 18px 20px; }
  .empty { color: var(--muted); text-align: center; margin-top: 18%; }
  .turn { margin-bottom: 18px; }
  .turn .who { font-size: 12px; font-weight: 600; text-transform: uppercase; letter-spacing: 0.06em;
               color: var(--muted); margin-bottom: 4px; }
  .turn.user .body { background: var(--accent-soft); border-radius: 8px; padding: 8px 12px;
                     white-space: pre-wrap; display: inline-block; max-width: 100%; }
  .turn.assistant .body { white-space: pre-wrap; line-height: 1.9; }
  .turn .meta { font-size: 12px; color: var(--muted); margin-top: 4px; }
  .chip { border-radius: 4px; padding: 1px 0; cursor: pointer; box-shadow: inset -1px 0 0 var(--panel); }
  .chip:hover { outline: 1px solid var(--accent); }
  .chip.selected { outline: 2px solid var(--accent); }
  .chip.special { font-family: var(--mono); font-size: 11px; color: var(--muted); padding: 1px 4px;
                  margin-left: 3px; border: 1px dashed #b8bfcc; }
  .cursor { display: inline-block; width: 7px; height: 1.1em; vertical-align: text-bottom; background: var(--accent);
            animation: blink 1s steps(2) infinite; }
  @keyframes blink { 50% { opacity: 0; } }
  .legend { display: flex; align-items: center; gap: 8px; padding: 6px 20px; font-size: 12px; color: var(--muted);
            border-top: 1px solid var(--line); }
  .legend .scale { width: 120px; height: 10px; border-radius: 3px;
                   background: linear-gradient(90deg, hsl(8 85% 82%), hsl(45 90% 80%), hsl(140 45% 85%)); }
  #error { display: none; margin: 0 20px 10px; padding: 8px 12px; border-radius: 8px; background: var(--error-soft);
           color: var(--error); border: 1px solid #f5c2c2; white-space: pre-wrap; }
  .composer { display: flex; gap: 10px; padding: 12px 20px 16px; border-top: 1px solid var(--line); }
  textarea { flex: 1; resize: none; height: 64px; padding: 9px 11px; font: inherit; border: 1px solid var(--line);
             border-radius: 8px; outline: none; }
  textarea:focus { border-color: var(--accent); box-shadow: 0 0 0 3px var(--accent-soft); }
  button { font: inherit; border-radius: 8px; border: 1px solid var(--line); background: var(--panel);
           padding: 0 14px; cursor: pointer; }
  button.primary { background: var(--accent); color: white; border-color: var(--accent); font-weight: 600;
                   min-width: 84px; }
  button.primary.stop { background: var(--error); border-color: var(--error); }
  button:disabled { opacity: 0.5; cursor: default; }
  .side { display: flex; flex-direction: column; gap: 12px; overflow-y: auto; min-height: 0; }
  .side .panel { padding: 10px 14px; }
  .side h2 { margin: 0 0 6px; font-size: 13px; text-transform: uppercase; letter-spacing: 0.06em; color: var(--muted); }
  .control { display: grid; grid-template-columns: 96px 1fr 58px; align-items: center; gap: 8px; margin: 4px 0;
             font-size: 14px; }
  .control input[type=range] { width: 100%; accent-color: var(--accent); }
  .control input[type=number] { width: 100%; padding: 3px 5px; font: 13px var(--mono); border: 1px solid var(--line);
                                border-radius: 5px; }
  .control .value { font: 13px var(--mono); text-align: right; }
  .note { font-size: 12px; color: var(--muted); margin: 0 0 4px; }
  .switch { display: flex; align-items: center; gap: 10px; margin-top: 8px; font-size: 14px; cursor: pointer; }
  .switch input { appearance: none; flex: none; width: 36px; height: 20px; margin: 0; border-radius: 10px;
                  background: #cfd4dc; position: relative; cursor: pointer; transition: background 0.15s; }
  .switch input::before { content: ""; position: absolute; top: 2px; left: 2px; width: 16px; height: 16px;
                          border-radius: 50%; background: white; transition: left 0.15s; }
  .switch input:checked { background: var(--accent); }
  .switch input:checked::before { left: 18px; }
  .stats { display: grid; grid-template-columns: 1fr 1fr; gap: 8px; }
  .stat { background: var(--bg); border-radius: 8px; padding: 6px 10px; }
  .stat .label { font-size: 12px; color: var(--muted); }
  .stat .number { font: 600 18px var(--mono); }
  .stat .unit { font-size: 12px; color: var(--muted); margin-left: 3px; }
  #inspector .picked { font: 14px var(--mono); margin-bottom: 4px; }
  #inspector .picked b { background: var(--accent-soft); padding: 1px 5px; border-radius: 4px; }
  .bars { width: 100%; border-collapse: collapse; font-size: 13px; }
  .bars td { padding: 1px 0; vertical-align: middle; }
  .bars td.token { font-family: var(--mono); white-space: pre; max-width: 110px; overflow: hidden;
                   text-overflow: ellipsis; padding-right: 8px; }
  .bars td.bar { width: 100%; }
  .bars .fill { height: 12px; border-radius: 3px; background: #adb9e8; min-width: 1px; }
  .bars tr.chosen .fill { background: var(--accent); }
  .bars tr.chosen td.token { font-weight: 700; }
  .bars td.percent { font-family: var(--mono); text-align: right; padding-left: 8px; white-space: nowrap; }
  #autotest-result { display: none; }
  @media (max-width: 860px) { main { grid-template-columns: 1fr; height: auto; } #conversation { min-height: 50vh; } }
</style>
</head>
<body>
<header>
  <h1>minigen</h1><span class="model" id="model-name">…</span>
  <input id="api-key" type="password" placeholder="API key" autocomplete="off" hidden>
  <span class="hint">hover or click a token to see the candidates the model weighed</span>
</header>
<main>
  <section class="panel chat">
    <div id="conversation"><div class="empty">Ask the model something. Each token of the answer is coloured by its
      probability.</div></div>
    <div class="legend">probability of the chosen token: <span>low</span><span class="scale"></span><span>high</span>
      <button id="clear" style="margin-left:auto;padding:2px 10px">New chat</button></div>
    <div id="error"></div>
    <div class="composer">
      <textarea id="message" placeholder="Message (Enter sends, Shift+Enter adds a line)"></textarea>
      <button id="send" class="primary">Send</button>
    </div>
  </section>
  <aside class="side">
    <section class="panel">
      <h2>Sampling</h2>
      <div class="control"><label for="temperature">temperature</label>
        <input id="temperature" type="range" min="0" max="2" step="0.05" value="0.85">
        <span class="value" id="temperature-value"></span></div>
      <div class="note">0 = greedy: always the most probable token</div>
      <div class="control"><label for="top-p">top-p</label>
        <input id="top-p" type="range" min="0.05" max="1" step="0.05" value="0.85">
        <span class="value" id="top-p-value"></span></div>
      <div class="control"><label for="top-k">top-k</label>
        <input id="top-k" type="number" min="0" value="50"><span class="value">0 = off</span></div>
      <div class="control"><label for="max-tokens">max tokens</label>
        <input id="max-tokens" type="number" min="1" max="4096" value="128"><span></span></div>
      <div class="control"><label for="seed">seed</label>
        <input id="seed" type="number" min="0" value="0"><span class="value"></span></div>
      <div class="note">same seed and settings → same answer</div>
      <label class="switch"><input id="use-cache" type="checkbox" checked><span>KV cache
        <span class="note" id="cache-note"></span></span></label>
    </section>
    <section class="panel">
      <h2>Speed</h2>
      <div class="stats">
        <div class="stat"><div class="label">time to first token</div>
          <span class="number" id="ttft">–</span><span class="unit">ms</span></div>
        <div class="stat" title="the tokens after the first one, over the time after the first one">
          <div class="label">decode speed</div>
          <span class="number" id="rate">–</span><span class="unit">tok/s</span></div>
        <div class="stat"><div class="label">tokens generated</div>
          <span class="number" id="token-count">–</span></div>
        <div class="stat"><div class="label">total time</div>
          <span class="number" id="total">–</span><span class="unit">ms</span></div>
      </div>
    </section>
    <section class="panel" id="inspector">
      <h2>Token</h2>
      <div id="inspector-body" class="note">No token yet.</div>
    </section>
  </aside>
</main>
<pre id="autotest-result"></pre>
<script>
'use strict';
const $ = (id) => document.getElementById(id);
const conversation = [];      // {role, content} sent as `messages` with every request
let busy = false;
let controller = null;        // AbortController of the running request
let pinned = null;            // the token chip clicked last

// ---- controls ---------------------------------------------------------------------------------------------------
function showControlValues() {
  const t = Number($('temperature').value);
  $('temperature-value').textContent = t === 0 ? 'greedy' : t.toFixed(2);
  $('top-p-value').textContent = Number($('top-p').value).toFixed(2);
  $('cache-note').textContent = $('use-cache').checked
    ? 'on: each step feeds only the new token'
    : 'off: each step re-feeds the whole sequence';
}
for (const id of ['temperature', 'top-p', 'use-cache']) $(id).addEventListener('input', showControlValues);
showControlValues();

function integerControl(id, low, fallback) {
  const value = Math.floor(Number($(id).value));
  return Number.isFinite(value) && value >= low ? value : fallback;
}

function requestBody() {
  return {
    messages: conversation.map((m) => ({ role: m.role, content: m.content })),
    stream: true,
    logprobs: true,
    top_logprobs: 10,
    temperature: Number($('temperature').value),
    top_p: Number($('top-p').value),
    top_k: integerControl('top-k', 0, 50),
    max_tokens: integerControl('max-tokens', 1, 128),
    seed: integerControl('seed', 0, 0),
    use_cache: $('use-cache').checked,
  };
}

// ---- conversation rendering -------------------------------------------------------------------------------------
function addTurn(role, text) {
  const empty = document.querySelector('#conversation .empty');
  if (empty) empty.remove();
  const turn = document.createElement('div');
  turn.className = 'turn ' + role;
  const who = document.createElement('div');
  who.className = 'who';
  who.textContent = role === 'user' ? 'You' : 'Model';
  const body = document.createElement('div');
  body.className = 'body';
  body.textContent = text;
  const meta = document.createElement('div');
  meta.className = 'meta';
  turn.append(who, body, meta);
  $('conversation').append(turn);
  scrollDown();
  return { turn, body, meta };
}

function scrollDown() {
  const box = $('conversation');
  box.scrollTop = box.scrollHeight;
}

// Red for unlikely tokens, yellow in the middle, green for near-certain ones.
function probabilityColour(p) {
  const hue = 8 + 132 * Math.max(0, Math.min(1, p));
  return `hsl(${hue} ${p > 0.5 ? 45 : 80}% ${p > 0.5 ? 87 : 86}%)`;
}

// Whitespace made visible for the candidate list, where a lone space would be invisible.
function visible(text) {
  return text.replace(/ /g, '\u00b7').replace(/\n/g, '\u21b5').replace(/\t/g, '\u21e5') || '\u2205';
}

function addChip(body, entry, text) {
  const chip = document.createElement('span');
  const special = text === '';
  chip.className = special ? 'chip special' : 'chip';
  chip.textContent = special ? entry.token : text;
  if (!special) chip.style.background = probabilityColour(entry.probability);
  chip.title = `${visible(entry.token)}  p = ${entry.probability.toFixed(4)}`;
  chip.entry = entry;
  chip.addEventListener('mouseenter', () => inspect(entry));
  chip.addEventListener('mouseleave', () => { if (pinned) inspect(pinned.entry); });
  chip.addEventListener('click', () => {
    if (pinned) pinned.classList.remove('selected');
    pinned = pinned === chip ? null : chip;
    if (pinned) pinned.classList.add('selected');
    inspect(entry);
  });
  body.insertBefore(chip, body.querySelector('.cursor'));
}

function inspect(entry) {
  const box = $('inspector-body');
  box.className = '';
  box.textContent = '';
  const picked = document.createElement('div');
  picked.className = 'picked';
  const name = document.createElement('b');
  name.textContent = visible(entry.token);
  picked.append(name, ` id ${entry.token_id} · p = ${(entry.probability * 100).toFixed(2)} %`);
  const kept = document.createElement('div');
  kept.className = 'note';
  kept.textContent = `${entry.kept_candidates} candidate${entry.kept_candidates === 1 ? '' : 's'} kept by ` +
    'top-k / top-p; the most probable:';
  const table = document.createElement('table');
  table.className = 'bars';
  const top = (entry.top_logprobs || []).slice();
  // A sampled token can lie outside the top list: show it below, so the chosen one is always visible.
  if (!top.some((candidate) => candidate.token_id === entry.token_id)) top.push(entry);
  const highest = top.length ? top[0].probability : 1;
  for (const candidate of top) {
    const row = table.insertRow();
    if (candidate.token_id === entry.token_id) row.className = 'chosen';
    const token = row.insertCell();
    token.className = 'token';
    token.textContent = visible(candidate.token);
    token.title = `id ${candidate.token_id}`;
    const bar = row.insertCell();
    bar.className = 'bar';
    const fill = document.createElement('div');
    fill.className = 'fill';
    fill.style.width = `${(100 * candidate.probability / highest).toFixed(1)}%`;
    bar.append(fill);
    const percent = row.insertCell();
    percent.className = 'percent';
    percent.textContent = `${(candidate.probability * 100).toFixed(1)} %`;
  }
  box.append(picked, kept, table);
}

function showError(message) {
  $('error').textContent = message;
  $('error').style.display = message ? 'block' : 'none';
}

function setStat(id, value) { $(id).textContent = value; }

// ---- sending and streaming --------------------------------------------------------------------------------------
function setBusy(on) {
  busy = on;
  $('send').textContent = on ? 'Stop' : 'Send';
  $('send').classList.toggle('stop', on);
  $('clear').disabled = on;
}

// Sends the conversation and streams the answer. Resolves to a summary of the answer (or throws the error shown).
async function send() {
  const text = $('message').value.trim();
  if (!text || busy) return null;
  showError('');
  conversation.push({ role: 'user', content: text });
  addTurn('user', text);
  $('message').value = '';
  const body = requestBody();
  const answer = addTurn('assistant', '');
  const cursor = document.createElement('span');
  cursor.className = 'cursor';
  answer.body.append(cursor);
  const run = { text: '', entries: [], sent: performance.now(), first: 0, last: 0 };
  for (const id of ['ttft', 'rate', 'token-count', 'total']) setStat(id, '–');
  const ticker = setInterval(() => {
    if (!run.first) setStat('ttft', Math.round(performance.now() - run.sent));
    setStat('total', Math.round(performance.now() - run.sent));
  }, 100);
  if (pinned) pinned.classList.remove('selected');
  pinned = null;
  controller = new AbortController();
  setBusy(true);

  const onChunk = (chunk) => {
    if (chunk.error) throw new Error(chunk.error.message || JSON.stringify(chunk.error));
    const choice = (chunk.choices || [])[0];
    if (!choice) return;
    const piece = (choice.delta && choice.delta.content) || '';
    const entry = choice.logprobs && choice.logprobs.content && choice.logprobs.content[0];
    if (!entry && !piece) return;
    const now = performance.now();
    if (!run.first) run.first = now;
    run.last = now;
    run.text += piece;
    if (entry) {
      run.entries.push(entry);
      addChip(answer.body, entry, piece);
      if (!pinned) inspect(entry);
    } else {
      answer.body.insertBefore(document.createTextNode(piece), cursor);
    }
    const stats = summary(run);
    setStat('ttft', stats.ttft_ms.toFixed(0));
    setStat('rate', stats.tokens_per_second.toFixed(1));
    setStat('token-count', stats.tokens);
    scrollDown();
  };

  try {
    const response = await fetch('/v1/chat/completions', {
      method: 'POST', headers: { 'Content-Type': 'application/json', ...authHeaders() },
      body: JSON.stringify(body), signal: controller.signal,
    }).catch((error) => {
      if (error.name === 'AbortError') throw error;
      throw new Error(`Cannot reach the minigen server (${error.message}). Is \`minigen serve\` still running?`);
    });
    if (response.status === 401) {
      askForKey();
      throw new Error('This server needs an API key: type it in the box at the top, then send again.');
    }
    if (!response.ok) {
      let message = `HTTP ${response.status} ${response.statusText}`;
      try {
        const error = await response.json();
        if (error && error.error && error.error.message) message = `Error ${response.status}: ${error.error.message}`;
      } catch (ignored) { /* the body was not JSON: keep the status line */ }
      throw new Error(message);
    }
    // Server-sent events: lines `data: {json}`, blank lines between events, `: keep-alive` comments, `data: [DONE]`.
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    let finished = false;
    while (!finished) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let newline;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline).replace(/\r$/, '');
        buffer = buffer.slice(newline + 1);
        if (!line.startsWith('data:')) continue;
        const data = line.slice(5).trim();
        if (data === '[DONE]') { finished = true; break; }
        onChunk(JSON.parse(data));
      }
    }
    conversation.push({ role: 'assistant', content: run.text });
    answer.meta.textContent = describe(run, body);
    const stats = summary(run);
    return Object.assign({ text: run.text, max_tokens: body.max_tokens }, stats,
      { first_token_candidates: run.entries.length ? run.entries[0].top_logprobs : [],
        kept_candidates_first: run.entries.length ? run.entries[0].kept_candidates : 0 });
  } catch (error) {
    if (error.name === 'AbortError' && run.entries.length) {
      conversation.push({ role: 'assistant', content: run.text });
      answer.meta.textContent = 'stopped · ' + describe(run, body);
      return null;
    }
    // The request failed: take the question back into the box so it can be sent again.
    conversation.pop();
    answer.turn.previousSibling.remove();
    answer.turn.remove();
    if (!conversation.length) $('conversation').innerHTML = '<div class="empty">Nothing sent yet.</div>';
    $('message').value = text;
    if (error.name !== 'AbortError') showError(error.message || String(error));
    throw error;
  } finally {
    clearInterval(ticker);
    cursor.remove();
    setStat('total', Math.round((run.last || performance.now()) - run.sent));
    controller = null;
    setBusy(false);
  }
}

function describe(run, body) {
  const stats = summary(run);
  return `${stats.tokens} tokens · TTFT ${stats.ttft_ms.toFixed(0)} ms · ` +
    `${stats.tokens_per_second.toFixed(1)} tok/s · KV cache ${body.use_cache ? 'on' : 'off'} · ` +
    (body.temperature === 0 ? 'greedy' : `T ${body.temperature}, top-p ${body.top_p}, top-k ${body.top_k}`);
}

// TTFT: send → first token. tokens/s: the tokens after the first over the time after it (the decode rate);
// with a single token, that token over the whole request.
function summary(run) {
  const tokens = run.entries.length;
  const ttft = run.first ? run.first - run.sent : 0;
  const decodeSeconds = (run.last - run.first) / 1000;
  const rate = tokens >= 2 && decodeSeconds > 0 ? (tokens - 1) / decodeSeconds
    : tokens > 0 ? tokens / Math.max((run.last - run.sent) / 1000, 1e-3) : 0;
  return { tokens, ttft_ms: ttft, tokens_per_second: rate };
}

function sendFromBox() {
  if (busy) { if (controller) controller.abort(); return; }
  send().catch(() => {});
}
$('send').addEventListener('click', sendFromBox);
$('message').addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey) { event.preventDefault(); sendFromBox(); }
});
$('clear').addEventListener('click', () => {
  conversation.length = 0;
  pinned = null;
  $('conversation').innerHTML = '<div class="empty">New conversation.</div>';
  $('inspector-body').className = 'note';
  $('inspector-body').textContent = 'No token yet.';
  showError('');
});

// A server started with --api-key answers /v1/* only with the key: ask for it once, keep it for this tab.
const apiKey = $('api-key');
apiKey.value = sessionStorage.getItem('minigen-api-key') || '';
function authHeaders() { return apiKey.value ? { Authorization: `Bearer ${apiKey.value}` } : {}; }
function askForKey() { apiKey.hidden = false; apiKey.focus(); }
function loadModelName() {
  fetch('/v1/models', { headers: authHeaders() }).then((r) => {
    if (r.status === 401) {
      askForKey();
      throw new Error('API key needed');
    }
    return r.json();
  }).then((models) => {
    $('model-name').textContent = models.data[0].id;
  }).catch((error) => { $('model-name').textContent = error.message === 'API key needed' ? 'API key needed' : 'model unknown'; });
}
apiKey.addEventListener('change', () => {
  sessionStorage.setItem('minigen-api-key', apiKey.value);
  showError('');
  loadModelName();
});
loadModelName();

// ---- test hook: ?autotest=PROMPT --------------------------------------------------------------------------------
const autotestPrompt = new URLSearchParams(location.search).get('autotest');
if (autotestPrompt) {
  $('temperature').value = 0;
  showControlValues();
  $('message').value = autotestPrompt;
  const finish = (state, result) => {
    $('autotest-result').textContent = JSON.stringify(result);
    document.body.dataset.autotest = state;
  };
  send().then((result) => {
    const first = document.querySelector('#conversation .chip');
    if (first) first.click();  // show the first token's candidates
    finish('done', result);
  })
    .catch((error) => finish('error', { error: error.message || String(error) }));
}
</script>
</body>
</html>
)html";
}

}  // namespace minigen
