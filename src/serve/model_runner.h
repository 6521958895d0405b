#pragma once
// The part of a serving step that touches the model: it executes a SchedulePlan (serve/schedule_plan.h) — one
// forward call over the planned feeds, then each planned draw: its grammar's mask work, then mask → chain → draw
// (generate/sequence_state.h) — and reports what happened, leaving every change of state to Scheduler::apply.
#include <vector>

#include "model/transformer.h"
#include "serve/schedule_plan.h"
#include "serve/scheduler.h"

namespace minigen {

class ModelRunner {
 public:
  explicit ModelRunner(Transformer& transformer) : transformer_(&transformer) {}

  // The draws run side by side on the model's thread pool: each depends only on its own sequence (counter-based
  // randomness, its own matcher). A draw that cannot be made is reported as failed, never thrown.
  StepOutcome run(const SchedulePlan& plan, Scheduler& scheduler);

  const Transformer& transformer() const { return *transformer_; }
  // Runs the next plans with other weights of the same configuration (Engine::replace_weights).
  void use(Transformer& transformer) { transformer_ = &transformer; }

 private:
  Transformer* transformer_;
};

// One serving step: plan, run, apply. The engine's loop is made of it, and so are the tests that compare whole
// runs with generate().
std::vector<SequenceToken> serve_step(Scheduler& scheduler, ModelRunner& runner);

}  // namespace minigen
