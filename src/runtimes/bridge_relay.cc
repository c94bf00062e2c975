#include "runtimes/bridge_relay.h"

#include <sys/socket.h>

#include <cerrno>

#include "base/frame.h"

namespace airlock::runtimes {

// Replies on their way to the program. Shared with the ReplyFns handed to
// the handler, which may outlive the relay: after Close, Push drops frames.
//
// A reply goes out at once from the replying thread (a non-blocking send)
// when nothing is queued or being written; otherwise, or for what a full
// socket did not take, it waits in order for the writer thread. So the
// usual reply costs no thread wake-up, and a program that stops reading
// still cannot block the handler.
struct BridgeRelay::Outbox {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::string> chunks;  // framed bytes; the front may be a frame's unsent tail
  bool closed = false;
  bool writing = false;  // the writer thread is sending a chunk (outside the lock)
  int fd = -1;           // the relay's end; valid until Close

  void Push(const std::string& frame) {
    StatusOr<std::string> encoded = EncodeFrame(frame, kBridgeMaxFrameBytes);
    if (!encoded.ok()) {
      Close();  // as a failed write: the program gets no more replies
      return;
    }
    std::string bytes = std::move(encoded).value();
    std::lock_guard<std::mutex> lock(mu);
    if (closed) return;
    if (chunks.empty() && !writing) {
      ssize_t n;
      do {
        n = send(fd, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      } while (n < 0 && errno == EINTR);
      if (n == static_cast<ssize_t>(bytes.size())) return;
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
        closed = true;  // the program is gone
        return;
      }
      if (n > 0) bytes.erase(0, static_cast<size_t>(n));
    }
    chunks.push_back(std::move(bytes));
    cv.notify_one();
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu);
    closed = true;
    chunks.clear();
    cv.notify_all();
  }
  // Blocks for the next chunk and marks it being written; false once closed.
  bool Pop(std::string* out) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return closed || !chunks.empty(); });
    if (closed) return false;
    *out = std::move(chunks.front());
    chunks.pop_front();
    writing = true;
    return true;
  }
  void Written() {
    std::lock_guard<std::mutex> lock(mu);
    writing = false;
  }
};

StatusOr<std::unique_ptr<BridgeRelay>> BridgeRelay::Start(BridgeHandler& handler) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return ErrnoError("socketpair for the bridge");
  std::unique_ptr<BridgeRelay> relay(new BridgeRelay(handler, UniqueFd(sv[0]), UniqueFd(sv[1])));
  return relay;
}

std::unique_ptr<BridgeRelay> BridgeRelay::Adopt(BridgeHandler& handler, UniqueFd host_end) {
  return std::unique_ptr<BridgeRelay>(new BridgeRelay(handler, std::move(host_end), UniqueFd()));
}

BridgeRelay::BridgeRelay(BridgeHandler& handler, UniqueFd host_end, UniqueFd jail_end)
    : handler_(handler),
      host_end_(std::move(host_end)),
      jail_end_(std::move(jail_end)),
      outbox_(std::make_shared<Outbox>()) {
  if (handler_.TakeSocket(host_end_)) {
    host_end_.Reset();  // whatever the handler left is not ours to read
    handed_over_ = true;
    return;
  }
  outbox_->fd = host_end_.get();
  reader_ = std::thread([this] { ReadLoop(); });
  writer_ = std::thread([outbox = outbox_, fd = host_end_.get()] {
    std::string chunk;
    while (outbox->Pop(&chunk)) {
      // A failed write means the program is gone; Finish() closes the box.
      if (!WriteEncoded(fd, chunk).ok()) {
        outbox->Close();  // later replies are dropped, not queued for nobody
        break;
      }
      outbox->Written();
    }
  });
}

BridgeRelay::~BridgeRelay() { Finish(); }

void BridgeRelay::ReadLoop() {
  std::weak_ptr<Outbox> weak = outbox_;
  BridgeHandler::ReplyFn reply = [weak](std::string frame) {
    if (auto box = weak.lock()) box->Push(std::move(frame));
  };
  for (;;) {
    StatusOr<std::string> frame = ReadFrame(host_end_.get(), kBridgeMaxFrameBytes);
    if (frame.ok()) {
      handler_.OnFrame(std::move(frame).value(), reply);
      continue;
    }
    if (frame.status().code() != StatusCode::kUnavailable) {
      // Oversized or unreadable: the stream position is lost, so the bridge
      // is over for this run; the program sees EOF on its next read.
      handler_.OnBridgeError("the program broke the bridge protocol: " + frame.status().message());
      shutdown(host_end_.get(), SHUT_RDWR);
    }
    return;
  }
}

void BridgeRelay::Finish() {
  if (finished_) return;
  finished_ = true;
  // The program has exited (or been killed): end its direction so the reader
  // drains what is buffered and then sees EOF, even if a copy of the jail end
  // is still open somewhere.
  // An adopted bridge has no jail end here: stop reading on ours instead
  // (what is buffered is still read first, then EOF).
  if (jail_end_) {
    shutdown(jail_end_.get(), SHUT_WR);
  } else if (host_end_) {
    shutdown(host_end_.get(), SHUT_RD);
  }
  if (handed_over_) return;  // no threads here
  if (reader_.joinable()) reader_.join();
  shutdown(host_end_.get(), SHUT_RDWR);  // unblocks a writer stuck on a full buffer
  outbox_->Close();
  if (writer_.joinable()) writer_.join();
}

}  // namespace airlock::runtimes
