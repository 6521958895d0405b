#pragma once
// The serving engine: one thread that owns the scheduler and the model runner and runs serving steps (plan, run,
// apply) while there is work, and a thread-safe
// front door for the HTTP handlers — submit a job, read its events as they come, cancel it.
//
// A job is one API request: a prompt and n choices. Each choice is one scheduler sequence with rng row = its
// index, so choice i of a request draws the same tokens whatever else the server is doing.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "request/job.h"
#include "serve/model_runner.h"
#include "serve/scheduler.h"
#include "serve/sequence_output.h"
#include "tokenizer/bpe_tokenizer.h"

namespace minigen {

// The event queue of one job, shared by the engine (writer) and an HTTP handler (reader).
class JobStream {
 public:
  // Waits up to `timeout` for the next event; false on timeout.
  bool next(JobEvent& event, std::chrono::milliseconds timeout);
  // Waits up to `timeout` until an event is there, without taking it; false on timeout.
  bool wait(std::chrono::milliseconds timeout);
  int prompt_tokens() const { return prompt_tokens_; }
  std::chrono::steady_clock::time_point submitted() const { return submitted_; }
  // The weights its tokens come from (Engine::weight_version when the job entered the scheduler); read it after
  // the first event.
  const std::string& weight_version() const { return weight_version_; }

 private:
  friend class Engine;
  void push(JobEvent event);

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<JobEvent> events_;
  int prompt_tokens_ = 0;
  std::chrono::steady_clock::time_point submitted_;
  std::string weight_version_;
  std::atomic<bool> cancelled_{false};
};

struct EngineStatus {
  int running = 0;
  int waiting = 0;  // sequences queued in the scheduler plus jobs not yet handed to it
  int kv_blocks_total = 0;
  int kv_blocks_used = 0;          // referenced by a sequence
  int kv_blocks_cached = 0;        // in the prefix cache (referenced or not)
  std::size_t kv_block_bytes = 0;  // one block over every layer, in the pool's KV dtype (int8 with its scales)
  int64_t prefix_lookups = 0;
  int64_t prefix_hits = 0;
  SchedulerCounters counters;
  int64_t jobs_submitted = 0;
  int64_t jobs_rejected = 0;
  double generated_tokens_per_second = 0;  // over the last few seconds
};

struct EngineBusy : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Engine {
 public:
  Engine(Transformer& transformer, BlockPool& pool, const Tokenizer& tokenizer, SchedulerOptions options,
         int max_waiting_jobs);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Queues a job. Throws minigen::Error for a job that can never run (the message is for the client), and
  // EngineBusy when max_waiting_jobs are already waiting.
  std::shared_ptr<JobStream> submit(Job job);
  // Several jobs at once (the prompts of one SGLang /generate request): every job is checked first, then all are
  // queued together, so they join the same scheduler step and the batch; one capacity check for the lot.
  std::vector<std::shared_ptr<JobStream>> submit_all(std::vector<Job> jobs);
  // The client went away: its sequences are dropped and their blocks freed before the next step.
  void cancel(const std::shared_ptr<JobStream>& stream);
  // Ends every job, queued or running, with an error event carrying `reason` (HTTP 503): the end of a drain.
  void fail_all(const std::string& reason);

  // Empties the prefix cache on the engine thread between two steps; returns the cached blocks forgotten.
  int flush_prefix_cache();

  // Serves `next` from now on (an RL trainer's new policy, POST /update_weights_from_disk), atomically: no token
  // is computed from a mix of weights, nor with KV the old weights computed. From the call on, jobs queue without
  // entering the scheduler; the sequences in it run to their end on the old weights — or, with `abort_running`,
  // end at once with finish_reason "abort"; once it is empty the engine thread switches, empties the prefix cache
  // and admits the queue. Returns when the switch is made, after which the old Transformer is no longer used.
  // `next` must have the configuration of the weights served so far. Throws minigen::Error when the engine stops
  // first.
  void replace_weights(Transformer& next, std::string version, bool abort_running);

  EngineStatus status() const;
  const ModelConfig& config() const { return config_; }  // the same for every weights the engine serves
  std::string weight_version() const;

 private:
  struct Choice {
    std::shared_ptr<JobStream> stream;
    int index;
    SequenceOutput output;  // its text: decoded, cut at a stop string
  };
  void run();
  // Sends a token's text to its stream; true when the choice is finished.
  bool emit(Choice& choice, const SequenceToken& token);

  // Ends every sequence in the scheduler with finish_reason "abort" (a weight switch that does not wait).
  void abort_running(const std::string& reason);
  // Switches to the pending weights: only when the scheduler is empty.
  void switch_weights(Transformer& next);

  Transformer* transformer_;  // engine thread only; replace_weights hands it a new one
  const ModelConfig config_;
  const Tokenizer& tokenizer_;
  Scheduler scheduler_;
  ModelRunner runner_;
  BlockPool& pool_;
  const int max_waiting_jobs_;

  mutable std::mutex mutex_;
  std::condition_variable work_;
  std::deque<std::pair<Job, std::shared_ptr<JobStream>>> incoming_;
  std::vector<std::shared_ptr<JobStream>> cancelled_;
  std::string fail_all_reason_;   // set by fail_all, handled by the engine thread
  bool flush_requested_ = false;  // set by flush_prefix_cache, done by the engine thread
  int flushed_blocks_ = -1;       // its answer, −1 until done
  std::condition_variable flushed_;
  Transformer* pending_weights_ = nullptr;  // set by replace_weights, switched to by the engine thread
  std::string pending_version_;
  bool pending_abort_ = false;
  std::condition_variable switched_;
  std::string weight_version_ = "default";  // SGLang's name for the weights the server started with
  bool stopping_ = false;
  EngineStatus status_;  // published by the engine thread after every step
  std::deque<std::pair<std::chrono::steady_clock::time_point, int64_t>> rate_window_;

  std::vector<std::pair<uint64_t, Choice>> choices_;  // engine thread only
  std::thread thread_;
};

}  // namespace minigen
