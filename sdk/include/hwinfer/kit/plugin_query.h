// plugin_query.h — the argument checks every in-tree backend's hwinfer_plugin_query makes before
// it hands out its API table.
//
// Must not allocate anything but the error it returns; the table itself stays with the plugin.
#ifndef HWINFER_SDK_KIT_PLUGIN_QUERY_H_
#define HWINFER_SDK_KIT_PLUGIN_QUERY_H_

#include <cstdint>

#include "hwinfer/plugin.h"

namespace hwinfer::backend {

// INVALID_ARGUMENT when |out_api| is NULL; UNSUPPORTED when the host asks for an |abi_major| other
// than the one this build implements (HWINFER_ABI_MAJOR); else NULL.
hwinfer_error* check_plugin_query(const char* plugin_name, uint32_t abi_major,
                                  const hwinfer_plugin_api* const* out_api);

}  // namespace hwinfer::backend

#endif  // HWINFER_SDK_KIT_PLUGIN_QUERY_H_
