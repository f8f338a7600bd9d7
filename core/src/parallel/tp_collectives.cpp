// tp_collectives.cpp — the names of TpCollectives (hwinfer/collective.h): what the CLI's
// --tp-collectives and the YAML's scheduler.tp_collectives take.
#include <fmt/format.h>

#include <string>

#include "hwinfer/collective.h"

namespace hwinfer {

const char* TpCollectivesName(TpCollectives mode) {
  switch (mode) {
    case TpCollectives::kAuto:
      return "auto";
    case TpCollectives::kHost:
      return "host";
    case TpCollectives::kDevice:
      return "device";
  }
  return "?";
}

StatusOr<TpCollectives> ParseTpCollectives(const std::string& text) {
  for (TpCollectives mode : {TpCollectives::kAuto, TpCollectives::kHost, TpCollectives::kDevice}) {
    if (text == TpCollectivesName(mode)) return mode;
  }
  return InvalidArgument(fmt::format(
      "tensor-parallel collectives '{}': expected auto, host (through host memory) or device "
      "(the devices' own all-reduce)",
      text));
}

}  // namespace hwinfer
