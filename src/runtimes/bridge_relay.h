// BridgeRelay: the executor's end of one code-mode run's bridge.
//
// It owns a socketpair: one end becomes fd 3 of the jailed program, the other
// is read by a reader thread that hands each frame (length-prefixed, at most
// kBridgeMaxFrameBytes) to the run's BridgeHandler, and written by a writer
// thread that sends the handler's replies back in order. A reply is sent
// at once from the replying thread with a non-blocking send when nothing is
// queued (no thread wake-up); otherwise it is queued for the writer. Replies
// never block the caller, so a program that stops reading cannot stall the
// runner or the server.
//
//   AIRLOCK_ASSIGN_OR_RETURN(auto relay, BridgeRelay::Start(handler));
//   exec.bridge_fd = relay->jail_end();      // passed into the jail
//   jail->Exec(exec, &cancel);
//   relay->Finish();  // every frame the program sent has been handed over
//
// Finish() (also run by the destructor) shuts the program's side down for
// writing, drains the frames still buffered, then stops both threads; later
// replies are dropped.
//
// When the handler takes the socket (BridgeHandler::TakeSocket, offered by
// Start and Adopt), the relay starts no threads: it only keeps the jail end
// for the program, and Finish shuts that down for writing, so whoever took
// the socket reads what is buffered and then end of stream. The program never sees anything of airlock but this
// socket: no secrets, no other runs' frames.
#ifndef AIRLOCK_RUNTIMES_BRIDGE_RELAY_H_
#define AIRLOCK_RUNTIMES_BRIDGE_RELAY_H_

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "base/status.h"
#include "base/unique_fd.h"
#include "runtimes/bridge.h"

namespace airlock::runtimes {

class BridgeRelay {
 public:
  // `handler` must outlive the relay.
  static StatusOr<std::unique_ptr<BridgeRelay>> Start(BridgeHandler& handler);
  // The same over a bridge made earlier: `host_end` is the supervisor's end
  // of a socketpair whose other end a pre-started program already holds as
  // its fd 3 (jail::Jail::StartBridged). jail_end() is then -1.
  static std::unique_ptr<BridgeRelay> Adopt(BridgeHandler& handler, UniqueFd host_end);
  ~BridgeRelay();  // Finish()
  BridgeRelay(const BridgeRelay&) = delete;
  BridgeRelay& operator=(const BridgeRelay&) = delete;

  // The program's end (not owned by the caller; stays open until Finish);
  // -1 for an adopted bridge.
  int jail_end() const { return jail_end_.get(); }

  // See above. Idempotent.
  void Finish();

  // Whether the handler took the socket (BridgeHandler::TakeSocket): the
  // relay then starts no threads and reads nothing.
  bool handed_over() const { return handed_over_; }

 private:
  struct Outbox;  // the reply queue, shared with the handler's ReplyFns
  BridgeRelay(BridgeHandler& handler, UniqueFd host_end, UniqueFd jail_end);
  void ReadLoop();

  BridgeHandler& handler_;
  UniqueFd host_end_;
  UniqueFd jail_end_;
  std::shared_ptr<Outbox> outbox_;
  std::thread reader_;
  std::thread writer_;
  bool finished_ = false;
  bool handed_over_ = false;
};

}  // namespace airlock::runtimes

#endif  // AIRLOCK_RUNTIMES_BRIDGE_RELAY_H_
