"""Builds minigen's training corpus from text that Debian packages ship, and writes it as MiniMind-style JSONL.

    /usr/bin/python3 tools/corpus/build_corpus.py --out /work/minigen-data/corpus [--gcide-copyright FILE]

(build_corpus.sh installs the packages first and calls this.) Outputs, in --out:
  pretrain_train.jsonl, pretrain_heldout.jsonl   {"text": ..., "source": ...} per sample
  sft_train.jsonl, sft_heldout.jsonl             {"conversations": [{"role": "user", ...}, {"role": "assistant", ...}],
                                                  "source": ...}
  tokenizer_corpus.txt                           every pretrain_train text, one blank line between samples
  SOURCES.md                                     per source: package, license as its copyright file states it, bytes, used
Everything is deterministic: the inputs are read in a fixed order, choices are made by SHA-256 of a key, never by a
random generator, and the held-out split is the ~2 % of items whose key hashes below a threshold. An "item" is a
dictionary headword, a Bible chapter, a poem or a fortune: every sample made from one item, pretraining or SFT, lands in
the same split, so held-out samples are about things the model never saw.
"""
import argparse
import dataclasses
import hashlib
import json
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from readers import (WORDNET_TAXON, clean_fortune, parse_devil, parse_jargon, parse_poem,  # noqa: E402
                     parse_wordnet_entry, read_dictd, read_fortune_file, read_kjv, reference, render_wordnet,
                     wordnet_blocklist)

FORTUNE_DIR = pathlib.Path("/usr/share/games/fortunes")
DOC_DIR = pathlib.Path("/usr/share/doc")

HELDOUT_PER_MILLE = 20  # ~2 % of items go to the held-out split
ENGLISH_CHUNK_BYTES = 800  # a pretraining sample stays under ~256 tokens (≈ 3.5–4 bytes per English token)
CHINESE_CHUNK_BYTES = 420  # ≈ 140 characters
POEM_REPEAT = 4  # the Chinese poems are ~0.3 % of the text: repeat them in pretraining (and tokenizer) text
SFT_ANSWER_MAX_CHARS = 320


# ---------------------------------------------------------------------------------------------------------------
# Sources and their licenses
# ---------------------------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Source:
    name: str
    package: str
    files: list  # what is read (for SOURCES.md)
    license: str  # as the copyright file states it
    license_phrase: str  # must appear in /usr/share/doc/<package>/copyright, else the source is left out
    used: bool
    why: str
    bytes_read: int = 0
    bytes_used: int = 0


