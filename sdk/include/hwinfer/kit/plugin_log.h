// plugin_log.h — sending a plugin's messages to the host's log callback (hwinfer_host_api::log).
//
// Must never print, and must not call a callback an older host's struct does not have: a host
// whose struct_size stops before |log|, or whose |log| is NULL, gets nothing.
#ifndef HWINFER_SDK_KIT_PLUGIN_LOG_H_
#define HWINFER_SDK_KIT_PLUGIN_LOG_H_

#include <cstdarg>
#include <cstdint>

#include "hwinfer/plugin.h"

namespace hwinfer::backend {

// True when |host| is large enough to hold a log callback and has one.
bool host_can_log(const hwinfer_host_api* host);

// Formats |format| with |args| (at most 1023 bytes are kept) and passes it to the host's log
// callback at |level|, as from |plugin_name|. Does nothing when the host cannot log.
void vlog_message(const hwinfer_host_api* host, uint32_t level, const char* plugin_name,
                  const char* format, va_list args)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 0)))
#endif
    ;

// vlog_message with the arguments in place.
void log_message(const hwinfer_host_api* host, uint32_t level, const char* plugin_name,
                 const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

}  // namespace hwinfer::backend

#endif  // HWINFER_SDK_KIT_PLUGIN_LOG_H_
