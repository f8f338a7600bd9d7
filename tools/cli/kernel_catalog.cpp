// kernel_catalog.cpp — see kernel_catalog.h: every kind's samples from the plugin kit.
#include "kernel_catalog.h"

#include "hwinfer/kit/kernel_samples.h"

namespace hwinfer::cli {

std::vector<CatalogEntry> KernelCatalog() { return kit::all_kernel_samples(); }

}  // namespace hwinfer::cli
