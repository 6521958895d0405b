"""A byte-level BPE encoder for minigen's tokenizer.json files (minimind-3 layout, spec §4), in Python.

Python cannot call minigen's C++ tokenizer, and `minigen tokenize` costs a process per text, so the training scripts
encode with this and check_model.py compares it with `minigen tokenize --json` on corpus samples. Steps:
  1. added tokens (ids 0–35: <|im_start|>, <think>, …) are matched whole, longest first, before anything else;
  2. the text between them is split by the GPT-2 pre-tokenizer regex (the `regex` module gives \\p{L}, \\p{N});
  3. each piece's UTF-8 bytes are mapped to GPT-2's printable byte symbols;
  4. merges apply by rank, lowest first, until none applies; symbols become ids.

    tokenizer = ByteLevelBPE.load("tokenizers/minigen-6400")     # a directory or its tokenizer.json
    ids = tokenizer.encode("<|im_start|>In the beginning")       # [1, …]
    text = tokenizer.decode(ids)
"""
import json
import pathlib

import regex

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def bytes_to_unicode():
    """GPT-2's map from the 256 byte values to printable characters: printable Latin-1 bytes map to themselves,
    the others to 256, 257, … in byte order."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
                 + list(range(ord("®"), ord("ÿ") + 1)))
    mapping = {}
    extra = 0
    for byte in range(256):
        if byte in printable:
            mapping[byte] = chr(byte)
        else:
            mapping[byte] = chr(256 + extra)
            extra += 1
    return mapping


class ByteLevelBPE:
    def __init__(self, tokenizer_json):
        model = tokenizer_json["model"]
        if model.get("type") != "BPE":
            raise ValueError(f"expected a BPE model, got {model.get('type')}")
        self.vocab = dict(model["vocab"])
        merges = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in model["merges"]]
        self.merge_rank = {pair: rank for rank, pair in enumerate(merges)}
        self.added = {token["content"]: token["id"] for token in tokenizer_json.get("added_tokens", [])}
        for content, token_id in self.added.items():
            self.vocab.setdefault(content, token_id)
        self.id_to_token = {token_id: token for token, token_id in self.vocab.items()}
        self.byte_symbol = bytes_to_unicode()
        self.symbol_byte = {symbol: byte for byte, symbol in self.byte_symbol.items()}
        self.pretokenize = regex.compile(GPT2_PATTERN)
        self.added_pattern = (regex.compile("|".join(regex.escape(content) for content in
                                                     sorted(self.added, key=len, reverse=True)))
                              if self.added else None)
        self.cache = {}

    @classmethod
    def load(cls, path):
        path = pathlib.Path(path)
        if path.is_dir():
            path = path / "tokenizer.json"
        with open(path, encoding="utf-8") as stream:
            return cls(json.load(stream))

    @property
    def vocab_size(self):
        return max(self.id_to_token) + 1

    def token_id(self, content):
        return self.vocab[content]

    def _encode_piece(self, piece):
        cached = self.cache.get(piece)
        if cached is not None:
            return cached
        symbols = [self.byte_symbol[byte] for byte in piece.encode("utf-8")]
        while len(symbols) > 1:
            best_rank, best_index = None, -1
            for index in range(len(symbols) - 1):
                rank = self.merge_rank.get((symbols[index], symbols[index + 1]))
                if rank is not None and (best_rank is None or rank < best_rank):
                    best_rank, best_index = rank, index
            if best_rank is None:
                break
            # Merge every occurrence of the best pair, left to right (as HF tokenizers does for one rank).
            pair = (symbols[best_index], symbols[best_index + 1])
            merged = []
            index = 0
            while index < len(symbols):
                if index < len(symbols) - 1 and (symbols[index], symbols[index + 1]) == pair:
                    merged.append(pair[0] + pair[1])
                    index += 2
                else:
                    merged.append(symbols[index])
                    index += 1
            symbols = merged
        ids = [self.vocab[symbol] for symbol in symbols]
        if len(self.cache) < 500_000:
            self.cache[piece] = ids
        return ids

    def _encode_plain(self, text, out):
        for piece in self.pretokenize.findall(text):
            out.extend(self._encode_piece(piece))

    def encode(self, text):
        """Token ids of text; added tokens (specials and <think> etc.) are recognised anywhere in it."""
        out = []
        position = 0
        if self.added_pattern is not None:
            for match in self.added_pattern.finditer(text):
                if match.start() > position:
                    self._encode_plain(text[position:match.start()], out)
                out.append(self.added[match.group(0)])
                position = match.end()
        if position < len(text):
            self._encode_plain(text[position:], out)
        return out

    def decode(self, ids):
        pieces = []
        for token_id in ids:
            token = self.id_to_token[int(token_id)]
            if token in self.added:
                pieces.append(token.encode("utf-8"))
            else:
                pieces.append(bytes(self.symbol_byte[symbol] for symbol in token))
        return b"".join(pieces).decode("utf-8", errors="replace")


# Texts whose ids the C++ tests pin (src/tokenizer/bpe_tokenizer_test.cpp reads the fixture this writes): English, a
# ChatML turn with added tokens, Tang poetry (one-token and multi-piece characters) and an emoji in byte tokens.
FIXTURE_TEXTS = [
    "In the beginning God created the heaven and the earth.",
    "<|im_start|>user\nAnd God said<|im_end|>\n",
    "床前明月光，疑是地上霜。",
    "光 😀",
]


def write_fixture(tokenizer_dir, out_path):
    """Writes {"tokenizer": ..., "encodings": [{"text", "ids"}, ...]} for FIXTURE_TEXTS."""
    tokenizer = ByteLevelBPE.load(tokenizer_dir)
    encodings = [{"text": text, "ids": tokenizer.encode(text)} for text in FIXTURE_TEXTS]
    for entry in encodings:
        assert tokenizer.decode(entry["ids"]) == entry["text"], entry["text"]
    lines = [json.dumps(entry, ensure_ascii=False) for entry in encodings]  # one text and its ids per line
    text = ('{"producer": "tools/train/bpe.py --fixture", "tokenizer": ' + json.dumps(str(tokenizer_dir)) +
            ',\n "encodings": [\n  ' + ",\n  ".join(lines) + "\n ]}\n")
    pathlib.Path(out_path).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Encode the C++ tests' pinned texts with this independent encoder.")
    parser.add_argument("--fixture", required=True, help="output JSON, e.g. tests/data/tokenizer/minigen-6400.json")
    parser.add_argument("--tokenizer", default="tokenizers/minigen-6400")
    arguments = parser.parse_args()
    write_fixture(arguments.tokenizer, arguments.fixture)
