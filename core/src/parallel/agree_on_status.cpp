// agree_on_status.cpp — AgreeOnStatus (hwinfer/collective.h): every rank's status exchanged as a
// fixed-size record, so ranks that failed before a collective step (a model that would not load)
// still meet the others there and every rank leaves with the same answer.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "hwinfer/collective.h"

namespace hwinfer {
namespace {

// One rank's status on the wire: its code and the start of its message.
struct StatusRecord {
  int32_t code = 0;
  char message[1020] = {};
};

}  // namespace

Status AgreeOnStatus(Collective& collective, const Status& mine, const std::string& what) {
  StatusRecord record;
  record.code = static_cast<int32_t>(mine.code());
  const std::string text = mine.ok() ? std::string() : mine.message();
  std::memcpy(record.message, text.data(), std::min(text.size(), sizeof(record.message) - 1));
  std::vector<StatusRecord> all(static_cast<size_t>(collective.size()));
  HWINFER_RETURN_IF_ERROR(collective.AllGather(&record, sizeof(record), all.data(), what));
  for (size_t rank = 0; rank < all.size(); ++rank) {
    if (all[rank].code == 0) continue;
    all[rank].message[sizeof(all[rank].message) - 1] = '\0';
    return Status(static_cast<StatusCode>(all[rank].code),
                  fmt::format("rank {}: {}", rank, all[rank].message));
  }
  return Status::Ok();
}

}  // namespace hwinfer
