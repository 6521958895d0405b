#pragma once
// m.stream(...): generate runs on a worker thread and hands over text pieces as they are decoded, so that Python can
// iterate while the model computes (and without the GIL). Leaving the loop early cancels the run.
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "python_model.h"

namespace minigen::python {

class TextStream {
 public:
  TextStream(std::shared_ptr<PythonModel> model, RunRequest run);
  ~TextStream();  // cancels an unfinished run and waits for the worker
  TextStream(const TextStream&) = delete;
  TextStream& operator=(const TextStream&) = delete;

  // The next piece of text (possibly empty while a character is incomplete), or nothing once the run has ended.
  // Blocks until there is one; rethrows the run's error.
  std::optional<std::string> next();
  // The CLI's --json summary, once next() has returned nothing.
  nlohmann::json summary() const;

 private:
  void run(const RunRequest& request);

  std::shared_ptr<PythonModel> model_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::string> pieces_;
  bool done_ = false;
  bool cancelled_ = false;
  std::exception_ptr error_;
  nlohmann::json summary_;
  std::thread worker_;  // last: started once everything above exists
};

}  // namespace minigen::python
