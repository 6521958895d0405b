#pragma once
// The Prometheus text exposition of the engine's and the HTTP server's state (GET /metrics).
#include <optional>
#include <string>
#include <vector>

#include "core/profiler.h"
#include "http/server.h"
#include "serve/adapter_registry.h"
#include "serve/engine.h"

namespace minigen {

// With LoRA adapters loaded, minigen_lora_adapters_loaded and one minigen_lora_requests_total{adapter="NAME"} each.
// With a profile (`minigen serve --profile`), also two counters per zone, summed over the server's threads:
// minigen_profile_seconds_total{zone="matmul"} (inclusive time) and minigen_profile_calls_total{zone="matmul"}.
std::string metrics_text(const EngineStatus& status, const http::ServerStats& http,
                         const std::vector<ServedAdapter>& adapters = {},
                         const std::optional<ProfileSnapshot>& profile = std::nullopt);

}  // namespace minigen