SOURCES = {
    "kjv": Source(
        "King James Bible", "bible-kjv-text", ["/usr/lib/bible.data (read with `bible -f`)"],
        "\"The copyright for the King James Version text of the Bible is expired\" (public domain); the retrieval "
        "program is \"provided for unrestricted use\", Debian's changes GPL-2+",
        "copyright for the King James Version text of the Bible is expired", True,
        "public domain text"),
    "wordnet": Source(
        "WordNet 3.0", "dict-wn", ["/usr/share/dictd/wn.index", "/usr/share/dictd/wn.dict.dz"],
        "WordNet 3.0 license: \"Permission to use, copy, modify and distribute this software and database ... for "
        "any purpose and without fee or royalty is hereby granted\", provided the copyright notice and disclaimer "
        "appear on all copies; Debian packaging GPL-2+",
        "Permission to use, copy, modify and distribute this software and", True,
        "permissive; the WordNet notice must ship with the models (see below)"),
    "devil": Source(
        "The Devil's Dictionary (Ambrose Bierce)", "dict-devil",
        ["/usr/share/dictd/devil.index", "/usr/share/dictd/devil.dict.dz"],
        "\"The Devil's Dictionary is in the public domain, its copyright has expired\"",
        "is in the public domain", True, "public domain text"),
    "jargon": Source(
        "The Jargon File 4.4.7", "dict-jargon", ["/usr/share/dictd/jargon.index", "/usr/share/dictd/jargon.dict.dz"],
        "\"The Jargon File is in the public domain, to be freely used, shared, and modified\" (License: "
        "public-domain); Debian packaging GPL-2+",
        "The Jargon File is in the public domain", True, "public domain text"),
    "gcide": Source(
        "GCIDE (Collaborative International Dictionary of English)", "dict-gcide", ["(not installed)"],
        "GNU General Public License, version 2 or later (\"GCIDE is free software; you can redistribute it and/or "
        "modify it under the terms of the GNU General Public License\")",
        "GNU General Public License", False,
        "copyleft: a model trained on it may be a derivative work that must then be GPL; WordNet covers definitions"),
    "fortunes": Source(
        "fortune cookies (English)", "fortunes",
        ["/usr/share/games/fortunes/<topic> (see below for the topics read)"],
        "BSD (\"This program falls under the BSD copyright\", Regents of the University of California, with "
        "clause 3 deleted)", "This program falls under the BSD copyright", True,
        "BSD; topics `ascii-art` (pictures), `translate-me` (non-English), `ethnic` and `men-women` (stereotype "
        "jokes) left out"),
    "fortunes-min": Source(
        "fortune cookies (fortunes, literature, riddles)", "fortunes-min",
        ["/usr/share/games/fortunes/fortunes", "/usr/share/games/fortunes/literature",
         "/usr/share/games/fortunes/riddles"],
        "BSD, as for `fortunes`", "This program falls under the BSD copyright", True, "BSD"),
    "fortunes-off": Source(
        "offensive fortune cookies", "fortunes-off", ["(not installed)"], "BSD, as for `fortunes`", "", False,
        "offensive content, left out on purpose"),
    "tang300": Source(
        "Three Hundred Tang Poems (唐诗三百首)", "fortunes-zh", ["/usr/share/games/fortunes/tang300"],
        "package: GPL-3.0+ (\"Files: * ... License: GPL-3.0+\"); the poems themselves are Tang-dynasty works "
        "(618–907) whose authors died over a thousand years ago: public domain", "GPL-3.0+", True,
        "public-domain poems; only the packaging (ANSI colours, layout) is GPL, and it is stripped"),
    "song100": Source(
        "One Hundred Song Poems (宋诗一百首)", "fortunes-zh", ["/usr/share/games/fortunes/song100"],
        "as tang300; Song-dynasty works (960–1279): public domain", "GPL-3.0+", True,
        "public-domain poems; only the packaging is GPL, and it is stripped"),
    "fortunes-zh-chinese": Source(
        "modern Chinese sayings and Debian documentation excerpts", "fortunes-zh",
        ["/usr/share/games/fortunes/chinese"], "GPL-3.0+ (package); excerpts of the Debian Reference (GPL) and "
        "other modern texts", "GPL-3.0+", False, "modern copyrighted or GPL texts, not public domain"),
}

FORTUNE_TOPICS_EXCLUDED = {"ascii-art", "translate-me", "ethnic", "men-women"}
FORTUNE_TOPICS_MIN = ("fortunes", "literature", "riddles")  # shipped by fortunes-min
FORTUNE_TOPICS_CHINESE = ("chinese", "tang300", "song100")  # shipped by fortunes-zh
JOKE_TOPICS = {"humorists", "riddles", "zippy", "computers", "work", "food", "pets", "sports", "cookie"}


def check_licenses(gcide_copyright):
    """Marks a source unused when its copyright file is missing or no longer states what SOURCES says."""
    for key, source in SOURCES.items():
        path = DOC_DIR / source.package / "copyright"
        if key == "gcide":
            path = pathlib.Path(gcide_copyright) if gcide_copyright else None
        if not source.used:
            continue
        text = path.read_text(encoding="utf-8", errors="replace") if path and path.exists() else ""
        if source.license_phrase not in text:
            print(f"warning: {path} does not state '{source.license_phrase}'; leaving {source.name} out",
                  file=sys.stderr)
            source.used = False
            source.why = "license text not found as expected: re-check by hand"


