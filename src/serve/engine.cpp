#include "serve/engine.h"

#include <algorithm>
#include <utility>

#include "core/error.h"

namespace minigen {

using Clock = std::chrono::steady_clock;

namespace {

JobEvent failed_event(int choice, const std::string& message, int status) {
  JobEvent event;
  event.choice = choice;
  event.finished = true;
  event.finish_reason = "error";
  event.error = message;
  event.error_status = status;
  return event;
}

}  // namespace

bool JobStream::next(JobEvent& event, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (!ready_.wait_for(lock, timeout, [this] { return !events_.empty(); })) return false;
  event = std::move(events_.front());
  events_.pop_front();
  return true;
}

bool JobStream::wait(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return ready_.wait_for(lock, timeout, [this] { return !events_.empty(); });
}

void JobStream::push(JobEvent event) {
  {
    std::lock_guard lock(mutex_);
    events_.push_back(std::move(event));
  }
  ready_.notify_all();
}

Engine::Engine(Transformer& transformer, BlockPool& pool, const Tokenizer& tokenizer, SchedulerOptions options,
               int max_waiting_jobs)
    : transformer_(&transformer),
      config_(transformer.model().config),
      tokenizer_(tokenizer),
      scheduler_(transformer.model().config, pool, options),
      runner_(transformer),
      pool_(pool),
      max_waiting_jobs_(max_waiting_jobs) {
  status_.kv_blocks_total = pool.total_blocks();
  status_.kv_block_bytes = pool.block_bytes();
  thread_ = std::thread([this] { run(); });
}

Engine::~Engine() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_.notify_all();
  thread_.join();
}

std::shared_ptr<JobStream> Engine::submit(Job job) {
  std::vector<Job> one;
  one.push_back(std::move(job));
  return submit_all(std::move(one)).front();
}

std::vector<std::shared_ptr<JobStream>> Engine::submit_all(std::vector<Job> jobs) {
  for (const Job& job : jobs) {
    if (job.choices < 1) throw Error("n must be at least 1");
    SequenceRequest check = job.settings;
    check.prompt = job.prompt;
    scheduler_.check(check);
  }
  std::vector<std::shared_ptr<JobStream>> streams;
  for (const Job& job : jobs) {
    auto stream = std::make_shared<JobStream>();
    stream->prompt_tokens_ = static_cast<int>(job.prompt.size());
    stream->submitted_ = Clock::now();
    streams.push_back(std::move(stream));
  }
  {
    std::lock_guard lock(mutex_);
    if (static_cast<int>(incoming_.size()) + status_.waiting >= max_waiting_jobs_) {
      ++status_.jobs_rejected;
      throw EngineBusy("the server is at capacity: " + std::to_string(max_waiting_jobs_) +
                       " requests are already waiting; retry later");
    }
    status_.jobs_submitted += static_cast<int64_t>(jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) incoming_.emplace_back(std::move(jobs[i]), streams[i]);
  }
  work_.notify_all();
  return streams;
}

void Engine::cancel(const std::shared_ptr<JobStream>& stream) {
  stream->cancelled_ = true;
  {
    std::lock_guard lock(mutex_);
    cancelled_.push_back(stream);
  }
  work_.notify_all();
}

void Engine::fail_all(const std::string& reason) {
  {
    std::lock_guard lock(mutex_);
    fail_all_reason_ = reason;
  }
  work_.notify_all();
}

int Engine::flush_prefix_cache() {
  std::unique_lock lock(mutex_);
  flush_requested_ = true;
  flushed_blocks_ = -1;
  work_.notify_all();
  flushed_.wait(lock, [this] { return flushed_blocks_ >= 0 || stopping_; });
  return std::max(flushed_blocks_, 0);
}

void Engine::replace_weights(Transformer& next, std::string version, bool abort_running) {
  if (!(next.model().config == config_)) throw Error("the new weights' configuration differs from the served one");
  std::unique_lock lock(mutex_);
  pending_weights_ = &next;
  pending_version_ = std::move(version);
  pending_abort_ = abort_running;
  work_.notify_all();
  switched_.wait(lock, [this] { return pending_weights_ == nullptr || stopping_; });
  if (pending_weights_ != nullptr) throw Error("the server stopped before the new weights were switched to");
}

std::string Engine::weight_version() const {
  std::lock_guard lock(mutex_);
  return weight_version_;
}

void Engine::abort_running(const std::string& reason) {
  for (auto& [sequence, choice] : choices_) {
    scheduler_.cancel(sequence);
    JobEvent event;
    event.choice = choice.index;
    event.finished = true;
    event.finish_reason = "abort";
    event.abort_message = reason;
    choice.stream->push(std::move(event));
  }
  choices_.clear();
}

void Engine::switch_weights(Transformer& next) {
  next.warm_up();  // on the pool's threads, which only this thread drives
  transformer_ = &next;
  runner_.use(next);
  pool_.flush_cached();  // KV the old weights computed must never meet the new ones
  std::lock_guard lock(mutex_);
  weight_version_ = pending_version_;
  pending_weights_ = nullptr;
  switched_.notify_all();
}

EngineStatus Engine::status() const {
  std::lock_guard lock(mutex_);
  return status_;
}

