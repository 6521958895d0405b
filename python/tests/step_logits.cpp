// The logits `minigen generate` samples from, for the Python tests to compare with Model.forward bit for bit:
//   minigen_step_logits MODEL WEIGHTS THREADS MAX_NEW_TOKENS OUT.f32 ID...
// loads MODEL as the CLI does (ModelSettings), runs the CLI's generate loop greedily with the KV cache, writes
// every step's raw logits ([steps][vocab] float32) to OUT.f32 and prints the new token ids as a JSON array.
// No flag of the program prints logits, so this is the CLI's code path in a process of its own.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "checkpoint/model_settings.h"
#include "core/error.h"
#include "generate/generate.h"

int main(int argc, char** argv) {
  if (argc < 7) {
    std::cerr << "usage: minigen_step_logits MODEL WEIGHTS THREADS MAX_NEW_TOKENS OUT.f32 ID...\n";
    return 2;
  }
  try {
    minigen::ModelSettings settings;
    settings.model_path = argv[1];
    settings.weights = argv[2];
    settings.threads = std::stoi(argv[3]);
    minigen::LoadedModel loaded = settings.load();
    minigen::ThreadPool pool(settings.thread_count());
    const minigen::WeightType weight_type = settings.weight_type(*loaded.model);
    minigen::Transformer transformer(*loaded.model, pool, weight_type, settings.activation_codes(weight_type));
    loaded.model->release_matrices();

    minigen::GenerateOptions options;
    options.max_new_tokens = std::stoi(argv[4]);
    options.sampling.greedy = true;
    options.keep_step_logits = true;
    std::vector<std::vector<int>> prompts(1);
    for (int i = 6; i < argc; ++i) prompts[0].push_back(std::stoi(argv[i]));
    const minigen::GeneratedSequence sequence = minigen::generate(transformer, prompts, options).sequences.at(0);

    std::ofstream out(argv[5], std::ios::binary);
    for (const std::vector<float>& step : sequence.step_logits)
      out.write(reinterpret_cast<const char*>(step.data()), static_cast<std::streamsize>(step.size() * sizeof(float)));
    std::cout << "[";
    for (std::size_t i = 0; i < sequence.token_ids.size(); ++i) std::cout << (i ? ", " : "") << sequence.token_ids[i];
    std::cout << "]\n";
    return out ? 0 : 1;
  } catch (const minigen::Error& error) {
    std::cerr << "minigen_step_logits: " << error.what() << "\n";
    return 1;
  }
}
