// The generated tokens as the page shows them: a chip per token coloured by the model's probability, and the
// inspector that hovering or clicking a chip fills — the token's two probabilities, labelled, and the model's most
// likely tokens with both. index.html loads it before its own script, whose globals ($, strings, language, pinned)
// these functions read when they are called. cmake/embed_file.cmake writes it into the page at build time.
'use strict';

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
  // Coloured by the model's own probability: how sure the model was, whatever the filters then did.
  if (!special) chip.style.background = probabilityColour(entry.raw_probability);
  chip.title = `${visible(entry.token)}  ${strings.rawShort} = ${entry.raw_probability.toFixed(4)} · ` +
    `${strings.keptShort} = ${entry.kept_probability.toFixed(4)}`;
  if (entry.grammar_allowed !== undefined) {
    chip.classList.add('masked');
    chip.dataset.allowed = entry.grammar_allowed;
    chip.title += `  · ${strings.grammarAllowed(entry.grammar_allowed)}`;
  }
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

// One labelled probability of the inspected token: "the model's probability (…): 49.19 %".
function probabilityLine(kind, label, probability) {
  const line = document.createElement('div');
  line.className = 'probability';
  line.dataset.kind = kind;
  const value = document.createElement('b');
  value.textContent = `${(probability * 100).toFixed(2)} %`;
  line.append(`${label}${language === 'zh' ? '：' : ': '}`, value);
  return line;
}

// The inspector: the token, its two probabilities (the model's and the kept set's, labelled), and the model's most
// likely tokens with both — a token a filter removed shows "cut" where its kept probability would be.
function inspect(entry) {
  const box = $('inspector-body');
  box.className = '';
  box.textContent = '';
  const picked = document.createElement('div');
  picked.className = 'picked';
  picked.dataset.tokenId = entry.token_id;
  const name = document.createElement('b');
  name.textContent = visible(entry.token);
  picked.append(name, ` id ${entry.token_id}`);
  const kept = document.createElement('div');
  kept.className = 'note';
  kept.textContent = entry.grammar_allowed === undefined ? strings.keptBy(entry.kept_candidates)
    : strings.keptByGrammar(entry.grammar_allowed, entry.kept_candidates);
  const table = document.createElement('table');
  table.className = 'bars';
  const heading = table.createTHead().insertRow();
  for (const title of ['token', '', strings.rawColumn, strings.keptColumn]) {
    const cell = document.createElement('th');
    cell.textContent = title;
    heading.append(cell);
  }
  const rows = table.createTBody();
  const top = (entry.top_logprobs || []).slice();
  // A sampled token can lie outside the top list: show it below, so the chosen one is always visible.
  if (!top.some((candidate) => candidate.token_id === entry.token_id)) top.push(entry);
  const highest = top.length ? top[0].raw_probability : 1;
  for (const candidate of top) {
    const row = rows.insertRow();
    if (candidate.token_id === entry.token_id) row.className = 'chosen';
    const token = row.insertCell();
    token.className = 'token';
    token.textContent = visible(candidate.token);
    token.title = `id ${candidate.token_id}`;
    const bar = row.insertCell();
    bar.className = 'bar';
    const fill = document.createElement('div');
    fill.className = 'fill';
    fill.style.width = `${(100 * candidate.raw_probability / highest).toFixed(1)}%`;
    bar.append(fill);
    const raw = row.insertCell();
    raw.className = 'percent';
    raw.textContent = `${(candidate.raw_probability * 100).toFixed(1)} %`;
    const keptCell = row.insertCell();
    keptCell.className = 'percent';
    if (candidate.kept_probability > 0) {
      keptCell.textContent = `${(candidate.kept_probability * 100).toFixed(1)} %`;
    } else {
      keptCell.className += ' cut';
      keptCell.textContent = strings.cut;
      keptCell.title = strings.cutTitle;
    }
  }
  box.append(picked, probabilityLine('raw', strings.rawLong, entry.raw_probability),
    probabilityLine('kept', strings.keptLong, entry.kept_probability), kept, table);
}
