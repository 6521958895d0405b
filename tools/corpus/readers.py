"""Readers of the Debian packages' text for build_corpus.py: dictd dictionaries (WordNet, the Devil's Dictionary,
the Jargon File), the KJV as the `bible` tool exports it, fortune files and the Chinese poems of fortunes-zh. Each
turns a package's own format into plain entries; build_corpus.py decides what becomes a sample.
"""
import dataclasses
import gzip
import pathlib
import re

DICTD_DIR = pathlib.Path("/usr/share/dictd")

# ---------------------------------------------------------------------------------------------------------------
# Text cleaning shared by the readers
# ---------------------------------------------------------------------------------------------------------------

ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def unwrap(text, keep_indented_lines=False):
    """Joins hard-wrapped lines into paragraphs (blank lines separate paragraphs); collapses runs of spaces.
    keep_indented_lines: a block whose lines are all indented (verse, in the Devil's Dictionary) keeps its line
    breaks."""
    paragraphs = []
    for block in re.split(r"\n\s*\n", text):
        lines = [line for line in block.splitlines() if line.strip()]
        if not lines:
            continue
        verse = keep_indented_lines and all(line.startswith("  ") for line in lines)
        joined = ("\n" if verse else " ").join(re.sub(r"[ \t]+", " ", line.strip()) for line in lines)
        paragraphs.append(joined)
    return paragraphs


# ---------------------------------------------------------------------------------------------------------------
# dictd dictionaries
# ---------------------------------------------------------------------------------------------------------------

DICTD_BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
DICTD_DIGIT = {character: value for value, character in enumerate(DICTD_BASE64)}


def dictd_number(text):
    """dictd's base64 numbers: most significant digit first, alphabet A–Z a–z 0–9 + /."""
    value = 0
    for character in text:
        value = value * 64 + DICTD_DIGIT[character]
    return value


def read_dictd(name):
    """[(headword, definition text)] in index order, without the 00-database-* (00database*) metadata entries.
    The .dict.dz file is gzip (dictzip adds random-access chunks that gzip ignores); offsets index the
    uncompressed bytes."""
    data = gzip.open(DICTD_DIR / f"{name}.dict.dz").read()
    entries = []
    with open(DICTD_DIR / f"{name}.index", encoding="utf-8") as index:
        for line in index:
            fields = line.rstrip("\n").split("\t")
            headword, offset, length = fields[0], dictd_number(fields[1]), dictd_number(fields[2])
            if headword.startswith("00-database") or headword.startswith("00database"):
                continue
            entries.append((headword, data[offset:offset + length].decode("utf-8")))
    return entries, len(data)


# WordNet ----------------------------------------------------------------------------------------------------------

WORDNET_POS = {"n": "noun", "v": "verb", "adj": "adjective", "adv": "adverb"}
WORDNET_SENSE_START = re.compile(r"^ {4}(?:(n|v|adj|adv) )?\s*(\d+): (.*)$")
# Senses WordNet itself marks as slurs or obscene are dropped, with their words (as synonyms) everywhere.
WORDNET_FLAGS = re.compile(r"ethnic slur|offensive (?:term|name|word)|obscene (?:term|word|name)|\(obscene\)|"
                           r"vulgar (?:term|slang|word)|\(vulgar\)|disparaging (?:term|name)|derogatory term|"
                           r"insulting term", re.IGNORECASE)


@dataclasses.dataclass
class Sense:
    pos: str
    gloss: str
    examples: list
    synonyms: list  # the other words of the synset, WordNet's order
    canonical: str  # the synset's first word: its entry carries the gloss, the others refer to it
    flagged: bool


