#pragma once
// safetensors files (the format of HF's model.safetensors): an 8-byte little-endian header length N, N bytes of
// JSON naming each tensor's dtype, shape and byte range [begin, end) relative to the data that follows, then the
// raw little-endian tensor data. An optional "__metadata__" object maps strings to strings.
#include <filesystem>
#include <map>
#include <span>
#include <string>

#include "model/tensor.h"

namespace minigen {

// Reads every tensor, converting F32, F16 and BF16 to fp32 (stored_dtype records which one the file held).
// Throws minigen::Error naming the file and the problem for a malformed file or an unsupported dtype.
TensorMap read_safetensors(const std::filesystem::path& path, const TensorReadOptions& options = {});
// The same for a file's bytes in memory; `name` starts error messages.
TensorMap read_safetensors(std::span<const std::byte> bytes, const std::string& name,
                           const TensorReadOptions& options = {});
// The "__metadata__" strings of a safetensors file (empty if it has none); validates the header like
// read_safetensors but converts no tensor data.
std::map<std::string, std::string> read_safetensors_metadata(const std::filesystem::path& path);
std::map<std::string, std::string> read_safetensors_metadata(std::span<const std::byte> bytes, const std::string& name);

// Writes `tensors` in name order, every one converted to `dtype`. The file is replaced atomically: the data goes to
// a temporary file in the same directory that is renamed over `path` only once it is complete.
void write_safetensors(const std::filesystem::path& path, const TensorMap& tensors, DType dtype = DType::kF32,
                       const std::map<std::string, std::string>& metadata = {});
// The same, every tensor in its own stored_dtype (a quantized model: I8/U8 codes, F16 scales, F32 norms).
void write_safetensors_as_stored(const std::filesystem::path& path, const TensorMap& tensors,
                                 const std::map<std::string, std::string>& metadata = {});
// The bytes write_safetensors would write, in memory (small tensor maps: tests and round trips).
std::string safetensors_bytes(const TensorMap& tensors, DType dtype = DType::kF32,
                              const std::map<std::string, std::string>& metadata = {});

}  // namespace minigen
