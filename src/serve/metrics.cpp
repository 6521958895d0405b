#include "serve/metrics.h"

#include <cstdint>
#include <iomanip>
#include <sstream>

#include "core/process_memory.h"

namespace minigen {

std::string metrics_text(const EngineStatus& status, const http::ServerStats& http,
                         const std::vector<ServedAdapter>& adapters, const std::optional<ProfileSnapshot>& profile) {
  std::ostringstream out;
  out << std::setprecision(17);  // counters beyond a million must not turn into 1.23457e+06
  auto metric = [&](const char* name, const char* type, const char* help, double value) {
    out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n' << name << ' ';
    if (value == static_cast<double>(static_cast<int64_t>(value))) {
      out << static_cast<int64_t>(value) << '\n';
    } else {
      out << value << '\n';
    }
  };
  auto count = [](int64_t value) { return static_cast<double>(value); };
  metric("minigen_requests_running", "gauge", "Sequences in the running batch.", status.running);
  metric("minigen_requests_waiting", "gauge", "Sequences and requests waiting to be scheduled.", status.waiting);
  metric("minigen_kv_blocks_total", "gauge", "KV cache blocks in the pool (16 positions each).",
         status.kv_blocks_total);
  metric("minigen_kv_blocks_used", "gauge", "KV blocks referenced by a sequence.", status.kv_blocks_used);
  metric("minigen_kv_blocks_free", "gauge", "KV blocks a new sequence can take (free or evictable).",
         status.kv_blocks_total - status.kv_blocks_used);
  metric("minigen_kv_blocks_cached", "gauge", "KV blocks registered in the prefix cache.", status.kv_blocks_cached);
  metric("minigen_kv_block_bytes", "gauge", "Bytes of one KV block over every layer, in the --kv-dtype.",
         count(static_cast<int64_t>(status.kv_block_bytes)));
  metric("minigen_kv_cache_bytes_total", "gauge", "Bytes of the KV block pool.",
         count(static_cast<int64_t>(status.kv_block_bytes) * status.kv_blocks_total));
  metric("minigen_kv_cache_bytes_used", "gauge", "Bytes of the KV blocks referenced by a sequence.",
         count(static_cast<int64_t>(status.kv_block_bytes) * status.kv_blocks_used));
  metric("minigen_prefix_cache_lookups_total", "counter", "Prefix-cache block lookups.", count(status.prefix_lookups));
  metric("minigen_prefix_cache_hits_total", "counter", "Prefix-cache block hits.", count(status.prefix_hits));
  metric("minigen_prefix_cache_hit_rate", "gauge", "Hits per lookup since start.",
         status.prefix_lookups > 0 ? static_cast<double>(status.prefix_hits) / status.prefix_lookups : 0.0);
  metric("minigen_prompt_tokens_cached_total", "counter", "Prompt tokens taken from the prefix cache.",
         count(status.counters.prefix_cached_tokens));
  metric("minigen_prefill_tokens_total", "counter", "Prompt tokens computed.", count(status.counters.prefill_tokens));
  metric("minigen_generation_tokens_total", "counter", "Tokens generated.", count(status.counters.generated_tokens));
  metric("minigen_generation_tokens_per_second", "gauge", "Tokens generated per second over the last 5 s.",
         status.generated_tokens_per_second);
  metric("minigen_steps_total", "counter", "Forward calls (scheduler steps).", count(status.counters.steps));
  metric("minigen_preemptions_total", "counter", "Sequences preempted for lack of KV blocks.",
         count(status.counters.preemptions));
  metric("minigen_requests_total", "counter", "Requests accepted.", count(status.jobs_submitted));
  metric("minigen_requests_rejected_total", "counter", "Requests refused because the queue was full.",
         count(status.jobs_rejected));
  metric("minigen_http_connections_open", "gauge", "Open client connections.", count(http.connections_open));
  metric("minigen_http_connections_total", "counter", "Client connections accepted.", count(http.connections_accepted));
  metric("minigen_http_connections_timed_out_total", "counter",
         "Connections closed because a request did not arrive in time or a keep-alive connection stayed idle.",
         count(http.connections_timed_out));
  metric("minigen_http_connections_evicted_total", "counter",
         "Connections still waiting for their request, closed to make room at the connection limit.",
         count(http.connections_evicted));
  metric("minigen_http_requests_total", "counter", "HTTP requests read.", count(http.requests));
  metric("minigen_http_requests_rejected_total", "counter",
         "Requests refused by the HTTP layer: malformed, too large, or no worker free.", count(http.requests_rejected));
  metric("minigen_http_workers_busy", "gauge", "Requests being served on worker threads.", count(http.workers_busy));
  metric("process_resident_memory_bytes", "gauge", "Resident memory of the server process.",
         static_cast<double>(resident_memory_bytes()));
  metric("minigen_lora_adapters_loaded", "gauge", "LoRA adapters the server answers for besides the base model.",
         count(static_cast<int64_t>(adapters.size())));
  if (!adapters.empty()) {
    // Adapter names are plain ([A-Za-z0-9._-], serve/adapter_registry.h): no label escaping needed.
    out << "# HELP minigen_lora_requests_total Requests that named each loaded LoRA adapter.\n"
        << "# TYPE minigen_lora_requests_total counter\n";
    for (const ServedAdapter& adapter : adapters) {
      out << "minigen_lora_requests_total{adapter=\"" << adapter.name << "\"} " << adapter.requests << '\n';
    }
  }
  if (profile) {
    // One family per quantity, one sample per zone (labelled), every zone listed so a dashboard sees zeros too.
    auto zone_family = [&](const char* name, const char* help, auto value_of) {
      out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << " counter\n";
      for (int z = 0; z < kZoneCount; ++z) {
        const Zone zone = static_cast<Zone>(z);
        out << name << "{zone=\"" << zone_name(zone) << "\"} " << value_of((*profile)[zone]) << '\n';
      }
    };
    zone_family("minigen_profile_seconds_total",
                "Inclusive time spent in each profiler zone, summed over threads (serve --profile).",
                [](const ZoneTotals& totals) { return static_cast<double>(totals.nanoseconds) / 1e9; });
    zone_family("minigen_profile_calls_total", "Times each profiler zone was entered (serve --profile).",
                [](const ZoneTotals& totals) { return totals.calls; });
  }
  return out.str();
}

}  // namespace minigen