def parse_wordnet_entry(headword, body):
    lines = body.splitlines()
    senses_text = []  # (pos, text)
    pos = None
    for line in lines[1:]:  # line 0 repeats the headword
        match = WORDNET_SENSE_START.match(line)
        if match:
            pos = match.group(1) or pos
            senses_text.append([pos, match.group(3).strip()])
        elif line.strip() and senses_text:
            senses_text[-1][1] += " " + line.strip()
    senses = []
    for pos, text in senses_text:
        text = re.sub(r"\s+", " ", text)
        synset = []
        for tag, words in re.findall(r"\[(syn|ant): ([^\]]*)\]", text):
            if tag == "syn":
                # "{gushing(a)}": WordNet's adjective-position markers (a), (p), (ip) are dropped.
                synset = [re.sub(r"\((?:a|p|ip)\)$", "", re.sub(r"\s+", " ", w.strip()))
                          for w in re.findall(r"\{([^}]*)\}", words)]
        text = re.sub(r"\s*\[(?:syn|ant): [^\]]*\]", "", text).strip()
        split = re.search(r';\s*"|^"', text)
        gloss = text[:split.start()] if split else text
        examples = re.findall(r'"([^"]+)"', text[split.start():]) if split else []
        gloss = gloss.strip().rstrip(";").strip()
        synonyms = [word for word in synset if word.lower() != headword.lower()]
        canonical = synset[0] if synset else headword
        senses.append(Sense(WORDNET_POS.get(pos, "noun"), gloss, examples, synonyms, canonical,
                            bool(WORDNET_FLAGS.search(text))))
    return senses


WORDNET_TAXON = re.compile(r"^(?:genus|family|order|class|subclass|phylum|subphylum|division|suborder|superfamily|"
                           r"subfamily|tribe|subgenus|superorder|infraorder|kingdom|subkingdom|superclass) [A-Z]")


def wordnet_blocklist(entries):
    """Words all of whose WordNet senses are flagged as slurs or obscene: left out of every source."""
    blocked = set()
    for headword, senses in entries:
        if senses and all(sense.flagged for sense in senses):
            blocked.add(headword.lower())
    return blocked


def render_wordnet(headword, senses, has_entry):
    """One line per sense. A synset's gloss is written once, in its first word's entry; the entries of its other
    words say "same as ‘first word’" (44 % of WordNet's gloss text is such repeats)."""
    lines = [headword]
    last_pos = None
    number = 0
    for sense in senses:
        if sense.pos != last_pos:
            lines.append(f"({sense.pos})")
            last_pos, number = sense.pos, 0
        number += 1
        if sense.canonical.lower() != headword.lower() and has_entry(sense.canonical):
            lines.append(f"{number}. same as ‘{sense.canonical}’")
            continue
        line = f"{number}. {sense.gloss}"
        if sense.examples:
            line += "; " + "; ".join(f"\"{example}\"" for example in sense.examples[:2])
        if sense.synonyms:
            line += " (also: " + ", ".join(sense.synonyms[:6]) + ")"
        lines.append(line)
    return lines


# Devil's Dictionary and Jargon File --------------------------------------------------------------------------------

def parse_devil(body):
    """'ABASEMENT, n.  A decent ...' → ('abasement', 'n.', 'A decent ...' paragraphs)."""
    paragraphs = unwrap(body, keep_indented_lines=True)
    if not paragraphs:
        return None
    match = re.match(r"^([A-Z][A-Z' \-]*[A-Z]),\s*((?:[a-z]+\.\s*)*)\s*(.*)$", paragraphs[0])
    if not match:
        return None
    word = match.group(1).strip().lower()
    part = match.group(2).strip()
    first = match.group(3).strip()
    paragraphs = ([first] if first else []) + paragraphs[1:]
    paragraphs = [re.sub(r"\b_([^_]+)_\b", r"\1", paragraph) for paragraph in paragraphs]  # _italics_
    return word, part, paragraphs


def parse_jargon(headword, body):
    """Headword line, an optional pronunciation line (' /klooj/' or ' //'), then indented paragraphs.
    {cross references} lose their braces."""
    lines = body.splitlines()
    rest = lines[1:]
    if rest and re.match(r"^\s*/[^/]*/", rest[0]):
        rest = rest[1:]
    text = "\n".join(rest).replace("{", "").replace("}", "")
    return unwrap(text)


# ---------------------------------------------------------------------------------------------------------------
# Bible
# ---------------------------------------------------------------------------------------------------------------

