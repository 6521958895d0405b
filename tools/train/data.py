"""Encoded corpora and the rows the trainer packs them into.

Encoding (cached): every sample of a JSONL file becomes a document of token ids.
  pretrain: [bos] + encode(text) + [eos]                                  (MiniMind's PretrainDataset)
  sft:      encode(ChatML of the conversation), spec §4 non-thinking form  (MiniMind's SFTDataset)
with a per-token target flag: 1 where the token is trained on. Pretraining: every token after bos. SFT: as MiniMind's
SFTDataset labels them, the tokens after `<|im_start|>assistant\\n` through `<|im_end|>\\n` inclusive, i.e. the empty
think block `<think>\\n\\n</think>\\n\\n`, the reply, `<|im_end|>` and the `\\n` after it; the prompt is not.
The cache holds ids (.npy, uint16), flags (.npy, uint8), document offsets (.npy, int64) and source names.

Rows: the trainer reads [batch, row_tokens + 1] windows. Documents never attend to each other: each row carries a
document id per token and the model masks attention across them (see model.py), and a target whose input belongs to
another document is not trained on.
  stream packing (pretraining): documents in a shuffled order, concatenated, cut every row_tokens tokens (rows overlap
    by one token so every target is predicted once). A document cut at a row boundary continues in the next row
    without its beginning as context. No padding.
  whole packing (SFT, evaluation): documents in order placed whole into rows (next-fit), the rest padded with
    <|endoftext|> (not trained on); documents longer than a row are dropped (SFT) or cut into row-sized pieces (eval).
"""
import hashlib
import json
import pathlib
import sys
import time

import numpy as np

PAD_ID = 0  # <|endoftext|>


def render_chat(conversation):
    """[(text, trained)] pieces of one conversation in minimind-3's ChatML, non-thinking form (spec §4)."""
    pieces = []
    for message in conversation:
        role, content = message["role"], message["content"]
        if role in ("system", "user"):
            pieces.append((f"<|im_start|>{role}\n{content}<|im_end|>\n", False))
        elif role == "assistant":
            pieces.append(("<|im_start|>assistant\n", False))
            pieces.append((f"<think>\n\n</think>\n\n{content}<|im_end|>\n", True))
        else:
            raise ValueError(f"unknown chat role {role!r}")
    return pieces


def file_digest(path, extra=""):
    digest = hashlib.sha256(extra.encode("utf-8"))
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


class EncodedCorpus:
    """ids, flags (uint8), offsets (document d is ids[offsets[d]:offsets[d+1]]), sources (per document)."""

    def __init__(self, ids, flags, offsets, sources, source_names):
        self.ids, self.flags, self.offsets = ids, flags, offsets
        self.sources, self.source_names = sources, source_names

    @property
    def document_count(self):
        return len(self.offsets) - 1

    def lengths(self):
        return np.diff(self.offsets)

    def tokens_per_source(self):
        lengths = self.lengths()
        return {name: int(lengths[self.sources == index].sum()) for index, name in enumerate(self.source_names)}

    def documents_per_source(self):
        return {name: int((self.sources == index).sum()) for index, name in enumerate(self.source_names)}


def encode_jsonl(path, kind, tokenizer, tokenizer_path, cache_dir):
    """Encodes a pretrain or sft JSONL file, or loads it from cache_dir (keyed by the file's and the tokenizer's
    SHA-256)."""
    path = pathlib.Path(path)
    tokenizer_file = pathlib.Path(tokenizer_path)
    if tokenizer_file.is_dir():
        tokenizer_file = tokenizer_file / "tokenizer.json"
    key = file_digest(path, extra=kind + file_digest(tokenizer_file))
    cache_dir = pathlib.Path(cache_dir)
    stem = cache_dir / f"{path.stem}.{key}"
    names = ("ids", "flags", "offsets", "sources")
    if all((stem.parent / f"{stem.name}.{name}.npy").exists() for name in names):
        arrays = [np.load(stem.parent / f"{stem.name}.{name}.npy") for name in names]
        source_names = json.loads((stem.parent / f"{stem.name}.sources.json").read_text())
        return EncodedCorpus(*arrays, source_names)

    started = time.time()
    bos, eos = tokenizer.token_id("<|im_start|>"), tokenizer.token_id("<|im_end|>")
    ids, flags, offsets, sources = [], [], [0], []
    source_index = {}
    with open(path, encoding="utf-8") as stream:
        for line_number, line in enumerate(stream):
            sample = json.loads(line)
            source = sample.get("source", "unknown")
            if kind == "pretrain":
                document = [bos] + tokenizer.encode(sample["text"]) + [eos]
                document_flags = [0] + [1] * (len(document) - 1)
            else:
                document, document_flags = [], []
                for text, trained in render_chat(sample["conversations"]):
                    piece = tokenizer.encode(text)
                    document += piece
                    document_flags += [int(trained)] * len(piece)
            ids.extend(document)
            flags.extend(document_flags)
            offsets.append(len(ids))
            sources.append(source_index.setdefault(source, len(source_index)))
            if line_number % 20000 == 0:
                print(f"\rencoding {path.name}: {line_number} samples, {len(ids):,} tokens, "
                      f"{time.time() - started:.0f} s", end="", file=sys.stderr)
    print(f"\rencoded {path.name}: {len(offsets) - 1} samples, {len(ids):,} tokens in "
          f"{time.time() - started:.0f} s", file=sys.stderr)
    if max(ids, default=0) >= 1 << 16:
        raise ValueError("token ids do not fit uint16")
    corpus = EncodedCorpus(np.asarray(ids, dtype=np.uint16), np.asarray(flags, dtype=np.uint8),
                           np.asarray(offsets, dtype=np.int64), np.asarray(sources, dtype=np.int16),
                           list(source_index))
    cache_dir.mkdir(parents=True, exist_ok=True)
    for name in names:
        temporary = stem.parent / f"{stem.name}.{name}.partial.npy"
        np.save(temporary, getattr(corpus, name))
        temporary.replace(stem.parent / f"{stem.name}.{name}.npy")
    (stem.parent / f"{stem.name}.sources.json").write_text(json.dumps(corpus.source_names))
    return corpus


