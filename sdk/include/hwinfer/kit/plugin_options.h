// plugin_options.h — checks and parsers for the hwinfer_option arrays of plugin_init and
// device_open. What the keys mean stays with each plugin; this file only checks the array's shape
// and parses values.
//
// Must not keep pointers into the options: they are valid only during the call.
#ifndef HWINFER_SDK_KIT_PLUGIN_OPTIONS_H_
#define HWINFER_SDK_KIT_PLUGIN_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hwinfer/plugin.h"

namespace hwinfer::backend {

// INVALID_ARGUMENT "<plugin_name> <what>: options is NULL but n_options is N" when |options| is
// NULL with a non-zero |n_options|, else NULL.
hwinfer_error* check_option_array(const char* plugin_name, const char* what,
                                  const hwinfer_option* options, size_t n_options);

// INVALID_ARGUMENT naming option |index| when its struct_size cannot hold |value|, or its key or
// value is NULL; else NULL. Call it before reading option.key or option.value.
hwinfer_error* check_option(const char* plugin_name, const char* what, const hwinfer_option& option,
                            size_t index);

// Parses decimal digits only (at most |max_digits| of them, leading zeros included) into
// [min, max]. Returns false, leaving |*out| alone, for anything else.
bool parse_uint(std::string_view text, uint64_t min, uint64_t max, uint64_t* out,
                size_t max_digits = 12);

}  // namespace hwinfer::backend

#endif  // HWINFER_SDK_KIT_PLUGIN_OPTIONS_H_
