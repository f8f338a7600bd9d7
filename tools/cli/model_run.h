// tools/cli/model_run.h — what `hwinfer generate` and `hwinfer bench-model` share: the options
// that pick the model file, the device and the executor's settings, and opening all three.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cli_common.h"
#include "hwinfer/llama_executor.h"

namespace hwinfer::cli {

struct ModelRunOptions {
  std::string model_path;   // -m
  std::string backend;      // --backend NAME: its first device
  std::string device;       // --device SELECTOR ("cpu:0", a name, a UUID)
  std::string devices;      // --devices A,B: one model over several (needs split "layers")
  std::string split;        // --split layers
  std::string layer_split;  // --layer-split 11,11: layers per device ("" = by free memory)
  std::string kv_dtype = "f16";
  int64_t max_batch_tokens = 512;
  bool decode_graphs = true;   // --no-decode-graphs turns decode-graph replay off
  int64_t tp = 1;              // --tp N: tensor-parallel ranks (one MPI process each)
  double tp_timeout_s = 60;    // --tp-timeout S: the longest wait for the other ranks
  std::string tp_collectives;  // --tp-collectives auto|host|device ("" = auto, or the config's)
};

struct OpenedModel {
  Registry registry;
  std::shared_ptr<Device> device;  // the first device (with --tp: this rank's)
  std::unique_ptr<LlamaExecutor> executor;
  // With --tp, on ranks other than 0: the executor has followed rank 0's steps until rank 0
  // stopped; the command has nothing left to do.
  bool followed = false;
};

// What one run asks of the model: |sequences| at once, each a prompt of |prompt_tokens| followed
// by |new_tokens| generated ones.
struct RunSize {
  int64_t sequences = 1;
  int64_t prompt_tokens = 1;
  int64_t new_tokens = 1;
  int64_t logit_rows = 0;  // rows of logits a step may return (0: one per sequence)
};

// "11,11" -> {11, 11}; InvalidArgument naming |flag| for anything but positive integers.
StatusOr<std::vector<int64_t>> ParseLayerSplit(const std::string& text, const std::string& flag);

// The device |device| names, else |backend|'s first, else the registry's first; NotFound naming
// the devices there are (|where| follows the backend's name: " (named by FILE)").
StatusOr<const RegisteredDevice*> SelectDevice(const Registry& registry, const std::string& device,
                                               const std::string& backend,
                                               const std::string& where = "");

// Loads the registry and the model (validated), checks |size| against the model's context length
// (the last token is sampled, never fed back: prompt + new - 1 positions), then creates the
// executor with |size.sequences| sequences and a KV cache of exactly what the run needs (whole
// blocks per sequence): nothing is sized by the model's context length.
// With --tp N (under mpirun -np N): every rank opens its device (--device for all, or entry
// |rank| of --devices) and the model and creates its shard (errors agreed by all ranks); rank 0
// returns to run the command, the others follow rank 0's steps and return with |followed| set.
StatusOr<std::unique_ptr<OpenedModel>> OpenModel(const GlobalOptions& global,
                                                 const ModelRunOptions& options,
                                                 const RunSize& size);

}  // namespace hwinfer::cli
