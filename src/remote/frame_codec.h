// Translation between the local runner protocol's JSON frames
// (runner/runner_loop.h) and the runner-host protocol's typed messages
// (runner_host.proto). Both pumps use it: the gateway's link turns the
// RunnerClient's frames into GatewayMessages and RunnerMessages back into
// frames; the runner host does the reverse for its RunnerMain.
//
// A frame of an unknown type, or with a field of the wrong type, is an
// InvalidArgument error (the pump logs and drops it, as RunnerMain does with
// a malformed frame); nothing is silently reshaped.
//
//   StatusOr<GatewayMessage> m = GatewayMessageFromFrame(frame);
//   StatusOr<nlohmann::json> back = FrameFromGatewayMessage(*m);  // == frame
#ifndef AIRLOCK_REMOTE_FRAME_CODEC_H_
#define AIRLOCK_REMOTE_FRAME_CODEC_H_

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "remote/runner_host.pb.h"

namespace airlock::remote {

// Gateway -> runner host ("run", "cancel", "languages", "ping", "health",
// "bridge_reply", "session_open", "session_close", "session_pause",
// "session_resume", "session_fork", "session_export", "session_import" (these
// two carry image bytes base64 in a frame, raw in a message), "drained").
StatusOr<v1::GatewayMessage> GatewayMessageFromFrame(const nlohmann::json& frame);
StatusOr<nlohmann::json> FrameFromGatewayMessage(const v1::GatewayMessage& message);

// Runner host -> gateway ("hello", "progress", "result", "languages",
// "pong", "health", "bridge", "bridge_error", "session" (with a "chunk" when
// it answers a "session_export"), "draining" (unasked, id 0: only a runner
// host sends it, never RunnerMain)).
StatusOr<v1::RunnerMessage> RunnerMessageFromFrame(const nlohmann::json& frame);
StatusOr<nlohmann::json> FrameFromRunnerMessage(const v1::RunnerMessage& message);

}  // namespace airlock::remote

#endif  // AIRLOCK_REMOTE_FRAME_CODEC_H_