bool Engine::emit(Choice& choice, const SequenceToken& token) {
  if (token.finish_reason == "error") {  // this draw failed; the rest of the batch carries on
    choice.stream->push(failed_event(choice.index, token.error, token.error_status));
    return true;
  }
  JobEvent event;
  event.choice = choice.index;
  event.token = token.token;
  event.probability = token.probability;
  event.kept_candidates = token.kept_candidates;
  event.grammar_allowed = token.grammar_allowed;
  event.top = token.top;
  event.has_raw_logprob = token.has_raw_logprob;
  event.raw = token.raw;
  event.cached_tokens = token.cached_tokens;
  SequenceOutput::Text text = choice.output.push(token.token, token.finished);
  event.text = std::move(text.text);
  if (text.stopped) {
    event.finished = true;
    event.finish_reason = "stop";
    scheduler_.cancel(token.sequence);
  } else if (token.finished) {
    event.finished = true;
    event.finish_reason = token.finish_reason;
  }
  const bool finished = event.finished;
  choice.stream->push(std::move(event));
  return finished;
}

void Engine::run() {
  while (true) {
    std::deque<std::pair<Job, std::shared_ptr<JobStream>>> incoming;
    std::vector<std::shared_ptr<JobStream>> cancelled;
    std::string failure;
    Transformer* pending = nullptr;
    bool abort_for_switch = false;
    {
      std::unique_lock lock(mutex_);
      work_.wait(lock, [this] {
        return stopping_ || !incoming_.empty() || !cancelled_.empty() || !fail_all_reason_.empty() ||
               flush_requested_ || pending_weights_ != nullptr || !scheduler_.idle();
      });
      if (stopping_) {
        flushed_.notify_all();
        switched_.notify_all();
        return;
      }
      if (flush_requested_) {  // the pool is the engine thread's: nothing else touches it between steps
        flush_requested_ = false;
        flushed_blocks_ = pool_.flush_cached();
        flushed_.notify_all();
      }
      pending = pending_weights_;
      abort_for_switch = pending != nullptr && pending_abort_;
      pending_abort_ = false;
      // While weights wait to be switched to, new jobs stay queued: they will run on the new ones.
      if (pending == nullptr || !fail_all_reason_.empty()) incoming.swap(incoming_);
      cancelled.swap(cancelled_);
      failure.swap(fail_all_reason_);
    }
    if (!failure.empty()) {
      for (auto& [sequence, choice] : choices_) {
        scheduler_.cancel(sequence);
        choice.stream->push(failed_event(choice.index, failure, 503));
      }
      choices_.clear();
      for (auto& [job, stream] : incoming) {
        for (int i = 0; i < job.choices; ++i) stream->push(failed_event(i, failure, 503));
      }
      incoming.clear();
    }
    for (const auto& stream : cancelled) {
      std::erase_if(choices_, [&](std::pair<uint64_t, Choice>& entry) {
        if (entry.second.stream != stream) return false;
        scheduler_.cancel(entry.first);  // blocks return to the pool now
        return true;
      });
    }
    if (abort_for_switch) abort_running("the weights are being updated from disk (abort_all_requests)");
    if (pending != nullptr && scheduler_.idle()) switch_weights(*pending);  // the queue enters on the next pass
    const std::string version = weight_version();
    for (auto& [job, stream] : incoming) {
      if (stream->cancelled_) continue;
      stream->weight_version_ = version;
      for (int i = 0; i < job.choices; ++i) {
        SequenceRequest request = job.settings;
        request.prompt = job.prompt;
        request.rng_row = job.first_rng_row + static_cast<uint64_t>(i);
        Choice choice{stream, i, SequenceOutput(tokenizer_, job.stop)};
        try {
          choices_.emplace_back(scheduler_.add(std::move(request)), std::move(choice));
        } catch (const std::exception& error) {
          stream->push(failed_event(i, error.what(), 500));
        }
      }
    }

    std::vector<SequenceToken> produced;
    try {
      produced = serve_step(scheduler_, runner_);
    } catch (const std::exception& error) {
      // Should not happen (requests are checked on submit); fail every open choice rather than the server.
      for (auto& [sequence, choice] : choices_) {
        scheduler_.cancel(sequence);
        choice.stream->push(failed_event(choice.index, error.what(), 500));
      }
      choices_.clear();
    }
    for (const SequenceToken& token : produced) {
      auto found = std::find_if(choices_.begin(), choices_.end(),
                                [&](const auto& entry) { return entry.first == token.sequence; });
      if (found == choices_.end()) continue;
      if (emit(found->second, token)) choices_.erase(found);  // eos, length or a stop string
    }

    const auto now = Clock::now();
    std::lock_guard lock(mutex_);
    status_.running = scheduler_.running();
    status_.waiting = scheduler_.waiting() + static_cast<int>(incoming_.size());
    status_.kv_blocks_used = pool_.referenced_blocks();
    status_.kv_blocks_cached = pool_.cached_blocks();
    status_.prefix_lookups = pool_.lookups();
    status_.prefix_hits = pool_.hits();
    status_.counters = scheduler_.counters();
    rate_window_.emplace_back(now, status_.counters.generated_tokens);
    while (rate_window_.size() > 2 && now - rate_window_.front().first > std::chrono::seconds(5)) {
      rate_window_.pop_front();
    }
    const double seconds = std::chrono::duration<double>(now - rate_window_.front().first).count();
    status_.generated_tokens_per_second =
        seconds > 0 ? static_cast<double>(status_.counters.generated_tokens - rate_window_.front().second) / seconds
                    : 0.0;
  }
}

}  // namespace minigen
