#pragma once
// The Prometheus text exposition of the engine's and the HTTP server's state (GET /metrics).
#include <string>

#include "http/server.h"
#include "serve/engine.h"

namespace minigen {

std::string metrics_text(const EngineStatus& status, const http::ServerStats& http);

}  // namespace minigen
