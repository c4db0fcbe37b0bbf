#pragma once
// JSON form of a RequestRecord: one line of requests.jsonl. Field names are the ones in
// docs/metrics.md; times are integer nanoseconds on the run clock, relative to `origin`
// (the run's first scheduled time) so files from different runs line up.
#include <nlohmann/json.hpp>

#include "inferscope/core/timeline.h"

namespace inferscope {

nlohmann::json record_to_json(const RequestRecord& rec, Nanos origin);
// Inverse of record_to_json (times come back relative to origin 0). Throws
// InputError(where, line, field) on a missing or mistyped field.
RequestRecord record_from_json(const nlohmann::json& j, const std::string& where, int line);

}  // namespace inferscope
