// tensor_parallel.cpp — the LlamaExecutor's tensor-parallel side (hwinfer/llama_executor.h,
// docs/multi-device.md section 3): creating every rank's shard with one agreed outcome, rank 0
// sending each step's plan, the other ranks running it, and every rank's step stats gathered.
//
// A step's plan is what rank 0 decided on the host: the step's shape, its I32 region (token ids,
// positions, slots, block tables, context lengths) and its KV operations (copy-on-write copies,
// I8 scale resets). The other ranks hold no KV bookkeeping of their own: they run exactly that.
#include <fmt/format.h>

#include <algorithm>
#include <type_traits>

#include "executor_internal.h"
#include "hwinfer/device_comm.h"
#include "hwinfer/llama_executor.h"
#include "hwinfer/log.h"
#include "hwinfer/plugin_loader.h"

namespace hwinfer {
namespace {

using executor_internal::Stage;
using executor_internal::StepShape;

// Rank 0's communicator id, or that it could not make one.
struct CommIdMessage {
  int64_t made = 0;
  hwinfer_comm_id id{};
};
static_assert(std::is_trivially_copyable_v<CommIdMessage>, "sent as bytes");

// The fixed-size part of a step's plan; |stop| ends the other ranks' Follow (rank 0's executor
// is gone).
struct PlanHeader {
  int64_t stop = 0;
  int64_t n_tokens = 0, n_prefill_tokens = 0, n_prefill_seqs = 0, n_decode_seqs = 0;
  int64_t n_ints = 0, n_copies = 0, n_resets = 0;
};

// What rank 0 sends before each executor: create one with |options|, or end.
struct CreateMessage {
  int64_t end = 0;
  ExecutorOptions options;
};

static_assert(std::is_trivially_copyable_v<CreateMessage>, "sent as bytes");
static_assert(std::is_trivially_copyable_v<RankStepStats>, "sent as bytes");

constexpr char kCreating[] = "creating the tensor-parallel shards";

// Rank 0's message on every rank (the others wait for it without a deadline: rank 0 may be
// loading a large model, or idle between runs).
Status ShareCreateMessage(Collective& collective, CreateMessage* message) {
  return collective.Broadcast(message, sizeof(*message), "rank 0's next executor",
                              collective.rank() != 0);
}

}  // namespace

StatusOr<std::unique_ptr<LlamaExecutor>> LlamaExecutor::CreateTensorParallel(
    std::shared_ptr<Device> device, std::shared_ptr<const LlamaModel> model,
    const ExecutorOptions& options, std::shared_ptr<Collective> collective) {
  if (collective == nullptr) return InvalidArgument("tensor parallelism: no collective");
  if (collective->rank() != 0) {
    return FailedPrecondition("CreateTensorParallel runs on rank 0; the others follow");
  }
  CreateMessage message;
  message.options = options;
  HWINFER_RETURN_IF_ERROR(ShareCreateMessage(*collective, &message));
  StatusOr<std::unique_ptr<LlamaExecutor>> created =
      device == nullptr || model == nullptr
          ? StatusOr<std::unique_ptr<LlamaExecutor>>(InvalidArgument("no device or model"))
          : Build({device}, model, options, {}, collective);
  Status agreed =
      AgreeOnStatus(*collective, created.ok() ? Status::Ok() : created.status(), kCreating);
  if (agreed.ok()) agreed = (*created)->SetUpDeviceAllReduces();
  if (!agreed.ok()) {
    // The other ranks are not following: this executor must not send them a stop.
    if (created.ok()) (*created)->impl_->followers_stopped = true;
    return agreed;
  }
  return created;
}

Status LlamaExecutor::EndTensorParallel(Collective& collective) {
  CreateMessage message;
  message.end = 1;
  return ShareCreateMessage(collective, &message);
}

Status LlamaExecutor::FollowTensorParallel(const std::shared_ptr<Collective>& collective,
                                           const std::shared_ptr<Device>& device,
                                           const std::shared_ptr<const LlamaModel>& model) {
  if (collective->rank() == 0) {
    return FailedPrecondition("FollowTensorParallel runs on ranks other than 0");
  }
  for (;;) {
    CreateMessage message;
    HWINFER_RETURN_IF_ERROR(ShareCreateMessage(*collective, &message));
    if (message.end != 0) return Status::Ok();
    StatusOr<std::unique_ptr<LlamaExecutor>> created =
        Build({device}, model, message.options, {}, collective);
    HWINFER_RETURN_IF_ERROR(
        AgreeOnStatus(*collective, created.ok() ? Status::Ok() : created.status(), kCreating));
    HWINFER_RETURN_IF_ERROR((*created)->SetUpDeviceAllReduces());
    HWINFER_RETURN_IF_ERROR((*created)->Follow());
  }
}

Status LlamaExecutor::FailTensorParallel(Collective& collective, const Status& why) {
  CreateMessage message;
  HWINFER_RETURN_IF_ERROR(ShareCreateMessage(collective, &message));
  if (message.end != 0) return Status::Ok();
  return AgreeOnStatus(collective, why, kCreating);
}

Status LlamaExecutor::SetUpDeviceAllReduces() {
  Impl& impl = *impl_;
  Collective& collective = *impl.collective;
  const TpCollectives mode = options_.tp_collectives;  // the same on every rank (rank 0's)
  if (mode == TpCollectives::kHost ||
      (mode == TpCollectives::kAuto && collective.ModelledAllReduceSeconds(1) > 0)) {
    return Status::Ok();  // host memory, or simulated ranks (their all-reduces are modelled)
  }
  Stage& stage = impl.stages.front();
  const std::shared_ptr<Device>& device = stage.device;
  const auto fall_back = [&](const Status& why) {
    if (mode == TpCollectives::kDevice) {
      return why.WithContext("--tp-collectives device");
    }
    if (collective.rank() == 0) {
      Log(LogLevel::kInfo, "executor",
          "tensor parallelism: all-reduces through host memory (" + why.message() + ")");
    }
    return Status::Ok();
  };
  // 1. Can every rank's device? (Nobody waits in a join a rank will never make.)
  const Status able = AgreeOnStatus(collective, DeviceComm::RequireSupported(*device),
                                    "checking the devices' collectives");
  if (!able.ok()) return able.code() == StatusCode::kUnsupported ? fall_back(able) : able;
  // 2. Rank 0 makes the id; every rank gets it.
  CommIdMessage message;
  Status made = Status::Ok();
  if (collective.rank() == 0) {
    StatusOr<hwinfer_comm_id> id = DeviceComm::CreateId(*device);
    made = id.status();
    if (id.ok()) message.id = *id, message.made = 1;
  }
  HWINFER_RETURN_IF_ERROR(
      collective.Broadcast(&message, sizeof(message), "the device communicator's id", false));
  made = AgreeOnStatus(collective, made, "making the device communicator's id");
  if (!made.ok()) return fall_back(made);
  // 3. Every rank joins, within the group's deadline.
  StatusOr<DeviceComm> comm = DeviceComm::Init(device, message.id, collective.size(),
                                               collective.rank(), collective.deadline_seconds());
  const Status joined = AgreeOnStatus(collective, comm.status(), "joining the device communicator");
  if (!joined.ok()) return fall_back(joined);
  // An event pair per all-reduce of a step: two per layer.
  const int64_t layers = stage.end_layer - stage.first_layer;
  for (int64_t i = 0; i < 2 * layers; ++i) {
    HWINFER_ASSIGN_OR_RETURN(Event begin, device->CreateEvent());
    HWINFER_ASSIGN_OR_RETURN(Event end, device->CreateEvent());
    impl.comm_events.emplace_back(std::move(begin), std::move(end));
  }
  impl.device_comm = std::move(*comm);
  if (collective.rank() == 0) {
    Log(LogLevel::kInfo, "executor",
        fmt::format("tensor parallelism: all-reduces on the devices ({} communicator of {} ranks)",
                    device->plugin().name(), collective.size()));
  }
  return Status::Ok();
}

Status LlamaExecutor::SharePlan(const StepShape& shape) {
  Impl& impl = *impl_;
  PlanHeader header;
  header.n_tokens = shape.n_tokens;
  header.n_prefill_tokens = shape.n_prefill_tokens;
  header.n_prefill_seqs = shape.n_prefill_seqs;
  header.n_decode_seqs = shape.n_decode_seqs;
  header.n_ints = static_cast<int64_t>(impl.host_ints.size());
  header.n_copies = static_cast<int64_t>(impl.kv_copies.size());
  header.n_resets = static_cast<int64_t>(impl.kv_resets.size());
  Collective& collective = *impl.collective;
  HWINFER_RETURN_IF_ERROR(
      collective.Broadcast(&header, sizeof(header), "rank 0's step plan", false));
  std::vector<int32_t>& plan = impl.plan;
  plan.assign(impl.host_ints.begin(), impl.host_ints.end());
  for (const auto& [from, to] : impl.kv_copies) {
    plan.push_back(from);
    plan.push_back(to);
  }
  plan.insert(plan.end(), impl.kv_resets.begin(), impl.kv_resets.end());
  return collective.Broadcast(plan.data(), static_cast<int64_t>(plan.size() * sizeof(int32_t)),
                              "rank 0's step plan", false);
}

Status LlamaExecutor::Follow() {
  Impl& impl = *impl_;
  if (impl.collective == nullptr || impl.collective->rank() == 0) {
    return FailedPrecondition("Follow runs on tensor-parallel ranks other than 0");
  }
  Collective& collective = *impl.collective;
  for (;;) {
    PlanHeader header;
    HWINFER_RETURN_IF_ERROR(
        collective.Broadcast(&header, sizeof(header), "waiting for rank 0's next step", true));
    if (header.stop != 0) return Status::Ok();
    if (header.n_ints != static_cast<int64_t>(impl.host_ints.size()) || header.n_copies < 0 ||
        header.n_resets < 0 || header.n_tokens > options_.max_batch_tokens) {
      return Internal(fmt::format(
          "rank {}: rank 0's step plan does not fit this rank's executor ({} integers, {} "
          "tokens; this rank has {} and {})",
          collective.rank(), header.n_ints, header.n_tokens, impl.host_ints.size(),
          options_.max_batch_tokens));
    }
    std::vector<int32_t>& plan = impl.plan;
    plan.resize(static_cast<size_t>(header.n_ints + 2 * header.n_copies + header.n_resets));
    HWINFER_RETURN_IF_ERROR(
        collective.Broadcast(plan.data(), static_cast<int64_t>(plan.size() * sizeof(int32_t)),
                             "rank 0's step plan", false));
    auto next = plan.begin();
    std::copy(next, next + header.n_ints, impl.host_ints.begin());
    next += header.n_ints;
    impl.kv_copies.clear();
    for (int64_t i = 0; i < header.n_copies; ++i, next += 2)
      impl.kv_copies.emplace_back(next[0], next[1]);
    impl.kv_resets.assign(next, plan.end());
    StepShape shape;
    shape.n_tokens = header.n_tokens;
    shape.n_prefill_tokens = header.n_prefill_tokens;
    shape.n_prefill_seqs = header.n_prefill_seqs;
    shape.n_decode_seqs = header.n_decode_seqs;
    shape.logits_from_normed = true;  // no logits here: rank 0 projects and samples
    HWINFER_RETURN_IF_ERROR(RunStages(shape, {}));
    ++steps_run_;
  }
}

Status LlamaExecutor::StopFollowers() {
  Impl& impl = *impl_;
  if (impl.collective == nullptr || impl.collective->rank() != 0 || impl.followers_stopped) {
    return Status::Ok();
  }
  impl.followers_stopped = true;
  PlanHeader header;
  header.stop = 1;
  return impl.collective->Broadcast(&header, sizeof(header), "stopping the other ranks", false);
}

CostTotals StepStats::system_cost() const {
  if (ranks.empty()) return cost;
  CostTotals total;
  for (const RankStepStats& rank : ranks) total.Add(rank.cost);
  return total;
}

void AccumulateRankStats(const std::vector<RankStepStats>& step,
                         std::vector<RankStepStats>* totals) {
  totals->resize(std::max(totals->size(), step.size()));
  for (size_t r = 0; r < step.size(); ++r) {
    RankStepStats& total = (*totals)[r];
    total.cost.Add(step[r].cost);
    total.kernels += step[r].kernels;
    total.device_seconds += step[r].device_seconds;
    total.comm_seconds += step[r].comm_seconds;
  }
}

Status LlamaExecutor::GatherRankStats() {
  Collective& collective = *impl_->collective;
  RankStepStats mine;
  mine.cost = last_step_.cost;
  mine.kernels = last_step_.kernels;
  mine.device_seconds = last_step_.device_seconds;
  mine.comm_seconds = last_step_.comm_seconds;
  std::vector<RankStepStats> all(static_cast<size_t>(collective.size()));
  HWINFER_RETURN_IF_ERROR(
      collective.AllGather(&mine, sizeof(mine), all.data(), "gathering the ranks' step stats"));
  if (collective.rank() == 0) last_step_.ranks = std::move(all);
  return Status::Ok();
}

}  // namespace hwinfer
