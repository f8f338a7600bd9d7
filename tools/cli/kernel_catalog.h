// tools/cli/kernel_catalog.h — one representative descriptor per kernel variant (kind x dtype),
// with small shapes and no buffers, used to ask a device which kernels it supports
// (`hwinfer plugin check`). Capability questions only: nothing here is ever launched.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hwinfer/plugin.h"

namespace hwinfer::cli {

struct CatalogEntry {
  std::string name;                           // "gemm f16", "attention_decode_paged i8-kv"
  std::shared_ptr<hwinfer_kernel_desc> desc;  // points at the full descriptor struct
};

std::vector<CatalogEntry> KernelCatalog();

}  // namespace hwinfer::cli
