// status_test.cpp — Status/StatusOr behaviour and the error-propagation macros.
#include "hwinfer/status.h"

#include <gtest/gtest.h>

#include <memory>

namespace hwinfer {
namespace {

StatusOr<int> ParsePositive(int value) {
  if (value <= 0) return InvalidArgument("value " + std::to_string(value) + " must be > 0");
  return value;
}

StatusOr<int> DoubleIt(int value) {
  HWINFER_ASSIGN_OR_RETURN(int parsed, ParsePositive(value));
  return parsed * 2;
}

Status CheckBoth(int a, int b) {
  HWINFER_RETURN_IF_ERROR(ParsePositive(a).status());
  HWINFER_RETURN_IF_ERROR(ParsePositive(b).status());
  return Status::Ok();
}

TEST(Status, DefaultIsOkWithEmptyMessage) {
  Status status;
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kOk);
  EXPECT_EQ(status.ToString(), "OK");
}

TEST(Status, ToStringNamesTheCode) {
  EXPECT_EQ(NotFound("plugin x missing").ToString(), "NOT_FOUND: plugin x missing");
  EXPECT_EQ(OutOfRange("o").ToString(), "OUT_OF_RANGE: o");
  EXPECT_STREQ(StatusCodeName(StatusCode::kFailedPrecondition), "FAILED_PRECONDITION");
}

TEST(Status, WithContextPrefixesMessageAndKeepsCode) {
  Status status = Unavailable("no GPU").WithContext("cuda");
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(status.message(), "cuda: no GPU");
  EXPECT_TRUE(Status::Ok().WithContext("ignored").ok());
}

TEST(StatusOr, AssignOrReturnPassesValueAndError) {
  auto good = DoubleIt(21);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 42);
  auto bad = DoubleIt(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "value -1 must be > 0");
}

TEST(StatusOr, ReturnIfErrorStopsAtFirstFailure) {
  EXPECT_TRUE(CheckBoth(1, 2).ok());
  EXPECT_EQ(CheckBoth(1, -2).message(), "value -2 must be > 0");
  EXPECT_EQ(CheckBoth(-1, -2).message(), "value -1 must be > 0");
}

TEST(StatusOr, HoldsMoveOnlyValues) {
  StatusOr<std::unique_ptr<int>> value = std::make_unique<int>(7);
  ASSERT_TRUE(value.ok());
  std::unique_ptr<int> taken = std::move(value).value();
  EXPECT_EQ(*taken, 7);
}

}  // namespace
}  // namespace hwinfer
