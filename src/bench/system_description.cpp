#include "bench/system_description.h"

#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "bench/memory_bandwidth.h"

namespace minigen::bench {
namespace {

std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::size_t start = line.find_first_not_of(" \t", colon + 1);
    if (start != std::string::npos) return line.substr(start);
  }
  return "unknown CPU";
}

}  // namespace

SystemDescription describe_system() {
  SystemDescription system;
  system.cpu_model = cpu_model_name();
  system.cores = static_cast<int>(std::thread::hardware_concurrency());
  system.simd_target = simd_target_name();
  // Shown when set because a machine-wide override of the BLAS kernel choice is the first thing to rule out when
  // numbers from two machines disagree.
  if (const char* coretype = std::getenv("OPENBLAS_CORETYPE")) system.openblas_coretype = coretype;
  return system;
}

}  // namespace minigen::bench
