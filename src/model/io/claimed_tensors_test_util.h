#pragma once
// Safetensors files that claim more than they hold: tensors appended to a real file's header whose data is a hole
// (the file is extended with ftruncate, so a 2 GB claim costs no disk, and no memory unless a reader copies it).
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace minigen::testing {

struct ClaimedTensor {
  std::string name;
  std::string dtype;  // "F16", "F32"
  std::vector<int64_t> shape;
};

// Writes `out`: the tensors of `base` (a safetensors file; empty for none) and `claims` after them, the claims'
// data left as a hole. Returns false if a step fails.
inline bool write_safetensors_with_claims(const std::filesystem::path& out, const std::filesystem::path& base,
                                          const std::vector<ClaimedTensor>& claims) {
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  if (!base.empty()) {
    std::ifstream in(base, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.size() < 8) return false;
    uint64_t length = 0;
    for (int i = 0; i < 8; ++i) length |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
    header = nlohmann::json::parse(bytes.substr(8, length));
    data = bytes.substr(8 + length);
  }
  uint64_t end = data.size();
  for (const ClaimedTensor& claim : claims) {
    uint64_t bytes = claim.dtype == "F32" ? 4 : 2;
    for (int64_t dim : claim.shape) bytes *= static_cast<uint64_t>(dim);
    header[claim.name] = {{"dtype", claim.dtype}, {"shape", claim.shape}, {"data_offsets", {end, end + bytes}}};
    end += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string prefix(8, '\0');
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<char>((text.size() >> (8 * i)) & 0xff);
  {
    std::ofstream file(out, std::ios::binary | std::ios::trunc);
    file << prefix << text << data;
    if (!file) return false;
  }
  return ::truncate(out.c_str(), static_cast<off_t>(8 + text.size() + end)) == 0;
}

}  // namespace minigen::testing