BOOKS = ["Genesis", "Exodus", "Leviticus", "Numbers", "Deuteronomy", "Joshua", "Judges", "Ruth", "1 Samuel",
         "2 Samuel", "1 Kings", "2 Kings", "1 Chronicles", "2 Chronicles", "Ezra", "Nehemiah", "Esther", "Job",
         "Psalms", "Proverbs", "Ecclesiastes", "Song of Solomon", "Isaiah", "Jeremiah", "Lamentations", "Ezekiel",
         "Daniel", "Hosea", "Joel", "Amos", "Obadiah", "Jonah", "Micah", "Nahum", "Habakkuk", "Zephaniah", "Haggai",
         "Zechariah", "Malachi", "Matthew", "Mark", "Luke", "John", "Acts", "Romans", "1 Corinthians",
         "2 Corinthians", "Galatians", "Ephesians", "Philippians", "Colossians", "1 Thessalonians",
         "2 Thessalonians", "1 Timothy", "2 Timothy", "Titus", "Philemon", "Hebrews", "James", "1 Peter", "2 Peter",
         "1 John", "2 John", "3 John", "Jude", "Revelation"]


def read_kjv(bible_text):
    """[(book, chapter, verse, text)] from `bible -f -l 1000000 Gen1:1-Rev22:21` output ('Ge1:1 In the ...').
    The program's abbreviations map to the 66 books in canonical order."""
    verses = []
    abbreviations = []
    for line in bible_text.splitlines():
        match = re.match(r"^(\d?[A-Za-z]+)(\d+):(\d+) (.*)$", line)
        if not match:
            continue
        abbreviation = match.group(1)
        if not abbreviations or abbreviations[-1] != abbreviation:
            abbreviations.append(abbreviation)
        verses.append((len(abbreviations) - 1, int(match.group(2)), int(match.group(3)), match.group(4).strip()))
    if len(abbreviations) != len(BOOKS):
        raise SystemExit(f"expected {len(BOOKS)} books from `bible`, got {len(abbreviations)}")
    return [(BOOKS[book], chapter, verse, text) for book, chapter, verse, text in verses]


def reference(book, chapter, verse=None):
    name = "Psalm" if book == "Psalms" and verse is not None else book
    return f"{name} {chapter}" + (f":{verse}" if verse is not None else "")


# ---------------------------------------------------------------------------------------------------------------
# Fortunes and Chinese poems
# ---------------------------------------------------------------------------------------------------------------

def read_fortune_file(path):
    """Entries of a fortune file: separated by lines holding only '%'; ANSI colour codes stripped."""
    text = ANSI_ESCAPE.sub("", path.read_text(encoding="utf-8", errors="replace"))
    entries = []
    current = []
    for line in text.splitlines():
        if line.strip() == "%":
            entries.append("\n".join(current))
            current = []
        else:
            current.append(line)
    entries.append("\n".join(current))
    return [entry for entry in entries if entry.strip()], len(text.encode("utf-8"))


def clean_fortune(entry):
    """Trailing spaces and leading indentation removed (fortunes indent attributions with tabs); hard-wrapped prose
    rejoined (a line of 45+ characters continues on the next unindented line); at most one blank line in a row.
    Returns (text, attribution or None)."""
    raw_lines = entry.expandtabs(8).splitlines()
    lines = []
    for raw in raw_lines:
        line = raw.strip()
        previous = lines[-1] if lines else ""
        if (line and previous and len(previous) >= 45 and not raw[:1].isspace() and not line.startswith("--")
                and not previous.endswith(":")):
            lines[-1] = previous + " " + line
        else:
            lines.append(line)
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    attribution = None
    match = re.search(r"\n\s*--\s*(.+)$", text)
    if match and len(match.group(1)) < 80:
        attribution = match.group(1).strip()
    return text, attribution


FULLWIDTH_DIGITS = str.maketrans("０１２３４５６７８９－", "0123456789-")


def parse_poem(entry):
    """tang300: '《title》\\n作者：name\\nlines'; song100: '题目:《title》\\n作者:name（dates）\\nlines'.
    Returns (title with 《》, author, [lines]) or None."""
    lines = [line.strip() for line in entry.splitlines()]
    lines = [line for line in lines if line]
    if len(lines) < 3:
        return None
    title = re.sub(r"^题目[:：]\s*", "", lines[0])
    author_match = re.match(r"^作者[:：]\s*(.+)$", lines[1])
    if not author_match or "《" not in title:
        return None
    author = re.sub(r"（[^）]*）|\([^)]*\)", "", author_match.group(1).translate(FULLWIDTH_DIGITS)).strip()
    body = [line for line in lines[2:]]
    return title, author, body
