// epochFromPath: the temporal epoch the stage tools' layout puts in a path
// (pipegen and blobgen read it when --epoch is not given).
#include "support/file_io.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>

using tessera::epochFromPath;

TEST_CASE("epochFromPath: the last temporal_epoch_<E> directory", "[support][path]") {
  CHECK(epochFromPath("out/temporal_epoch_12/overlay/pipegen.yaml") == std::optional<uint32_t>(12));
  CHECK(epochFromPath("temporal_epoch_0/pipegen.yaml") == std::optional<uint32_t>(0));
  CHECK(epochFromPath("a/temporal_epoch_3/b/temporal_epoch_4/pipegen.yaml") == std::optional<uint32_t>(4));
  CHECK(epochFromPath("/abs/temporal_epoch_7/blob.yaml") == std::optional<uint32_t>(7));
  CHECK_FALSE(epochFromPath("x_temporal_epoch_3/pipegen.yaml"));
  CHECK_FALSE(epochFromPath("temporal_epoch_3x/pipegen.yaml"));
  CHECK_FALSE(epochFromPath("temporal_epoch_/pipegen.yaml"));
  CHECK_FALSE(epochFromPath("temporal_epoch_-1/pipegen.yaml"));
  CHECK_FALSE(epochFromPath("pipegen.yaml"));
  // 32 bits: 2^32 - 1 is an epoch, 2^32 is not.
  CHECK(epochFromPath("temporal_epoch_4294967295/b.yaml") == std::optional<uint32_t>(4294967295u));
  CHECK_FALSE(epochFromPath("temporal_epoch_4294967296/b.yaml"));
}
