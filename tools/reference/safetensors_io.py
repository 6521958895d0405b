"""A small reader and writer for safetensors files, with numpy only (there is no safetensors package here).

File layout: an 8-byte little-endian unsigned header length N, then N bytes of UTF-8 JSON, then the tensor data.
The JSON maps each tensor name to {"dtype", "shape", "data_offsets": [begin, end)}, offsets relative to the first
byte after the header; the optional "__metadata__" entry maps strings to strings.

Supported dtypes: F32, F16 and BF16 (plus I32 and I64 for reading). numpy has no bfloat16, so BF16 is read by
widening the 16 bits into the high half of a float32 and written by rounding float32 to nearest, ties to even.
"""
import json
import os
import pathlib
import struct

import numpy as np

_HEADER_LENGTH_BYTES = 8
_HEADER_ALIGNMENT = 8  # the header is padded with spaces so that the data starts 8-byte aligned

_NUMPY_TYPE = {
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "I32": np.dtype("<i4"),
    "I64": np.dtype("<i8"),
}
_BYTES_PER_ELEMENT = {"F32": 4, "F16": 2, "BF16": 2, "I32": 4, "I64": 8}


class SafetensorsError(ValueError):
    """A malformed file or an unsupported dtype; the message names the file and the problem."""


def bf16_bits_to_float32(bits):
    """uint16/int16 bf16 bit patterns → float32 values (exact: bf16 is the top half of a float32)."""
    widened = bits.astype(np.uint16).astype(np.uint32) << 16
    return widened.view(np.float32)


def float32_to_bf16_bits(values):
    """float32 values → uint16 bf16 bit patterns, rounded to nearest with ties to even; NaN stays a quiet NaN."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    # Round to nearest even: add 0x7FFF plus the lowest kept bit, then drop the low 16 bits.
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(values, dtype=np.float32))
    rounded[nan] = 0x7FC0
    return rounded


def read_header(path):
    """(header dict without "__metadata__", metadata dict, byte offset of the data) for a safetensors file."""
    path = pathlib.Path(path)
    with open(path, "rb") as stream:
        prefix = stream.read(_HEADER_LENGTH_BYTES)
        if len(prefix) != _HEADER_LENGTH_BYTES:
            raise SafetensorsError(f"{path}: shorter than the 8-byte header length")
        (header_length,) = struct.unpack("<Q", prefix)
        file_size = path.stat().st_size
        if header_length > file_size - _HEADER_LENGTH_BYTES:
            raise SafetensorsError(f"{path}: header length {header_length} exceeds the file size {file_size}")
        try:
            header = json.loads(stream.read(header_length).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise SafetensorsError(f"{path}: header is not valid JSON: {error}") from error
    if not isinstance(header, dict):
        raise SafetensorsError(f"{path}: header is not a JSON object")
    metadata = header.pop("__metadata__", None) or {}
    data_start = _HEADER_LENGTH_BYTES + header_length
    data_size = file_size - data_start
    for name, entry in header.items():
        dtype = entry.get("dtype")
        if dtype not in _BYTES_PER_ELEMENT:
            raise SafetensorsError(f"{path}: tensor {name} has unsupported dtype {dtype}")
        begin, end = entry["data_offsets"]
        element_count = int(np.prod(entry["shape"], dtype=np.int64))
        if not 0 <= begin <= end <= data_size or end - begin != element_count * _BYTES_PER_ELEMENT[dtype]:
            raise SafetensorsError(f"{path}: tensor {name} has data_offsets {[begin, end]} that do not fit "
                                   f"shape {entry['shape']} of {dtype} within {data_size} data bytes")
    return header, metadata, data_start


def read_safetensors(path, as_float32=True):
    """(tensors, metadata): tensors maps name → numpy array. Float dtypes become float32 unless as_float32 is False,
    in which case F16 stays float16 and BF16 is returned as its uint16 bit patterns."""
    header, metadata, data_start = read_header(path)
    with open(path, "rb") as stream:
        stream.seek(data_start)
        data = stream.read()
    tensors = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        raw = data[begin:end]
        dtype = entry["dtype"]
        if dtype == "BF16":
            bits = np.frombuffer(raw, dtype="<u2")
            array = bf16_bits_to_float32(bits) if as_float32 else bits.copy()
        else:
            array = np.frombuffer(raw, dtype=_NUMPY_TYPE[dtype]).copy()
            if as_float32 and dtype == "F16":
                array = array.astype(np.float32)
        tensors[name] = array.reshape(entry["shape"])
    return tensors, dict(metadata)


def read_metadata(path):
    """The "__metadata__" strings of a safetensors file, without reading the tensor data."""
    return read_header(path)[1]


def _encode(array, dtype):
    if dtype == "F32":
        return np.ascontiguousarray(array, dtype="<f4").tobytes()
    if dtype == "F16":
        return np.ascontiguousarray(array, dtype=np.float32).astype("<f2").tobytes()
    if dtype == "BF16":
        return float32_to_bf16_bits(array).astype("<u2").tobytes()
    raise SafetensorsError(f"cannot write dtype {dtype}: use F32, F16 or BF16")


def write_safetensors(path, tensors, metadata=None, dtype="F32"):
    """Writes `tensors` (name → numpy array or torch tensor, any float type) in name order, every one converted to
    `dtype` (F32, F16 or BF16). `metadata` maps strings to strings. The file is written to a temporary name in the
    same directory and renamed over `path` when complete."""
    path = pathlib.Path(path)
    header = {}
    if metadata:
        for key, value in metadata.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise SafetensorsError(f"metadata must map strings to strings, got {key!r}: {value!r}")
        header["__metadata__"] = dict(metadata)
    chunks = []
    offset = 0
    for name in sorted(tensors):
        value = tensors[name]
        if hasattr(value, "detach"):  # a torch tensor
            value = value.detach().cpu().float().numpy()
        array = np.asarray(value)
        encoded = _encode(array, dtype)
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [offset, offset + len(encoded)]}
        chunks.append(encoded)
        offset += len(encoded)
    header_bytes = json.dumps(header, separators=(",", ":")).encode("utf-8")
    header_bytes += b" " * (-len(header_bytes) % _HEADER_ALIGNMENT)
    temporary = path.with_name(path.name + ".partial")
    with open(temporary, "wb") as stream:
        stream.write(struct.pack("<Q", len(header_bytes)))
        stream.write(header_bytes)
        for chunk in chunks:
            stream.write(chunk)
    os.replace(temporary, path)
