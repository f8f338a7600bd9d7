// tools/cli/bench_model_source.h — turns a bench config's `model:` section into a GGUF file:
// `path` as given, or a `shape` (+ `type`) synthesised once into the cache folder and reused
// afterwards (random weights, `weights: synthesize`), or written as a sparse all-zero file
// (`weights: dummy`, any size in milliseconds: for simulated devices and shapes too large to
// generate).
#pragma once

#include <string>

#include "hwinfer/bench_config.h"
#include "hwinfer/status.h"

namespace hwinfer::cli {

// The cache folder: |configured| if set, else $XDG_CACHE_HOME/hwinfer, else ~/.cache/hwinfer,
// else /tmp/hwinfer-cache.
std::string BenchCacheDir(const std::string& configured);

// Returns the GGUF path for |source|, creating the file when needed (logging one line to stderr
// when it synthesises). Errors name the shape file, the type or the cache path.
StatusOr<std::string> ResolveBenchModel(const ModelSource& source);

}  // namespace hwinfer::cli
