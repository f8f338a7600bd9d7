// tools/cli/kernel_catalog.h — one representative descriptor per kernel variant (kind x dtype),
// with small shapes and no buffers, used to ask a device which kernels it supports
// (`hwinfer plugin check`). Capability questions only: nothing here is ever launched.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hwinfer/kit/kernel_samples.h"
#include "hwinfer/plugin.h"

namespace hwinfer::cli {

// name ("gemm f16", "attention_decode_paged i8-kv") and the full descriptor struct; the samples
// of each kind live in its file of the plugin kit (sdk/kit/kinds/<kind>.cpp).
using CatalogEntry = kit::KernelSample;

std::vector<CatalogEntry> KernelCatalog();

}  // namespace hwinfer::cli