class Rows:
    """[count, row_tokens + 1] arrays: ids (int64), document ids (int64, −1 for padding: the attention blocks),
    flags (bool), and origins (the corpus document of each position, −1 for padding)."""

    def __init__(self, ids, documents, flags, origins):
        self.ids, self.documents, self.flags, self.origins = ids, documents, flags, origins

    def __len__(self):
        return len(self.ids)


def stream_rows(corpus, row_tokens, seed, epoch):
    """Stream packing of all documents in the order of a permutation seeded by (seed, epoch)."""
    order = np.random.default_rng([seed, epoch]).permutation(corpus.document_count)
    lengths = corpus.lengths()[order]
    starts = corpus.offsets[:-1][order]
    # Token positions of the shuffled stream: for each document, offsets[d] … offsets[d+1]−1.
    document_of_token = np.repeat(np.arange(len(order)), lengths)
    within = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    positions = starts[document_of_token] + within
    count = (len(positions) - 1) // row_tokens
    window = np.arange(count)[:, None] * row_tokens + np.arange(row_tokens + 1)[None, :]
    ids = corpus.ids[positions].astype(np.int64)[window]
    documents = document_of_token[window].astype(np.int64)
    flags = corpus.flags[positions].astype(bool)[window]
    return Rows(ids, documents, flags, order[documents])


def whole_rows(corpus, row_tokens, seed=None, epoch=0, cut_long=False):
    """Next-fit packing of whole documents into rows of row_tokens + 1, padded; in file order if seed is None,
    otherwise in a permutation seeded by (seed, epoch). Long documents are dropped, or cut if cut_long."""
    width = row_tokens + 1
    order = (np.arange(corpus.document_count) if seed is None
             else np.random.default_rng([seed, epoch]).permutation(corpus.document_count))
    pieces = []  # (start, length, document)
    for document in order:
        start, end = int(corpus.offsets[document]), int(corpus.offsets[document + 1])
        if end - start > width:
            if not cut_long:
                continue
            for piece_start in range(start, end, width):
                pieces.append((piece_start, min(width, end - piece_start), int(document)))
        else:
            pieces.append((start, end - start, int(document)))
    rows, current, used = [], [], 0
    for piece in pieces:
        if used + piece[1] > width:
            rows.append(current)
            current, used = [], 0
        current.append(piece)
        used += piece[1]
    if current:
        rows.append(current)
    ids = np.full((len(rows), width), PAD_ID, dtype=np.int64)
    documents = np.full((len(rows), width), -1, dtype=np.int64)
    flags = np.zeros((len(rows), width), dtype=bool)
    origins = np.full((len(rows), width), -1, dtype=np.int64)
    for row_index, row in enumerate(rows):
        column = 0
        for piece_number, (start, length, document) in enumerate(row):
            ids[row_index, column:column + length] = corpus.ids[start:start + length]
            flags[row_index, column:column + length] = corpus.flags[start:start + length].astype(bool)
            # A piece of a cut document is its own attention block (it may share the document with the last row).
            documents[row_index, column:column + length] = piece_number
            origins[row_index, column:column + length] = document
            column += length
    return Rows(ids, documents, flags, origins)


def batch_tensors(torch, rows, start, count):
    """Inputs, targets, input document ids and the loss mask for rows[start:start+count].
    A target counts if it is flagged and belongs to the same document as its input (never padding)."""
    ids = torch.from_numpy(rows.ids[start:start + count])
    documents = torch.from_numpy(rows.documents[start:start + count])
    flags = torch.from_numpy(rows.flags[start:start + count])
    inputs, targets = ids[:, :-1], ids[:, 1:]
    input_documents = documents[:, :-1]
    trained = flags[:, 1:] & (documents[:, 1:] == input_documents) & (documents[:, 1:] >= 0)
    return inputs, targets, input_documents, trained
