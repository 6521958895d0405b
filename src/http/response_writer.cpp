#include "http/response_writer.h"

#include "core/profiler.h"

namespace minigen::http {

ResponseWriter::ResponseWriter(ClientLink& link, bool keep_alive, bool http10, const std::atomic<bool>& server_stopping)
    : link_(link), keep_alive_(keep_alive), http10_(http10), server_stopping_(server_stopping) {}

bool ResponseWriter::write_all(std::string data) {
  ProfileZone zone(Zone::kHttpWrite);
  if (!broken_ && !link_.send(std::move(data))) broken_ = true;
  return !broken_;
}

void ResponseWriter::send(const Response& response) {
  if (started_) return;
  started_ = true;
  std::string out = response_head(response.status, response.headers, response.body.size(), false, keep_alive_);
  out += response.body;
  complete_ = write_all(std::move(out));
}

bool ResponseWriter::begin_stream(int status, const Headers& headers) {
  if (started_) return false;
  started_ = true;
  if (http10_) keep_alive_ = false;  // an HTTP/1.0 client reads the body until the connection closes
  return write_all(response_head(status, headers, std::nullopt, !http10_, keep_alive_));
}

bool ResponseWriter::write(std::string_view data) {
  if (data.empty()) return !broken_;  // an empty chunk would end the body
  return write_all(http10_ ? std::string(data) : chunk(data));
}

void ResponseWriter::end_stream() {
  if (!started_ || complete_) return;
  complete_ = http10_ ? !broken_ : write_all(std::string(kLastChunk));
}

bool ResponseWriter::cancelled() {
  if (broken_ || server_stopping_.load(std::memory_order_relaxed)) return true;
  if (link_.hung_up()) broken_ = true;
  return broken_;
}

}  // namespace minigen::http