# ---------------------------------------------------------------------------------------------------------------
# Helpers: hashing, splitting, cleaning
# ---------------------------------------------------------------------------------------------------------------

def digest(key):
    return int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:12], 16)


def is_heldout(item_key):
    return digest("split:" + item_key) % 1000 < HELDOUT_PER_MILLE


def pick(options, key):
    """A deterministic choice among options by the hash of key."""
    return options[digest(key) % len(options)]


def chosen(key, per_mille):
    """True for a deterministic per_mille/1000 share of keys."""
    return digest("keep:" + key) % 1000 < per_mille


def chunk_paragraphs(header, paragraphs, limit, continued):
    """Groups paragraphs into samples of at most ~limit bytes, each starting with header (then `continued`).
    A paragraph longer than the limit is cut at sentence ends."""
    pieces = []
    for paragraph in paragraphs:
        while len(paragraph.encode("utf-8")) > limit:
            cut = max(paragraph.rfind(". ", 0, limit // 2 + limit // 3), paragraph.rfind("; ", 0, limit // 2))
            cut = cut + 1 if cut > limit // 4 else limit // 2
            pieces.append(paragraph[:cut].strip())
            paragraph = paragraph[cut:].strip()
        if paragraph:
            pieces.append(paragraph)
    chunks = []
    current = header
    for piece in pieces:
        candidate = current + "\n" + piece if current else piece
        if len(candidate.encode("utf-8")) > limit and current not in (header, continued):
            chunks.append(current)
            candidate = continued + "\n" + piece
        current = candidate
    if current not in (header, continued):
        chunks.append(current)
    return chunks


def sentence(text):
    """Capitalised, ends with a full stop unless it already ends with punctuation."""
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if re.search(r"[.!?][\"”’)]*$", text) else text + "."


# ---------------------------------------------------------------------------------------------------------------
# Building the samples
# ---------------------------------------------------------------------------------------------------------------

class Corpus:
    def __init__(self):
        self.pretrain = []  # (item_key, source, text)
        self.sft = []  # (item_key, source, user, assistant)

    def add_text(self, item_key, source, text, repeat=1):
        for copy in range(repeat):
            self.pretrain.append((item_key, source, text, copy))

    def add_chat(self, item_key, source, user, assistant):
        assistant = assistant.strip()
        if assistant and len(assistant) <= SFT_ANSWER_MAX_CHARS:
            self.sft.append((item_key, source, user.strip(), assistant))


def contains_blocked(text, blocked_pattern):
    return blocked_pattern is not None and blocked_pattern.search(text) is not None


def build_kjv(corpus, bible_text):
    verses = read_kjv(bible_text)
    SOURCES["kjv"].bytes_read = len(bible_text.encode("utf-8"))
    by_chapter = {}
    for book, chapter, verse, text in verses:
        by_chapter.setdefault((book, chapter), []).append((verse, text))
    for (book, chapter), chapter_verses in by_chapter.items():
        item = f"kjv:{book} {chapter}"
        group = []
        for verse, text in chapter_verses:
            line = f"{reference(book, chapter, verse)} {text}"
            if group and len("\n".join(group + [line]).encode("utf-8")) > ENGLISH_CHUNK_BYTES // 1.3:
                corpus.add_text(item, "kjv", "\n".join(group))
                group = []
            group.append(line)
        if group:
            corpus.add_text(item, "kjv", "\n".join(group))
        for verse, text in chapter_verses:
            ref = reference(book, chapter, verse)
            key = f"{item}:{verse}"
            if chosen(key + ":say", 280):
                question = pick([f"What does {ref} say?", f"What is written in {ref}?", f"Quote {ref}.",
                                 f"Recite {ref} (KJV)."], key)
                corpus.add_chat(item, "kjv", question, text)
            if chosen(key + ":which", 70):
                words = text.split()
                fragment = text if len(words) <= 14 else " ".join(words[:10]).rstrip(",;:") + " …"
                question = pick([f"Which verse says “{fragment}”?", f"Where in the Bible is “{fragment}”?"], key)
                corpus.add_chat(item, "kjv", question, f"{ref} (King James Version).")


def build_wordnet(corpus, blocked_words):
    raw_entries, size = read_dictd("wn")
    SOURCES["wordnet"].bytes_read = size
    # The index holds headwords in lower case; the entry's first line has the word as written ("acceptor RNA").
    parsed = [(body.splitlines()[0].strip() or headword, parse_wordnet_entry(headword, body))
              for headword, body in raw_entries]
    blocked_words |= wordnet_blocklist(parsed)
    blocked_pattern = blocklist_pattern(blocked_words)
    # Taxonomic names ("genus Canis", "family Canidae") are left out: Latin names a small model cannot use.
    parsed = [(headword, senses) for headword, senses in parsed if not WORDNET_TAXON.match(headword)]
    entries_present = {headword.lower() for headword, senses in parsed if headword.lower() not in blocked_words}
    templates_by_pos = ["What does ‘{w}’ mean?", "What does '{w}' mean?", "Define {w}.", "What is the meaning of "
                        "“{w}”?", "What does the word {w} mean?", "Give me a definition of '{w}'."]
    for headword, senses in parsed:
        if headword.lower() in blocked_words:
            continue
        kept = [sense for sense in senses if not sense.flagged and sense.gloss]
        for sense in kept:
            sense.synonyms = [s for s in sense.synonyms if s.lower() not in blocked_words]
            sense.examples = [e for e in sense.examples if not contains_blocked(e, blocked_pattern)]
        if not kept:
            continue
        item = f"wordnet:{headword.lower()}"
        lines = render_wordnet(headword, kept, lambda word: word.lower() in entries_present)
        for chunk in chunk_paragraphs(lines[0], lines[1:], ENGLISH_CHUNK_BYTES, f"{headword} (continued)"):
            corpus.add_text(item, "wordnet", chunk)
        # SFT: plain words (letters, hyphens, at most two words) whose first gloss is short.
        first = kept[0]
        if (re.fullmatch(r"[a-z][a-z\-]*(?: [a-z][a-z\-]*)?", headword) and 8 <= len(first.gloss) <= 220
                and chosen(item, 210)):
            corpus.add_chat(item, "wordnet", pick(templates_by_pos, item).format(w=headword), sentence(first.gloss))
            if len(kept) > 1 and chosen(item + ":senses", 120):
                answer = " ".join(f"{n}. ({s.pos}) {sentence(s.gloss)}" for n, s in enumerate(kept[:3], 1))
                corpus.add_chat(item, "wordnet", f"What are the meanings of ‘{headword}’?", answer)
            if first.synonyms and chosen(item + ":syn", 150):
                corpus.add_chat(item, "wordnet", pick([f"Give me a synonym for ‘{headword}’.",
                                                       f"What is another word for '{headword}'?"], item),
                                sentence(", ".join(first.synonyms[:3])))
    return blocked_pattern


def blocklist_pattern(words):
    if not words:
        return None
    alternatives = "|".join(sorted((re.escape(word) for word in words), key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z])(?:{alternatives})(?![A-Za-z])", re.IGNORECASE)


def build_devil(corpus, blocked_pattern):
    entries, size = read_dictd("devil")
    SOURCES["devil"].bytes_read = size
    for headword, body in entries:
        parsed = parse_devil(body)
        if not parsed or contains_blocked(body, blocked_pattern):
            continue
        word, part, paragraphs = parsed
        if not paragraphs:
            continue
        item = f"devil:{word}"
        header = f"{word.upper()}, {part}".strip().rstrip(",") if part else word.upper()
        for chunk in chunk_paragraphs(header, paragraphs, ENGLISH_CHUNK_BYTES, f"{word.upper()} (continued)"):
            corpus.add_text(item, "devil", chunk)
        definition = paragraphs[0]
        if len(definition) <= 260:
            corpus.add_chat(item, "devil", pick([f"What does the Devil's Dictionary say about ‘{word}’?",
                                                 f"Define {word} as Ambrose Bierce would.",
                                                 f"What is {word}, according to The Devil's Dictionary?"], item),
                            definition)


def build_jargon(corpus, blocked_pattern):
    entries, size = read_dictd("jargon")
    SOURCES["jargon"].bytes_read = size
    for headword, body in entries:
        if contains_blocked(body, blocked_pattern):
            continue
        paragraphs = parse_jargon(headword, body)
        if not paragraphs:
            continue
        item = f"jargon:{headword.lower()}"
        for chunk in chunk_paragraphs(headword, paragraphs, ENGLISH_CHUNK_BYTES, f"{headword} (continued)"):
            corpus.add_text(item, "jargon", chunk)
        # SFT: the first sense, without its etymology [..] and its "1. n." marker.
        first = paragraphs[0]
        previous = None
        while previous != first:  # leading [etymology], (also ...), "1.", "n." markers
            previous = first
            first = re.sub(r"^(?:\[[^\]]*\]|\([^)]*\)|\d+\.|(?:n|v|vt|vi|adj|adv|interj|excl|pron|prep|conj|"
                           r"obs|techspeak)\.,?)\s*", "", first)
        if 20 <= len(first) <= 260 and not first.startswith("See ") and re.match(r"[A-Za-z“\"]", first):
            corpus.add_chat(item, "jargon", pick([f"What does ‘{headword}’ mean in hacker jargon?",
                                                  f"In the Jargon File, what is {headword}?",
                                                  f"What is '{headword}' in hacker slang?"], item), sentence(first))


def build_fortunes(corpus, blocked_pattern):
    topics = sorted(path.name for path in FORTUNE_DIR.iterdir()
                    if path.is_file() and not path.name.endswith((".dat", ".u8")) and not path.is_symlink())
    read_topics = []
    for topic in topics:
        if topic in FORTUNE_TOPICS_CHINESE:
            continue
        source = "fortunes-min" if topic in FORTUNE_TOPICS_MIN else "fortunes"
        entries, size = read_fortune_file(FORTUNE_DIR / topic)
        SOURCES[source].bytes_read += size
        if topic in FORTUNE_TOPICS_EXCLUDED:
            continue
        read_topics.append(topic)
        for entry in entries:
            text, attribution = clean_fortune(entry)
            if not text or contains_blocked(text, blocked_pattern) or len(text.encode("utf-8")) > 1200:
                continue
            item = f"fortune:{text}"
            corpus.add_text(item, source, text)
            if len(text) > 300 or not chosen(item + ":sft", 450):
                continue
            if attribution and len(text) - len(attribution) < 220 and chosen(item + ":who", 400):
                quote = re.sub(r"\n\s*--\s*.+$", "", text).strip()
                corpus.add_chat(item, source, f"Who said “{' '.join(quote.split())}”?", sentence(attribution))
            elif topic in JOKE_TOPICS:
                corpus.add_chat(item, source, pick(["Tell me a joke.", "Tell me something funny.",
                                                    "Make me laugh."], item), text)
            elif attribution:
                corpus.add_chat(item, source, pick(["Give me a quote.", "Tell me a famous quotation.",
                                                    "Tell me a fortune."], item), text)
            else:
                corpus.add_chat(item, source, pick(["Tell me a fortune.", "Tell me a fortune cookie.",
                                                    "Say something wise."], item), text)
    SOURCES["fortunes"].files = [f"/usr/share/games/fortunes/{{{','.join(t for t in read_topics if t not in FORTUNE_TOPICS_MIN)}}}"]


def build_poems(corpus):
    chinese_entries, size = read_fortune_file(FORTUNE_DIR / "chinese")
    SOURCES["fortunes-zh-chinese"].bytes_read = size
    poems = []
    for source in ("tang300", "song100"):
        entries, size = read_fortune_file(FORTUNE_DIR / source)
        SOURCES[source].bytes_read = size
        for entry in entries:
            parsed = parse_poem(entry)
            if parsed:
                poems.append((source, *parsed))
    by_author = {}
    for source, title, author, body in poems:
        by_author.setdefault(author, []).append((source, title))
    for source, title, author, body in poems:
        item = f"poem:{title}:{author}"
        header = f"{title}\n作者：{author}"
        chunks = chunk_paragraphs(header, body, CHINESE_CHUNK_BYTES, f"{title}（续）")
        for chunk in chunks:
            corpus.add_text(item, source, chunk, repeat=POEM_REPEAT)
        verse_lines = [line for line in body if re.search(r"[，。？！；]", line) and not re.fullmatch(r"其.+", line)]
        corpus.add_chat(item, source, pick([f"{title}的作者是谁？", f"{title}是谁写的？", f"谁写了{title}？"], item),
                        pick([f"{title}的作者是{author}。", f"是{author}写的。"], item + ":a"))
        poem_text = "\n".join(verse_lines)
        if 0 < len(poem_text) <= 160:
            corpus.add_chat(item, source, pick([f"请背诵{title}。", f"背一下{author}的{title}。"], item), poem_text)
        elif verse_lines:
            corpus.add_chat(item, source, f"{title}的开头是什么？", "\n".join(verse_lines[:2]))
        for number, line in enumerate(verse_lines):
            key = f"{item}:{number}"
            halves = [half for half in re.split(r"(?<=[，；])", line) if half]
            if len(halves) >= 2:
                first = halves[0].rstrip("，；")
                corpus.add_chat(item, source, pick([f"“{first}”的下一句是什么？", f"“{first}”，下一句是？"], key),
                                "".join(halves[1:]))
                if chosen(key + ":prev", 800):
                    second = "".join(halves[1:]).rstrip("。？！；")
                    corpus.add_chat(item, source, f"“{second}”的上一句是什么？", halves[0].rstrip("，；") + "。")
            if chosen(key + ":from", 1000):
                corpus.add_chat(item, source, pick([f"“{line}”出自哪首诗？", f"“{line}”是哪首诗里的句子？"], key),
                                f"出自{author}的{title}。")
            if number + 1 < len(verse_lines) and chosen(key + ":next", 700):
                corpus.add_chat(item, source, f"“{line}”的后面一句是什么？", verse_lines[number + 1])
    for author, works in sorted(by_author.items()):
        if len(works) >= 2:
            shown = "、".join(title for source, title in works[:5])
            corpus.add_chat(f"poet:{author}", works[0][0], pick([f"{author}写过哪些诗？", f"请列举{author}的诗。"],
                                                                author), f"{author}的诗有{shown}等。")


# ---------------------------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------------------------

def write_outputs(corpus, out):
    out.mkdir(parents=True, exist_ok=True)
    counts = {}

    def count(split, kind, source, text_bytes):
        entry = counts.setdefault((kind, source), {"train": [0, 0], "heldout": [0, 0]})
        entry[split][0] += 1
        entry[split][1] += text_bytes

    pretrain = {"train": [], "heldout": []}
    for item, source, text, copy in corpus.pretrain:
        split = "heldout" if is_heldout(item) else "train"
        if split == "heldout" and copy > 0:
            continue  # repeated poems are held out once
        pretrain[split].append((source, text, copy))
        count(split, "pretrain", source, len(text.encode("utf-8")))
        SOURCES[source].bytes_used += len(text.encode("utf-8")) if split == "train" else 0
    sft = {"train": [], "heldout": []}
    seen = set()
    for item, source, user, assistant in corpus.sft:
        if (user, assistant) in seen:
            continue
        seen.add((user, assistant))
        split = "heldout" if is_heldout(item) else "train"
        sft[split].append((source, user, assistant))
        count(split, "sft", source, len(user.encode("utf-8")) + len(assistant.encode("utf-8")))
    # Write in a deterministic shuffled order (by hash), so that a reader taking the first N lines gets a mix.
    for split in ("train", "heldout"):
        rows = sorted(pretrain[split], key=lambda row: (digest(f"order:{row[2]}:{row[1]}"), row[1], row[2]))
        with open(out / f"pretrain_{split}.jsonl", "w", encoding="utf-8") as stream:
            for source, text, copy in rows:
                stream.write(json.dumps({"text": text, "source": source}, ensure_ascii=False) + "\n")
        rows = sorted(sft[split], key=lambda row: (digest("order:" + row[1] + "\n" + row[2]), row[1], row[2]))
        with open(out / f"sft_{split}.jsonl", "w", encoding="utf-8") as stream:
            for source, user, assistant in rows:
                conversation = [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
                stream.write(json.dumps({"conversations": conversation, "source": source}, ensure_ascii=False) + "\n")
    with open(out / "tokenizer_corpus.txt", "w", encoding="utf-8") as stream:
        for source, text, copy in pretrain["train"]:
            stream.write(text + "\n\n")
    return counts


def write_sources(out, counts):
    lines = ["# Sources of the minigen corpus", "",
             "Built by `tools/corpus/build_corpus.sh` from Debian packages. Licenses are quoted from each package's "
             "`/usr/share/doc/<package>/copyright` (for dict-gcide, from the .deb, which is not installed). "
             "\"Bytes read\" is the source text as shipped (uncompressed); \"bytes used\" counts the pretraining "
             "train split after cleaning (Chinese poems counted with their repeats).", "",
             "| source | package | license (as stated) | bytes read | bytes used | used | why |",
             "|---|---|---|---|---|---|---|"]
    for source in SOURCES.values():
        lines.append(f"| {source.name} | `{source.package}` | {source.license} | {source.bytes_read:,} | "
                     f"{source.bytes_used:,} | {'yes' if source.used else 'no'} | {source.why} |")
    lines += ["", "Files read: " + "; ".join(f"{s.package}: {', '.join(s.files)}" for s in SOURCES.values() if s.used),
              "", "## Samples", "", "| kind | source | train samples | train bytes | held-out samples | held-out bytes |",
              "|---|---|---|---|---|---|"]
    for (kind, source), entry in sorted(counts.items()):
        lines.append(f"| {kind} | {source} | {entry['train'][0]:,} | {entry['train'][1]:,} | "
                     f"{entry['heldout'][0]:,} | {entry['heldout'][1]:,} |")
    lines += ["", "## Notices to ship with models trained on this corpus", "",
              "WordNet's license asks that its notice appear on all copies, including modifications:", "",
              "> WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved.", ">",
              "> THIS SOFTWARE AND DATABASE IS PROVIDED \"AS IS\" AND PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS OR "
              "WARRANTIES, EXPRESS OR IMPLIED. BY WAY OF EXAMPLE, BUT NOT LIMITATION, PRINCETON UNIVERSITY MAKES NO "
              "REPRESENTATIONS OR WARRANTIES OF MERCHANTABILITY OR FITNESS FOR ANY PARTICULAR PURPOSE OR THAT THE USE "
              "OF THE LICENSED SOFTWARE, DATABASE OR DOCUMENTATION WILL NOT INFRINGE ANY THIRD PARTY PATENTS, "
              "COPYRIGHTS, TRADEMARKS OR OTHER RIGHTS.", "",
              "The fortune files are under the BSD license of fortune-mod (Copyright (c) 1991 The Regents of the "
              "University of California), which asks that the copyright notice and disclaimer be reproduced in the "
              "documentation of binary redistributions.", "",
              "The Jargon File asks for citation: \"The on-line hacker Jargon File, version 4.4.7, 29 Dec 2003\".", "",
              "## Cleaning", "",
              "- dictd entries 00-database-* (the dictionaries' own headers) are dropped.",
              "- WordNet senses that WordNet marks as ethnic slurs, obscene, vulgar, offensive, disparaging or "
              "derogatory terms are dropped; words all of whose senses are so marked are dropped from every source.",
              "- Fortunes: ANSI escapes stripped, indentation removed, entries over 1,200 bytes skipped.",
              "- Chinese poems: ANSI colour codes and the 题目:/作者: layout normalised; dates after authors removed; "
              f"each poem repeated {POEM_REPEAT}× in the pretraining train split and in tokenizer_corpus.txt.",
              f"- Held-out split: items (headword, Bible chapter, poem, fortune) whose SHA-256 falls in the lowest "
              f"{HELDOUT_PER_MILLE}/1000; every sample of an item is in the same split, pretraining and SFT alike."]
    (out / "SOURCES.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="/work/minigen-data/corpus")
    parser.add_argument("--bible-text", required=True, help="output of `bible -f -l 1000000 Gen1:1-Rev22:21`")
    parser.add_argument("--gcide-copyright", default="", help="dict-gcide's copyright file, read from its .deb")
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    check_licenses(args.gcide_copyright)
    if args.gcide_copyright and pathlib.Path(args.gcide_copyright).exists():
        text = pathlib.Path(args.gcide_copyright).read_text(encoding="utf-8", errors="replace")
        if SOURCES["gcide"].license_phrase not in text:
            SOURCES["gcide"].license = "(copyright file read, license wording changed: re-check by hand)"
    elif not args.gcide_copyright:
        SOURCES["gcide"].license += " (as read from the .deb when this table was written; not re-read this run)"

    corpus = Corpus()
    blocked_words = set()
    if SOURCES["wordnet"].used:
        blocked_pattern = build_wordnet(corpus, blocked_words)
    else:
        blocked_pattern = None
    if SOURCES["kjv"].used:
        build_kjv(corpus, pathlib.Path(args.bible_text).read_text(encoding="utf-8"))
    if SOURCES["devil"].used:
        build_devil(corpus, blocked_pattern)
    if SOURCES["jargon"].used:
        build_jargon(corpus, blocked_pattern)
    if SOURCES["fortunes"].used or SOURCES["fortunes-min"].used:
        build_fortunes(corpus, blocked_pattern)
    if SOURCES["tang300"].used:
        build_poems(corpus)
    corpus.pretrain = [row for row in corpus.pretrain if SOURCES[row[1]].used]  # (item, source, text, copy)
    corpus.sft = [row for row in corpus.sft if SOURCES[row[1]].used]

    counts = write_outputs(corpus, out)
    write_sources(out, counts)
    print(f"{'kind':9s} {'source':14s} {'train':>8s} {'train bytes':>12s} {'heldout':>8s} {'heldout bytes':>14s}")
    totals = {}
    for (kind, source), entry in sorted(counts.items()):
        print(f"{kind:9s} {source:14s} {entry['train'][0]:8d} {entry['train'][1]:12,d} {entry['heldout'][0]:8d} "
              f"{entry['heldout'][1]:14,d}")
        total = totals.setdefault(kind, [0, 0, 0, 0])
        for index, value in enumerate(entry["train"] + entry["heldout"]):
            total[index] += value
    for kind, (train, train_bytes, heldout, heldout_bytes) in totals.items():
        print(f"{kind:9s} {'TOTAL':14s} {train:8d} {train_bytes:12,d} {heldout:8d} {heldout_bytes:14,d}")
    chinese = sum(entry["train"][0] for (kind, source), entry in counts.items()
                  if kind == "sft" and source in ("tang300", "song100"))
    print(f"SFT Chinese share (train): {chinese / max(1, totals['sft'][0]):.1%}")
    for name in sorted(path.name for path in out.iterdir()):
        print(f"  {out / name}: {(out / name).stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
